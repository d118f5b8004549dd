// The vendors' side of vendor webhooks, for specs and the bench: fal's published keys served by a fake
// (a real HTTP server on port 0, with an ED25519 key pair made here) and fal's and Replicate's signed
// calls, as docs/providers/fal.md and docs/providers/replicate.md "Vendor webhooks" describe them.
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { type FakeUpstream, sendJson, startFakeUpstream } from './fake-upstream.js';

export interface FakeFalKeys extends FakeUpstream {
  /** The JSON Web Key Set's URL (`vendorWebhooks.falJwksUrl`). */
  jwksUrl: string;
  /** The headers fal sends with `body`, signed with the published key (or `forged`: another key). */
  headersFor(body: string, requestId: string, how?: { forged?: boolean; timestamp?: number }): Record<string, string>;
}

export async function startFakeFalKeys(): Promise<FakeFalKeys> {
  const published = generateKeyPairSync('ed25519');
  const other = generateKeyPairSync('ed25519');
  const jwk = published.publicKey.export({ format: 'jwk' });
  const fake = await startFakeUpstream((_request, res) => sendJson(res, 200, { keys: [{ ...jwk, kid: 'fake-fal-key', use: 'sig', alg: 'EdDSA' }] }));
  return Object.assign(fake, {
    jwksUrl: `${fake.origin}/.well-known/jwks.json`,
    headersFor(body: string, requestId: string, how: { forged?: boolean; timestamp?: number } = {}) {
      const timestamp = String(how.timestamp ?? Math.floor(Date.now() / 1000));
      const userId = 'fal-user-1';
      const message = [requestId, userId, timestamp, createHash('sha256').update(body).digest('hex')].join('\n');
      const signature = sign(null, Buffer.from(message), how.forged ? other.privateKey : published.privateKey).toString('hex');
      return {
        'content-type': 'application/json',
        'x-fal-webhook-request-id': requestId,
        'x-fal-webhook-user-id': userId,
        'x-fal-webhook-timestamp': timestamp,
        'x-fal-webhook-signature': signature,
      };
    },
  });
}

/** fal's webhook body of a request that completed. */
export function falWebhookBody(requestId: string): string {
  return JSON.stringify({ request_id: requestId, gateway_request_id: requestId, status: 'OK', payload: {} });
}

/** Replicate's Standard Webhooks headers for `body`, signed with `secret` (`whsec_...`). */
export function replicateHeadersFor(secret: string, body: string): Record<string, string> {
  const id = `msg_${randomUUID()}`;
  const now = new Date();
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, now, body),
  };
}

/** The path (under the router) of a vendor webhook URL the gateway gave a vendor. */
export function webhookPathOf(url: string): string {
  return new URL(url).pathname;
}
