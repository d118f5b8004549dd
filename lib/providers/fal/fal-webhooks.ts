// fal's webhooks (docs/providers/fal.md "Vendor webhooks"; docs.fal.ai "Webhooks", "Verifying your
// webhook"): each call is signed with ED25519. The message is `request_id`, `user_id`, the timestamp
// and the hex SHA-256 of the raw body, joined by newlines, from the headers X-Fal-Webhook-Request-Id,
// X-Fal-Webhook-User-Id and X-Fal-Webhook-Timestamp; X-Fal-Webhook-Signature is the signature in hex,
// made by one of the keys fal publishes as a JSON Web Key Set (kept a day). A timestamp more than five
// minutes from now is refused, as fal's own example does.
import { type KeyObject, createHash, createPublicKey, verify } from 'node:crypto';
import { isObject, parseJsonBody, stringOr } from '../../json/json-values.js';
import type { CallContext } from '../call-context.js';
import type { VendorWebhookCall, VendorWebhookCapability } from '../provider.js';

const JWKS_TTL_MS = 24 * 3600_000;
const LEEWAY_SECONDS = 300;

/** The ED25519 public keys of a JSON Web Key Set (`{ keys: [{ kty: 'OKP', crv: 'Ed25519', x }] }`); others are skipped. */
export function ed25519KeysOf(jwks: unknown): KeyObject[] {
  const keys = isObject(jwks) && Array.isArray(jwks.keys) ? jwks.keys : [];
  return keys.flatMap((key: unknown) => {
    const x = isObject(key) && key.kty === 'OKP' && key.crv === 'Ed25519' ? stringOr(key.x) : undefined;
    if (!x) return [];
    try {
      return [createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' })];
    } catch {
      return [];
    }
  });
}

/** fal's check of one call against `keys`: true only for a fresh timestamp and a signature one of them made. */
export function verifyFalWebhook(delivered: VendorWebhookCall, keys: readonly KeyObject[]): boolean {
  const { headers } = delivered;
  const requestId = headers['x-fal-webhook-request-id'];
  const userId = headers['x-fal-webhook-user-id'];
  const timestamp = headers['x-fal-webhook-timestamp'];
  const signature = headers['x-fal-webhook-signature'];
  if (!requestId || !userId || !timestamp || !signature || !/^\d{1,12}$/.test(timestamp) || !/^(?:[0-9a-f]{2})+$/i.test(signature)) return false;
  if (Math.abs(delivered.nowSeconds - Number(timestamp)) > LEEWAY_SECONDS) return false;
  const message = Buffer.from([requestId, userId, timestamp, createHash('sha256').update(delivered.body).digest('hex')].join('\n'), 'utf8');
  const bytes = Buffer.from(signature, 'hex');
  return keys.some((key) => {
    try {
      return verify(null, message, key, bytes);
    } catch {
      return false;
    }
  });
}

/** fal's published keys, read without credentials (they are public). */
async function readJwks(call: CallContext, url: string): Promise<KeyObject[]> {
  const response = await call.http.request({ provider: 'fal', method: 'GET', url, headers: { accept: 'application/json' }, timeoutMs: 10_000, signal: call.signal, maxBytes: 256 * 1024 });
  if (response.status < 200 || response.status >= 300) throw new Error(`fal's webhook keys answered HTTP ${response.status}`);
  const keys = ed25519KeysOf(parseJsonBody(response.body));
  if (keys.length === 0) throw new Error("fal's webhook keys hold no ED25519 key");
  return keys;
}

export const falWebhooks: VendorWebhookCapability = {
  async verify(call, _upstream, delivered, keys) {
    const published = await keys.remember(`fal:${keys.falJwksUrl}`, JWKS_TTL_MS, () => readJwks(call, keys.falJwksUrl));
    return verifyFalWebhook(delivered, published);
  },
};
