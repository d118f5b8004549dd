// Replicate's webhooks (docs/providers/replicate.md "Vendor webhooks"; replicate.com/docs/topics/webhooks/
// verify-webhook): each call is signed by Standard Webhooks (`webhook-id`, `webhook-timestamp`,
// `webhook-signature`, HMAC-SHA256 of `id.timestamp.body`) with the account's signing secret, which
// the gateway reads with the upstream's own key from `GET /v1/webhooks/default/secret` (`{ key:
// "whsec_..." }`) and keeps an hour per upstream key. The secret is never logged nor answered.
import { createHash } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { isObject, parseJsonBody, stringOr } from '../../json/json-values.js';
import type { Upstream } from '../../types.js';
import { type CallContext, jsonHeaders, timeoutOf, upstreamUrl } from '../call-context.js';
import type { VendorWebhookCapability } from '../provider.js';
import { normalizeReplicateError } from './replicate-predictions.js';

const SECRET_TTL_MS = 3600_000;

/** The account's signing secret (`whsec_...`), read with the upstream's key. */
async function readSigningSecret(call: CallContext, upstream: Upstream): Promise<string> {
  const response = await call.http.request({
    provider: 'replicate',
    method: 'GET',
    url: upstreamUrl(upstream.baseURL, '/v1', '/webhooks/default/secret'),
    headers: jsonHeaders(upstream),
    timeoutMs: Math.min(10_000, timeoutOf(upstream, call.limits)),
    signal: call.signal,
    maxBytes: 64 * 1024,
  });
  const body = parseJsonBody(response.body);
  if (response.status < 200 || response.status >= 300) throw normalizeReplicateError(response.status, body, response.headers).withoutSecrets([upstream.apiKey]);
  const key = isObject(body) ? stringOr(body.key) : undefined;
  if (!key) throw new Error('replicate answered no webhook signing secret');
  return key;
}

/** The Standard Webhooks check of one call: true only when a signature matches and its timestamp is within five minutes. */
export function verifyStandardWebhook(secret: string, headers: Readonly<Record<string, string | undefined>>, body: Buffer): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signature = headers['webhook-signature'];
  if (!id || !timestamp || !signature) return false;
  try {
    // the library compares in constant time and refuses a timestamp more than five minutes away
    new Webhook(secret).verify(body.toString('utf8'), { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature });
    return true;
  } catch {
    return false;
  }
}

export const replicateWebhooks: VendorWebhookCapability = {
  async verify(call, upstream, delivered, keys) {
    // kept per upstream key (hashed: the key itself is never a map key that could be dumped)
    const cacheKey = `replicate:${createHash('sha256')
      .update(`${upstream.baseURL}\n${upstream.apiKey ?? ''}`)
      .digest('base64url')}`;
    const secret = await keys.remember(cacheKey, SECRET_TTL_MS, () => readSigningSecret(call, upstream));
    return verifyStandardWebhook(secret, delivered.headers, delivered.body);
  },
};
