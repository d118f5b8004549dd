// Attacks on tenant controls (docs/tenancy-and-billing.md): quota charges that are never given back or given
// back into a budget they were not taken from, and what a keyed request leaves behind when its work fails.
import { createHash } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { type IdempotencyRecord, type IdempotencyStore, type QuotaLimits, type TaskStore, type UsageEvent, memoryTaskStore, staticKeys } from '../../lib/index.js';
import { createAuthenticate } from '../../lib/express/authenticate.js';
import { limitCallerInFlight } from '../../lib/express/caller-in-flight.js';
import { createErrorMiddleware } from '../../lib/express/error-middleware.js';
import { createIdempotency } from '../../lib/express/idempotency/idempotency.js';
import { beginRequest, contextOf } from '../../lib/express/request-context.js';
import { sendJson } from '../../lib/express/answers/send-body.js';
import { resolveOptions } from '../../lib/gateway/resolve-options.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A, type TestGateway, listen } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';

const TASKS = '/api/v3/contents/generations/tasks';
const video = (extra: Record<string, unknown> = {}) => ({ model: 'seedance', content: [{ type: 'text', text: 'a cat' }], duration: 5, ...extra });
const create = (gw: TestGateway, body: object = video()) => request(gw.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).send(body);
const query = (gw: TestGateway, id: string) => request(gw.app).get(`${TASKS}/${id}`).set('Authorization', `Bearer ${KEY_A}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A keyed image request whose client leaves 200 ms after sending it, without reading an answer. */
async function sendKeyedThenLeave(url: string, key: string): Promise<void> {
  const controller = new AbortController();
  const lost = fetch(`${url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ model: 'm', prompt: 'p' }),
    signal: controller.signal,
  }).catch(() => undefined);
  await sleep(200);
  controller.abort();
  await lost;
}

describe('video quotas', () => {
  it('a create whose task cannot be recorded gives back its concurrent-task slot and its video-seconds', async () => {
    const inner = memoryTaskStore();
    let failures = 1;
    const store: TaskStore = {
      ...inner,
      createTask: async (record) => {
        if (failures > 0) {
          failures -= 1;
          throw new Error('store down');
        }
        return inner.createTask(record);
      },
    };
    const gw = await gatewayWith({
      fakes: { ark: startFakeArk },
      store,
      resolve: (_input, { ark }) => ({ provider: 'ark', baseURL: ark.baseURL, apiKey: 'k' }),
      tenancy: { quotas: { limits: { concurrentVideoTasks: 1, videoSecondsPerDay: 5 } } },
    });
    expect((await create(gw)).status).toBeGreaterThanOrEqual(500);
    const state = await gw.router.quota({ id: 'tenant-a' });
    for (const item of state) expect(item.remaining, item.name).toBe(item.limit);
    expect((await create(gw)).status).toBe(200);
  });

  it('a task that ends after its quota window has reset gives nothing back into the new window (never a bonus slot)', async () => {
    // the concurrent-task counter's window is callbacks.maxFollowMs: 1 s here
    const gw = await gatewayWith({
      fakes: { ark: startFakeArk },
      resolve: (_input, { ark }) => ({ provider: 'ark', baseURL: ark.baseURL, apiKey: 'k' }),
      callbacks: { maxFollowMs: 1_000 },
      tenancy: { quotas: { limits: { concurrentVideoTasks: 1 } } },
    });
    const first = await create(gw);
    expect(first.status).toBe(200);
    await sleep(1_500);
    // queued, running, succeeded: the slot is released after its window ended
    for (let i = 0; i < 3; i += 1) await query(gw, first.body.id as string);
    expect((await query(gw, first.body.id as string)).body.status).toBe('succeeded');
    expect((await create(gw)).status).toBe(200);
    // one task runs and the limit is one: the next create is refused
    const third = await create(gw);
    expect(third.status).toBe(429);
    const state = await gw.router.quota({ id: 'tenant-a' });
    expect(state.find((item) => item.name === 'video-tasks')?.remaining).toBe(0);
  });
});

describe('a keyed request that runs longer than the running key is held', () => {
  // An Upstream's own timeoutMs may exceed limits.upstreamTimeoutMs, which the running key's hold is
  // computed from: the key must stay taken while the work runs, or a retry generates (and bills) twice.
  it('keeps its key while the work runs: a retry meanwhile gets 409, then the kept answer', async () => {
    const options = resolveOptions({ verifyKey: staticKeys({ [KEY_A]: { id: 'tenant-a' } }), resolveUpstream: () => null });
    const resolved = { ...options, idempotency: { ...options.idempotency!, runningTtlMs: 600 } };
    let calls = 0;
    const app = express();
    app.post(
      '/v1/images/generations',
      beginRequest('images.generations', resolved),
      createAuthenticate(resolved),
      express.json(),
      createIdempotency('images.generations', resolved),
      ((_req, res) => {
        calls += 1;
        // longer than the key's running hold of 600 ms
        setTimeout(() => sendJson(contextOf(res), 200, { data: [{ url: `https://cdn.example/${calls}.png` }] }), 2_000);
      }) as express.RequestHandler,
      createErrorMiddleware(resolved),
    );
    const send = () => request(app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'slow-1').send({ model: 'm', prompt: 'p' });
    const first = send().then((res) => res);
    await sleep(1_200);
    const during = await send();
    expect(during.status).toBe(409);
    expect((await first).status).toBe(200);
    const after = await send();
    expect(after.headers['idempotent-replayed']).toBe('true');
    expect(calls).toBe(1);
  });
});

describe('a keyed request whose client left and whose work outlives the running hold', () => {
  it('is billed once, when its answer comes: its usage event has the kept status, not 499', async () => {
    const events: UsageEvent[] = [];
    const options = resolveOptions({ verifyKey: staticKeys({ [KEY_A]: { id: 'tenant-a' } }), resolveUpstream: () => null, onUsage: (event) => void events.push(event) });
    const resolved = { ...options, idempotency: { ...options.idempotency!, runningTtlMs: 600 } };
    const app = express();
    app.post(
      '/v1/images/generations',
      beginRequest('images.generations', resolved),
      createAuthenticate(resolved),
      express.json(),
      createIdempotency('images.generations', resolved),
      ((_req, res) => {
        const context = contextOf(res);
        setTimeout(() => {
          context.usage.images = 1;
          sendJson(context, 200, { data: [{ url: 'https://cdn.example/late.png' }] });
        }, 2_000);
      }) as express.RequestHandler,
      createErrorMiddleware(resolved),
    );
    const server = await listen(app);
    try {
      await sendKeyedThenLeave(server.url, 'late-1');
      const replay = () => request(app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'late-1').send({ model: 'm', prompt: 'p' });
      await expect.poll(async () => (await replay()).headers['idempotent-replayed'], { timeout: 8_000, interval: 300 }).toBe('true');
      // the retries' own 409 answers aside: the one event of the work is its kept answer
      expect(events.filter((event) => event.status !== 409).map((event) => [event.status, event.images])).toEqual([[200, 1]]);
    } finally {
      await server.close();
    }
  });
});

describe('a keyed request whose work hangs after its client left', () => {
  it('gives its in-flight slot back after the running hold, and its key stays taken', async () => {
    const options = resolveOptions({ verifyKey: staticKeys({ [KEY_A]: { id: 'tenant-a' } }), resolveUpstream: () => null });
    const resolved = { ...options, idempotency: { ...options.idempotency!, runningTtlMs: 600 } };
    const app = express();
    app.post(
      '/v1/images/generations',
      beginRequest('images.generations', resolved),
      createAuthenticate(resolved),
      limitCallerInFlight(1),
      express.json(),
      createIdempotency('images.generations', resolved),
      ((req, res) => {
        // the keyed request's work never ends; any other answers at once
        if (req.headers['idempotency-key'] === undefined) sendJson(contextOf(res), 200, { data: [] });
      }) as express.RequestHandler,
      createErrorMiddleware(resolved),
    );
    const server = await listen(app);
    try {
      await sendKeyedThenLeave(server.url, 'hang-1');
      const other = () => request(app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'm', prompt: 'p' });
      await expect.poll(async () => (await other()).status, { timeout: 5_000, interval: 200 }).toBe(200);
      const retry = await request(app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'hang-1').send({ model: 'm', prompt: 'p' });
      expect(retry.status).toBe(409);
    } finally {
      await server.close();
    }
  });
});

describe('a host idempotency store that answers nonsense', () => {
  it('a malformed record is a 5xx for that request, never an unhandled rejection', async () => {
    const body = { model: 'gpt-image-1', prompt: 'a cat' };
    const fingerprint = createHash('sha256').update(JSON.stringify(body)).digest('base64url');
    const broken: IdempotencyStore = {
      // a "done" record without its answer (a store that lost part of what it was given)
      begin: async () => ({ state: 'done', fingerprint }) as unknown as IdempotencyRecord,
      finish: async () => {},
      release: async () => {},
    };
    const gw = await gatewayWith({ idempotency: { store: broken } });
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'k').send(body);
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(res.body.error.code).toBeDefined();
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('a host idempotency store that throws instead of rejecting', () => {
  it('the answer still reaches the caller; the failed write is logged', async () => {
    const errors: string[] = [];
    const throwing: IdempotencyStore = {
      begin: async () => undefined,
      finish: () => {
        throw new Error('store write refused');
      },
      release: () => {
        throw new Error('store write refused');
      },
    };
    const gw = await gatewayWith({
      fakes: { openai: startFakeOpenAI },
      resolve: (_input, { openai }) => ({ provider: 'openai', baseURL: openai.baseURL, apiKey: 'k' }),
      idempotency: { store: throwing },
      logger: { info: () => {}, warn: () => {}, error: (_fields, message) => void errors.push(message) },
    });
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'k').send({ model: 'gpt-image-1', prompt: 'a cat' });
    expect(res.status).toBe(200);
    expect(gw.fakes.openai.requests).toHaveLength(1);
    await expect.poll(() => errors).toContain('idempotency store write failed');
  });
});

describe('a quotas.limits function that answers nonsense', () => {
  it('a misspelt or non-numeric limit is a logged 500, never a quota silently not enforced', async () => {
    const errors: string[] = [];
    const gw = await gatewayWith({
      fakes: { openai: startFakeOpenAI },
      resolve: (_input, { openai }) => ({ provider: 'openai', baseURL: openai.baseURL, apiKey: 'k' }),
      // a plan row from the host's database with a typo
      tenancy: { quotas: { limits: () => ({ imagesPerMinut: 1 }) as QuotaLimits } },
      logger: { info: () => {}, warn: () => {}, error: (fields, message) => void errors.push(`${message} ${JSON.stringify(fields)}`) },
    });
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'gpt-image-1', prompt: 'a cat' });
    expect(res.status).toBe(500);
    expect(gw.fakes.openai.requests).toHaveLength(0);
    expect(errors.some((line) => line.includes('imagesPerMinut'))).toBe(true);
  });
});

describe('a concurrent-task window longer than a timer can wait', () => {
  it('callbacks.maxFollowMs of 30 days still enforces concurrentVideoTasks (in memory)', async () => {
    const gw = await gatewayWith({
      fakes: { ark: startFakeArk },
      resolve: (_input, { ark }) => ({ provider: 'ark', baseURL: ark.baseURL, apiKey: 'k' }),
      callbacks: { maxFollowMs: 30 * 86_400_000 },
      tenancy: { quotas: { limits: { concurrentVideoTasks: 1 } } },
    });
    expect((await create(gw)).status).toBe(200);
    await sleep(50);
    expect((await create(gw)).status).toBe(429);
  });
});

describe('a streamed Ark image group', () => {
  it('is billed and counted by the images its stream returned, not 0 and not max_images', async () => {
    const events = [
      { type: 'image_generation.partial_succeeded', model: 'seedream', created: 1, image_index: 0, url: 'https://ark.example/0.png', size: '1024x1024' },
      { type: 'image_generation.partial_failed', model: 'seedream', created: 1, image_index: 1, error: { code: 'OutputImageSensitiveContentDetected', message: 'no' } },
      { type: 'image_generation.partial_succeeded', model: 'seedream', created: 1, image_index: 2, url: 'https://ark.example/2.png', size: '1024x1024' },
      { type: 'image_generation.completed', model: 'seedream', created: 1, usage: { generated_images: 2, output_tokens: 10, total_tokens: 10 } },
    ];
    const gw = await gatewayWith({
      fakes: {
        ark: () =>
          startFakeUpstream(async (_req, res) => {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            // split mid-event, as a network would
            const text = events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('');
            for (let at = 0; at < text.length; at += 37) {
              res.write(text.slice(at, at + 37));
              await sleep(1);
            }
            res.end();
          }),
      },
      resolve: (_input, { ark }) => ({ provider: 'ark', baseURL: `${ark.origin}/api/v3`, apiKey: 'k' }),
      tenancy: { quotas: { limits: { imagesPerMinute: 10 } } },
    });
    const res = await request(gw.app)
      .post('/api/v3/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'seedream', prompt: 'a cat', stream: true, sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 4 } });
    expect(res.status).toBe(200);
    await expect.poll(() => gw.usage.length).toBe(1);
    expect(gw.usage[0]!.images).toBe(2);
    const images = (await gw.router.quota({ id: 'tenant-a' })).find((item) => item.name === 'images');
    expect(images?.remaining).toBe(8);
  });
});
