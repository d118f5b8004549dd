// A failure that comes after the client left (docs/architecture.md "Performance": a done request
// lets go of its context only once its work has ended): the usage event still books what the
// vendor may have made, and an Idempotency-Key whose client left while the store was slow is freed
// for the retry.
import { describe, expect, it } from 'vitest';
import { type IdempotencyStore, type Upstream, memoryIdempotencyStore } from '../../lib/index.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { rawRequest } from '../helpers/raw-client.js';

const JSON_POST = { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' };
const body = JSON.stringify({ model: 'gpt-image-1', prompt: 'a lighthouse', n: 1 });

describe('failures after the client left', () => {
  it('books the image the vendor may have made when the client leaves while the upstream works', async () => {
    const gw = await gatewayWith({
      idempotency: false,
      fakes: { openai: startFakeOpenAI },
      resolve: (_input, { openai }): Upstream => ({ provider: 'openai', baseURL: openai.baseURL, apiKey: 'sk-up', model: 'gpt-image-1' }),
    });
    let arrived!: () => void;
    const started = new Promise<void>((resolve) => (arrived = resolve));
    gw.fakes.openai.next(() => {
      arrived();
      return new Promise(() => {});
    });
    const client = new AbortController();
    rawRequest(gw.url, { path: '/v1/images/generations', headers: JSON_POST, body, signal: client.signal }).catch(() => undefined);
    await started;
    client.abort();
    await expect.poll(() => gw.usage.length).toBe(1);
    // one generation started upstream: the tenant lost it by leaving, the vendor may bill it
    expect(gw.fakes.openai.apiRequests()).toHaveLength(1);
    expect(gw.usage[0]).toMatchObject({ lostBy: 'client_left', undeliveredImages: 1, vendorWork: { images: 1, attempts: [{ provider: 'openai', images: 1, outcome: 'unknown' }] } });
  });

  it('frees an Idempotency-Key whose client left while the store was slow to begin it', async () => {
    const inner = memoryIdempotencyStore();
    let begun!: () => void;
    const beginning = new Promise<void>((resolve) => (begun = resolve));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let slow = true;
    const store: IdempotencyStore = {
      begin: async (...args) => {
        if (slow) {
          begun();
          await gate;
        }
        return inner.begin(...args);
      },
      finish: (...args) => inner.finish(...args),
      release: (...args) => inner.release(...args),
    };
    const gw = await gatewayWith({
      idempotency: { store },
      fakes: { openai: startFakeOpenAI },
      resolve: (_input, { openai }): Upstream => ({ provider: 'openai', baseURL: openai.baseURL, apiKey: 'sk-up', model: 'gpt-image-1' }),
    });
    const headers = { ...JSON_POST, 'idempotency-key': 'key-late-1' };
    const client = new AbortController();
    rawRequest(gw.url, { path: '/v1/images/generations', headers, body, signal: client.signal }).catch(() => undefined);
    await beginning;
    client.abort();
    // the gateway saw the client leave (its usage event) while the store was still beginning the key
    await expect.poll(() => gw.usage.length).toBe(1);
    slow = false;
    open();
    // the key is freed once the store answers (nothing was sent upstream for the request that left);
    // a key left 'running' would answer 409 idempotency_key_in_use for its whole lifetime
    await expect.poll(async () => (await rawRequest(gw.url, { path: '/v1/images/generations', headers, body })).status, { timeout: 5_000 }).toBe(200);
    expect(gw.fakes.openai.apiRequests()).toHaveLength(1);
  });
});
