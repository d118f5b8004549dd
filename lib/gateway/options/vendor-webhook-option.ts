// The `vendorWebhooks` option resolved (docs/configuration.md "vendorWebhooks"): checked once, with a
// fix, when the router is created; undefined when it is not given (polling only).
import { GatewayConfigError } from '../../errors/config-error.js';
import type { VendorWebhookOptions } from '../../options/vendor-webhook-options.js';

export interface ResolvedVendorWebhooks {
  /** `publicBaseUrl` without its trailing slashes. */
  readonly publicBaseUrl: string;
  readonly secret: string;
  readonly falJwksUrl: string;
}

const FAL_JWKS_URL = 'https://rest.alpha.fal.ai/.well-known/jwks.json';
const MIN_SECRET_BYTES = 32;
const KEYS: ReadonlySet<string> = new Set(['publicBaseUrl', 'secret', 'falJwksUrl']);
const EXAMPLE = "vendorWebhooks: { publicBaseUrl: 'https://gw.example.com/ai', secret: process.env.VENDOR_WEBHOOK_SECRET! } (a secret of at least 32 bytes)";

export function resolveVendorWebhooks(given: VendorWebhookOptions | undefined): ResolvedVendorWebhooks | undefined {
  if (given === undefined) return undefined;
  if (given === null || typeof given !== 'object' || Array.isArray(given)) throw new GatewayConfigError('vendor_webhooks_type', 'options.vendorWebhooks must be an object.', EXAMPLE);
  for (const key of Object.keys(given)) {
    if (!KEYS.has(key)) throw new GatewayConfigError('vendor_webhooks_unknown', `Unknown vendorWebhooks option '${key}'.`, `use only: ${[...KEYS].join(', ')}.`);
  }
  const publicBaseUrl = checkedUrl(given.publicBaseUrl, 'publicBaseUrl');
  if (typeof given.secret !== 'string' || Buffer.byteLength(given.secret, 'utf8') < MIN_SECRET_BYTES) {
    // the secret itself is never put in the message
    throw new GatewayConfigError(
      'vendor_webhooks_secret',
      `vendorWebhooks.secret must be a string of at least ${MIN_SECRET_BYTES} bytes.`,
      "secret: crypto.randomBytes(32).toString('base64url'), kept with your other secrets",
    );
  }
  const falJwksUrl = given.falJwksUrl === undefined ? FAL_JWKS_URL : checkedUrl(given.falJwksUrl, 'falJwksUrl');
  return Object.freeze({ publicBaseUrl: publicBaseUrl.replace(/\/+$/, ''), secret: given.secret, falJwksUrl });
}

function checkedUrl(value: unknown, name: string): string {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new GatewayConfigError('vendor_webhooks_url', `vendorWebhooks.${name} must be an http or https URL with no query, fragment or credentials.`, EXAMPLE);
  }
  return url.href.replace(/\/+$/, '');
}
