// The pure parts of vendor webhooks (docs/video-tasks-and-callbacks.md "Vendor webhooks"): the option's
// checks at createGatewayRouter, the per-task token, the fallback polls' cadence, and the vendors'
// signature checks (fal's ED25519 over its published keys, Replicate's Standard Webhooks).
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createGatewayRouter, staticKeys } from '../../lib/index.js';
import { ed25519KeysOf, verifyFalWebhook } from '../../lib/providers/fal/fal-webhooks.js';
import { verifyStandardWebhook } from '../../lib/providers/replicate/replicate-webhooks.js';
import { submitUrl } from '../../lib/providers/fal/fal-queue.js';
import { translateCreateTaskRequest } from '../../lib/providers/ark/ark.js';
import { FALLBACK_POLL_FACTOR, fallbackPollDelay, isVendorWebhookToken, vendorWebhookToken, vendorWebhookUrl } from '../../lib/gateway/vendor-webhooks/vendor-webhook-urls.js';
import { replicateHeadersFor } from '../helpers/vendor-webhook-signers.js';

const SECRET = 'vendor-webhook-secret-0123456789-abcdefgh';
const base = { verifyKey: staticKeys({}), resolveUpstream: () => null, logger: false as const };

describe('the vendorWebhooks option', () => {
  it.each([
    ['a relative URL', { publicBaseUrl: '/ai', secret: SECRET }, 'vendorWebhooks.publicBaseUrl must be an http or https URL'],
    ['another scheme', { publicBaseUrl: 'ftp://gw.example.com', secret: SECRET }, 'vendorWebhooks.publicBaseUrl must be an http or https URL'],
    ['a query', { publicBaseUrl: 'https://gw.example.com/ai?x=1', secret: SECRET }, 'no query, fragment or credentials'],
    ['a short secret', { publicBaseUrl: 'https://gw.example.com', secret: 'short' }, 'vendorWebhooks.secret must be a string of at least 32 bytes'],
    ['an unknown key', { publicBaseUrl: 'https://gw.example.com', secret: SECRET, token: 'x' }, "Unknown vendorWebhooks option 'token'"],
  ])('refuses %s at createGatewayRouter, with the fix', (_name, vendorWebhooks, message) => {
    expect(() => createGatewayRouter({ ...base, vendorWebhooks: vendorWebhooks })).toThrow(message);
  });

  it('never shows the secret in its error', () => {
    expect(() => createGatewayRouter({ ...base, vendorWebhooks: { publicBaseUrl: 'nope', secret: SECRET } })).toThrow(/Fix:/);
    try {
      createGatewayRouter({ ...base, vendorWebhooks: { publicBaseUrl: 'nope', secret: SECRET } });
    } catch (error) {
      expect(String(error)).not.toContain(SECRET);
    }
  });

  it('accepts an https or http base with a mount path', async () => {
    for (const publicBaseUrl of ['https://gw.example.com/ai/', 'http://localhost:3000']) {
      const router = createGatewayRouter({ ...base, vendorWebhooks: { publicBaseUrl, secret: SECRET } });
      await router.close();
    }
  });
});

describe('the per-task token and URL', () => {
  it('is the base64url HMAC of the task and provider, told apart in constant time', () => {
    const token = vendorWebhookToken(SECRET, 'task_abc', 'fal');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(isVendorWebhookToken(SECRET, 'task_abc', 'fal', token)).toBe(true);
    expect(isVendorWebhookToken(SECRET, 'task_abc', 'replicate', token)).toBe(false);
    expect(isVendorWebhookToken(SECRET, 'task_abd', 'fal', token)).toBe(false);
    expect(isVendorWebhookToken(`${SECRET}x`, 'task_abc', 'fal', token)).toBe(false);
    expect(isVendorWebhookToken(SECRET, 'task_abc', 'fal', token.slice(1))).toBe(false);
  });

  it('names the route under the public base, only for vendors that call back', () => {
    const webhooks = { publicBaseUrl: 'https://gw.example.com/ai', secret: SECRET, falJwksUrl: 'https://keys.example.com' };
    expect(vendorWebhookUrl(webhooks, 'replicate', 'imgtask_1')).toBe(`https://gw.example.com/ai/v1/vendor-webhooks/replicate/imgtask_1/${vendorWebhookToken(SECRET, 'imgtask_1', 'replicate')}`);
    expect(vendorWebhookUrl(webhooks, 'ark', 'task_1')).toContain('/v1/vendor-webhooks/ark/task_1/');
    expect(vendorWebhookUrl(webhooks, 'dashscope', 'imgtask_1')).toBeUndefined();
    expect(vendorWebhookUrl(undefined, 'fal', 'task_1')).toBeUndefined();
  });

  it('slows the polls of a task whose vendor calls back, and only those', () => {
    expect(fallbackPollDelay({ upstream: { callsBack: true } }, 5_000)).toBe(5_000 * FALLBACK_POLL_FACTOR);
    expect(fallbackPollDelay({ upstream: {} }, 5_000)).toBe(5_000);
  });

  it('goes where each vendor documents it: fal’s query parameter, Ark’s callback_url (never the caller’s)', () => {
    expect(submitUrl('https://queue.fal.run/fal-ai/flux/dev', 'https://gw.example.com/v1/vendor-webhooks/fal/t/k')).toBe(
      'https://queue.fal.run/fal-ai/flux/dev?fal_webhook=https%3A%2F%2Fgw.example.com%2Fv1%2Fvendor-webhooks%2Ffal%2Ft%2Fk',
    );
    expect(submitUrl('https://queue.fal.run/fal-ai/flux/dev', undefined)).toBe('https://queue.fal.run/fal-ai/flux/dev');
    expect(translateCreateTaskRequest({ model: 'm', callback_url: 'https://tenant.example.com/hook' }, 'up', undefined, 'https://gw.example.com/v1/vendor-webhooks/ark/t/k')).toEqual({
      model: 'up',
      callback_url: 'https://gw.example.com/v1/vendor-webhooks/ark/t/k',
    });
    expect(translateCreateTaskRequest({ model: 'm', callback_url: 'https://tenant.example.com/hook' }, 'up')).toEqual({ model: 'up' });
  });
});

describe('fal’s signature', () => {
  const pair = generateKeyPairSync('ed25519');
  const keys = ed25519KeysOf({ keys: [{ kty: 'RSA', n: 'x', e: 'AQAB' }, pair.publicKey.export({ format: 'jwk' })] });
  const now = 1_780_000_000;
  const body = Buffer.from('{"request_id":"r1","status":"OK"}');
  const signed = (message: string): string => {
    return sign(null, Buffer.from(message.replace('{hash}', createHash('sha256').update(body).digest('hex'))), pair.privateKey).toString('hex');
  };
  const headers = (signature: string, timestamp = now): Record<string, string> => ({
    'x-fal-webhook-request-id': 'r1',
    'x-fal-webhook-user-id': 'u1',
    'x-fal-webhook-timestamp': String(timestamp),
    'x-fal-webhook-signature': signature,
  });

  it('reads only the ED25519 keys of the set', () => {
    expect(keys).toHaveLength(1);
  });

  it('holds for request id, user id, timestamp and the body’s hex SHA-256, joined by newlines', () => {
    expect(verifyFalWebhook({ headers: headers(signed(`r1\nu1\n${now}\n{hash}`)), body, nowSeconds: now }, keys)).toBe(true);
  });

  it.each([
    ['another message', () => headers(signed(`r2\nu1\n${now}\n{hash}`))],
    ['a stale timestamp', () => headers(signed(`r1\nu1\n${now - 600}\n{hash}`), now - 600)],
    ['no signature', () => ({ ...headers(''), 'x-fal-webhook-signature': '' })],
    ['a signature that is not hex', () => headers('zz')],
  ])('fails for %s', (_name, make) => {
    expect(verifyFalWebhook({ headers: make(), body, nowSeconds: now }, keys)).toBe(false);
  });
});

describe('Replicate’s signature', () => {
  const secret = `whsec_${Buffer.from('replicate-account-signing-key-01').toString('base64')}`;
  const body = '{"id":"p1","status":"succeeded"}';

  it('holds with the account’s secret and fails with another, or with a changed body', () => {
    const headers = replicateHeadersFor(secret, body);
    expect(verifyStandardWebhook(secret, headers, Buffer.from(body))).toBe(true);
    expect(verifyStandardWebhook(`whsec_${Buffer.from('another-account-signing-key-0123').toString('base64')}`, headers, Buffer.from(body))).toBe(false);
    expect(verifyStandardWebhook(secret, headers, Buffer.from(body.replace('succeeded', 'failed')))).toBe(false);
    expect(verifyStandardWebhook(secret, { ...headers, 'webhook-signature': undefined }, Buffer.from(body))).toBe(false);
  });
});
