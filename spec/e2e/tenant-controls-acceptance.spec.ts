// Acceptance of tenant controls (docs/tenancy-and-billing.md), black-box through HTTP:
// Idempotency-Key on the five paid creates (replay, 422, 409, expiry, two instances on one Redis),
// quotas in billing units (429 with the IETF headers, weighted charges and refunds, nothing charged
// for a refused request, one budget across instances, Redis down in both modes) and usage events
// (none for a replay, exactly one terminal event per task across instances).
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { type GatewayOptions, type Logger, type Upstream, memoryTaskStore } from '../../lib/index.js';
import { redisIdempotencyStore, redisTaskStore } from '../../lib/redis.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { type FakeUpstream, type RecordedRequest, sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B, type TestGateway, createTestGateway } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';
import { startRedisServerProcess } from '../helpers/redis-server-process.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TASKS = '/api/v3/contents/generations/tasks';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const unique = () => `acc-${randomBytes(6).toString('hex')}`;

/** An OpenAI-compatible and Ark-native image upstream answering `n` images; `hold` delays answers, `fail` refuses. */
interface ImageFake extends FakeUpstream {
  hold?: Promise<void>;
  fail: boolean;
}
async function startImageFake(): Promise<ImageFake> {
  let served = 0;
  const box: { self?: ImageFake } = {};
  const fake = await startFakeUpstream(async (req: RecordedRequest, res: ServerResponse) => {
    if (box.self?.hold) await box.self.hold;
    if (box.self?.fail) return sendJson(res, 500, { error: { message: 'boom', type: 'server_error', param: null, code: null } });
    served += 1;
    if (req.path === '/v1/images/generations' || req.path === '/v1/images/edits') {
      const n = typeof (req.json as { n?: unknown } | undefined)?.n === 'number' ? (req.json as { n: number }).n : 1;
      const data = Array.from({ length: n }, (_v, i) => ({ url: `https://cdn.example/img-${served}-${i}.png`, revised_prompt: '' }));
      return sendJson(res, 200, { created: 1713833628, data }, { 'x-request-id': `req-${served}` });
    }
    if (req.path === '/api/v3/images/generations') {
      return sendJson(res, 200, {
        model: 'seedream',
        created: 1,
        data: [{ url: `https://ark.example/${served}.png`, size: '1024x1024' }],
        usage: { generated_images: 1, output_tokens: 10, total_tokens: 10 },
      });
    }
    return sendJson(res, 404, { error: { message: 'no', type: 'invalid_request_error', param: null, code: null } });
  });
  box.self = Object.assign(fake, { hold: undefined as Promise<void> | undefined, fail: false });
  return box.self;
}

const assetsFake = () =>
  startFakeUpstream((_req, res) =>
    sendJson(res, 200, { ResponseMetadata: { RequestId: 'r', Action: 'CreateAsset', Version: '2024-01-01' }, Result: { Id: `asset-${randomBytes(4).toString('hex')}` } }),
  );

const fakes = { images: startImageFake, ark: startFakeArk, openapi: assetsFake };
type Fakes = { images: ImageFake; ark: Awaited<ReturnType<typeof startFakeArk>>; openapi: FakeUpstream };
function resolver({ route }: { route: string }, f: Fakes): Upstream | null {
  if (route === 'video.tasks') return { provider: 'ark', baseURL: f.ark.baseURL, apiKey: 'ark-key' };
  if (route === 'images.native') return { provider: 'ark', baseURL: `${f.images.origin}/api/v3`, apiKey: 'ark-key' };
  if (route === 'assets') return { provider: 'ark', baseURL: f.openapi.origin, accessKeyId: 'AK', secretAccessKey: 'c2VjcmV0', region: 'cn-beijing' };
  return { provider: 'openai', baseURL: `${f.images.origin}/v1`, apiKey: 'oa-key' };
}

const video = (extra: Record<string, unknown> = {}) => ({ model: 'seedance', content: [{ type: 'text', text: 'a cat' }], duration: 5, ...extra });
const image = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-image-1', prompt: 'a cat', ...extra });
const post = (gw: TestGateway, path: string, body: object, key?: string, caller = KEY_A) => {
  const req = request(gw.app).post(path).set('Authorization', `Bearer ${caller}`);
  if (key !== undefined) req.set('Idempotency-Key', key);
  return req.send(body);
};

describe('Idempotency-Key on every paid create', () => {
  const routes: Array<{ path: string; body: object; upstream: (f: Fakes) => number }> = [
    { path: '/v1/images/generations', body: image(), upstream: (f) => f.images.apiRequests().filter((r) => r.path === '/v1/images/generations').length },
    { path: '/api/v3/images/generations', body: { model: 'seedream', prompt: 'a cat' }, upstream: (f) => f.images.apiRequests().filter((r) => r.path === '/api/v3/images/generations').length },
    { path: TASKS, body: video(), upstream: (f) => f.ark.requests.filter((r) => r.method === 'POST').length },
    { path: '/api/v3/open/CreateAsset', body: { GroupId: 'group-1', URL: 'https://media.example.com/a.png', AssetType: 'Image' }, upstream: (f) => f.openapi.requests.length },
  ];
  for (const route of routes) {
    it(`${route.path}: a retry with the same key and body replays the answer without calling the upstream, and emits no usage event`, async () => {
      const gw = await gatewayWith({ fakes, resolve: resolver });
      const key = unique();
      const first = await post(gw, route.path, route.body, key);
      expect(first.status).toBe(200);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const events = gw.usage.length;
      const again = await post(gw, route.path, route.body, key);
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      expect(route.upstream(gw.fakes)).toBe(1);
      expect(gw.usage.length).toBe(events);
    });
  }

  it('/v1/images/edits: a multipart retry replays, even with another multipart boundary', async () => {
    const gw = await gatewayWith({ fakes, resolve: resolver });
    const key = unique();
    const send = () =>
      request(gw.app)
        .post('/v1/images/edits')
        .set('Authorization', `Bearer ${KEY_A}`)
        .set('Idempotency-Key', key)
        .field('model', 'gpt-image-1')
        .field('prompt', 'add a hat')
        .attach('image', TINY_PNG, 'a.png');
    const first = await send();
    expect(first.status).toBe(200);
    const again = await send();
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(gw.fakes.images.apiRequests().filter((r) => r.path === '/v1/images/edits')).toHaveLength(1);
  });

  it('the same key with another body is refused with 422, and nothing runs', async () => {
    const gw = await gatewayWith({ fakes, resolve: resolver });
    const key = unique();
    expect((await post(gw, '/v1/images/generations', image(), key)).status).toBe(200);
    const other = await post(gw, '/v1/images/generations', image({ prompt: 'a dog' }), key);
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    expect(gw.fakes.images.apiRequests()).toHaveLength(1);
  });

  it('a key is scoped to the caller and the route: another tenant or route never gets this answer', async () => {
    const gw = await gatewayWith({ fakes, resolve: resolver });
    const key = unique();
    const a = await post(gw, '/v1/images/generations', image(), key);
    const b = await post(gw, '/v1/images/generations', image(), key, KEY_B);
    expect(b.status).toBe(200);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.body.data[0].url).not.toBe(a.body.data[0].url);
    const native = await post(gw, '/api/v3/images/generations', { model: 'seedream', prompt: 'a cat' }, key);
    expect(native.status).toBe(200);
    expect(native.headers['idempotent-replayed']).toBeUndefined();
    expect(gw.fakes.images.apiRequests()).toHaveLength(3);
  });

  it('a retry while the first is still running is refused with 409 and Retry-After; the upstream is called once', async () => {
    const gw = await gatewayWith({ fakes, resolve: resolver });
    let open!: () => void;
    gw.fakes.images.hold = new Promise<void>((resolve) => (open = resolve));
    const key = unique();
    const first = post(gw, '/v1/images/generations', image(), key).then((res) => res);
    await expect.poll(() => gw.fakes.images.requests.length).toBe(1);
    const retry = await post(gw, '/v1/images/generations', image(), key);
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('idempotency_key_in_use');
    expect(retry.headers['retry-after']).toBeDefined();
    open();
    gw.fakes.images.hold = undefined;
    expect((await first).status).toBe(200);
    expect((await post(gw, '/v1/images/generations', image(), key)).headers['idempotent-replayed']).toBe('true');
    expect(gw.fakes.images.requests).toHaveLength(1);
  });

  it('keys expire after idempotency.ttlSeconds', async () => {
    const gw = await gatewayWith({ fakes, resolve: resolver, idempotency: { ttlSeconds: 1 } });
    const key = unique();
    expect((await post(gw, '/v1/images/generations', image(), key)).status).toBe(200);
    await sleep(1_300);
    const later = await post(gw, '/v1/images/generations', image(), key);
    expect(later.status).toBe(200);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(gw.fakes.images.apiRequests()).toHaveLength(2);
  });

  it('a lost answer (client gone mid-request) is kept: the retry replays it and no second image is billed', async () => {
    const gw = await gatewayWith({ fakes, resolve: resolver });
    let open!: () => void;
    gw.fakes.images.hold = new Promise<void>((resolve) => (open = resolve));
    const key = unique();
    const controller = new AbortController();
    const lost = fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(image()),
      signal: controller.signal,
    }).catch(() => undefined);
    await expect.poll(() => gw.fakes.images.requests.length).toBe(1);
    controller.abort();
    await lost;
    await sleep(100);
    open();
    gw.fakes.images.hold = undefined;
    await expect.poll(async () => (await post(gw, '/v1/images/generations', image(), key)).headers['idempotent-replayed']).toBe('true');
    expect(gw.fakes.images.requests).toHaveLength(1);
    const billed = gw.usage.filter((event) => event.route === 'images.generations' && event.status === 200 && event.images > 0);
    expect(billed).toHaveLength(1);
  });

  it('two instances on one Redis, concurrent retries of a video create: one upstream task, every success names it', async () => {
    const f = { ark: await startFakeArk() };
    const redisA = new Redis(REDIS_URL);
    const redisB = new Redis(REDIS_URL);
    const prefix = `${unique()}:`;
    const make = (client: Redis) =>
      createTestGateway({
        store: redisTaskStore({ client, prefix }),
        idempotency: { store: redisIdempotencyStore({ client, prefix: `${prefix}idem:` }) },
        resolveUpstream: () => ({ provider: 'ark', baseURL: f.ark.baseURL, apiKey: 'k' }),
      });
    const one = make(redisA);
    const two = make(redisB);
    try {
      const key = unique();
      const answers = await Promise.all(Array.from({ length: 10 }, (_v, i) => post(i % 2 === 0 ? one : two, TASKS, video(), key)));
      expect(f.ark.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
      const ids = new Set(answers.filter((res) => res.status === 200).map((res) => res.body.id as string));
      expect(ids.size).toBe(1);
      expect(answers.every((res) => res.status === 200 || res.status === 409)).toBe(true);
      const after = await Promise.all([post(one, TASKS, video(), key), post(two, TASKS, video(), key)]);
      for (const res of after) expect(res.body.id).toBe([...ids][0]);
      expect(f.ark.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    } finally {
      await one.close();
      await two.close();
      redisA.disconnect();
      redisB.disconnect();
      await f.ark.close();
    }
  });
});

describe('quotas in billing units', () => {
  it('requests per minute: the refusal is 429 rate_limit_exceeded naming the limit, with Retry-After and the IETF headers; the upstream is not called', async () => {
    const gw = await gatewayWith({ fakes, resolve: resolver, tenancy: { quotas: { limits: { requestsPerMinute: 2 } } } });
    const ok = await post(gw, '/v1/images/generations', image());
    expect(ok.status).toBe(200);
    expect(ok.headers['ratelimit-policy']).toContain('"requests";q=2;w=60');
    expect(ok.headers.ratelimit).toMatch(/"requests";r=1;t=\d+/);
    expect((await post(gw, '/v1/images/generations', image())).status).toBe(200);
    const refused = await post(gw, '/v1/images/generations', image());
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limit_exceeded');
    expect(refused.body.error.message).toMatch(/requests per minute/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['ratelimit-policy']).toBe('"requests";q=2;w=60');
    expect(refused.headers.ratelimit).toMatch(/^"requests";r=0;t=\d+$/);
    expect(gw.fakes.images.apiRequests()).toHaveLength(2);
  });

  it('images per minute: weighted by n, refunded when the upstream fails; the host reads the remaining budget', async () => {
    const gw = await gatewayWith({ fakes, resolve: resolver, tenancy: { quotas: { limits: { imagesPerMinute: 5 } } } });
    const caller = { id: 'tenant-a' };
    expect((await post(gw, '/v1/images/generations', image({ n: 3 }))).status).toBe(200);
    expect((await gw.router.quota(caller)).find((q) => q.name === 'images')?.remaining).toBe(2);
    const tooMany = await post(gw, '/v1/images/generations', image({ n: 3 }));
    expect(tooMany.status).toBe(429);
    expect(tooMany.body.error.message).toMatch(/images per minute/);
    expect((await gw.router.quota(caller)).find((q) => q.name === 'images')?.remaining).toBe(2);
    gw.fakes.images.fail = true;
    expect((await post(gw, '/v1/images/generations', image({ n: 2 }))).status).toBeGreaterThanOrEqual(500);
    gw.fakes.images.fail = false;
    expect((await gw.router.quota(caller)).find((q) => q.name === 'images')?.remaining).toBe(2);
    expect((await post(gw, '/v1/images/generations', image({ n: 2 }))).status).toBe(200);
    expect((await gw.router.quota(caller)).find((q) => q.name === 'images')?.remaining).toBe(0);
  });

  it('a request refused by validation or by the resolver costs nothing and calls no upstream', async () => {
    const gw = await gatewayWith({
      fakes,
      resolve: (input, f) => (input.model === 'refused' ? null : resolver(input, f)),
      tenancy: { quotas: { limits: { requestsPerMinute: 1, imagesPerMinute: 1, videoSecondsPerDay: 5, concurrentVideoTasks: 1 } } },
    });
    expect((await post(gw, '/v1/images/generations', { model: 'x-image-max', prompt: 'x', input: { messages: [] }, parameters: { n: 9 } })).status).toBe(400);
    expect((await post(gw, '/v1/images/generations', image({ model: 'refused' }))).status).toBeGreaterThanOrEqual(400);
    expect((await post(gw, TASKS, { model: 'seedance', content: 'nope' })).status).toBe(400);
    expect((await post(gw, TASKS, video({ model: 'refused' }))).status).toBeGreaterThanOrEqual(400);
    const state = await gw.router.quota({ id: 'tenant-a' });
    for (const item of state) expect(item.remaining, item.name).toBe(item.limit);
    expect(gw.fakes.images.requests).toHaveLength(0);
    expect(gw.fakes.ark.requests).toHaveLength(0);
  });

  it('video-seconds per day and concurrent video tasks: charged by duration, a slot freed when the task ends', async () => {
    const gw = await gatewayWith({ fakes, resolve: resolver, tenancy: { quotas: { limits: { videoSecondsPerDay: 12, concurrentVideoTasks: 1 } } } });
    const first = await post(gw, TASKS, video({ duration: 5 }));
    expect(first.status).toBe(200);
    const busy = await post(gw, TASKS, video({ duration: 5 }));
    expect(busy.status).toBe(429);
    expect(busy.body.error.message).toMatch(/video tasks/);
    // queued, running, succeeded
    for (let i = 0; i < 3; i += 1)
      await request(gw.app)
        .get(`${TASKS}/${first.body.id as string}`)
        .set('Authorization', `Bearer ${KEY_A}`);
    expect((await post(gw, TASKS, video({ duration: 5 }))).status).toBe(200);
    const seconds = await post(gw, TASKS, video({ duration: 5 }));
    expect(seconds.status).toBe(429);
    expect(seconds.body.error.message).toMatch(/video-seconds per day|video tasks/);
  });

  it('two instances on one Redis share one budget', async () => {
    const f = { images: await startImageFake() };
    const redisA = new Redis(REDIS_URL);
    const redisB = new Redis(REDIS_URL);
    const prefix = `${unique()}:`;
    const make = (redis: Redis) =>
      createTestGateway({ tenancy: { quotas: { limits: { imagesPerMinute: 3 }, redis, prefix } }, resolveUpstream: () => ({ provider: 'openai', baseURL: `${f.images.origin}/v1`, apiKey: 'k' }) });
    const one = make(redisA);
    const two = make(redisB);
    try {
      const answers = await Promise.all(Array.from({ length: 6 }, (_v, i) => post(i % 2 === 0 ? one : two, '/v1/images/generations', image())));
      expect(answers.filter((res) => res.status === 200)).toHaveLength(3);
      expect(answers.filter((res) => res.status === 429)).toHaveLength(3);
      expect(f.images.requests).toHaveLength(3);
    } finally {
      await one.close();
      await two.close();
      redisA.disconnect();
      redisB.disconnect();
      await f.images.close();
    }
  });

  describe('Redis down', () => {
    const lines: Array<{ level: string; message: string }> = [];
    const logger: Logger = {
      info: () => {},
      warn: (_fields, message) => void lines.push({ level: 'warn', message }),
      error: (_fields, message) => void lines.push({ level: 'error', message }),
    };
    let server: Awaited<ReturnType<typeof startRedisServerProcess>>;
    afterAll(async () => server?.close());

    for (const mode of ['refuse', 'allow'] as const) {
      it(`whenRedisDown: '${mode}'`, async () => {
        server ??= await startRedisServerProcess();
        await server.start();
        const redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
        redis.on('error', () => {});
        const options: Partial<GatewayOptions> = { tenancy: { quotas: { limits: { requestsPerMinute: 100 }, redis, whenRedisDown: mode } }, logger };
        const gw = await gatewayWith({ fakes, resolve: resolver, ...options });
        try {
          expect((await post(gw, '/v1/images/generations', image())).status).toBe(200);
          await server.stop();
          await expect.poll(() => redis.status).not.toBe('ready');
          const res = await post(gw, '/v1/images/generations', image());
          if (mode === 'refuse') {
            expect(res.status).toBe(503);
            expect(res.body.error.code).toBe('quota_unavailable');
            expect(gw.fakes.images.apiRequests()).toHaveLength(1);
          } else {
            expect(res.status).toBe(200);
            expect(lines.some((line) => line.level === 'warn' && /quota/.test(line.message))).toBe(true);
            expect(gw.fakes.images.apiRequests()).toHaveLength(2);
          }
        } finally {
          redis.disconnect();
        }
      });
    }

    it('the idempotency store down: 503 idempotency_unavailable, nothing runs; requests without a key are unaffected', async () => {
      server ??= await startRedisServerProcess();
      await server.start();
      const redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
      redis.on('error', () => {});
      const gw = await gatewayWith({ fakes, resolve: resolver, idempotency: { store: redisIdempotencyStore({ client: redis }) }, store: memoryTaskStore(), logger });
      try {
        await server.stop();
        await expect.poll(() => redis.status).not.toBe('ready');
        const res = await post(gw, '/v1/images/generations', image(), unique());
        expect(res.status).toBe(503);
        expect(res.body.error.code).toBe('idempotency_unavailable');
        expect(gw.fakes.images.apiRequests()).toHaveLength(0);
        expect((await post(gw, '/v1/images/generations', image())).status).toBe(200);
      } finally {
        redis.disconnect();
      }
    });
  });
});

describe('usage events a host can bill from', () => {
  it('an image event carries what the upstream returned (images, request id, usage), a refusal carries its error code', async () => {
    const gw = await gatewayWith({ fakes, resolve: resolver, tenancy: { quotas: { limits: { requestsPerMinute: 2 } } } });
    await post(gw, '/api/v3/images/generations', { model: 'seedream', prompt: 'a cat', sequential_image_generation: 'auto' });
    const event = gw.usage.at(-1)!;
    expect(event.images).toBe(1);
    expect(event.status).toBe(200);
    expect(event.upstreamUsage).toMatchObject({ generated_images: 1 });
    await post(gw, '/v1/images/generations', image());
    await post(gw, '/v1/images/generations', image());
    expect(gw.usage.at(-1)).toMatchObject({ status: 429, errorCode: 'rate_limit_exceeded', images: 0 });
  });

  it('exactly one terminal event per task when two instances query it at once', async () => {
    const f = { ark: await startFakeArk() };
    const redisA = new Redis(REDIS_URL);
    const redisB = new Redis(REDIS_URL);
    const prefix = `${unique()}:`;
    const make = (client: Redis) => createTestGateway({ store: redisTaskStore({ client, prefix }), resolveUpstream: () => ({ provider: 'ark', baseURL: f.ark.baseURL, apiKey: 'k' }) });
    const one = make(redisA);
    const two = make(redisB);
    try {
      f.ark.scripts.push(['succeeded']);
      const created = await post(one, TASKS, video());
      const id = created.body.id as string;
      await Promise.all(
        Array.from({ length: 6 }, (_v, i) =>
          request((i % 2 === 0 ? one : two).app)
            .get(`${TASKS}/${id}`)
            .set('Authorization', `Bearer ${KEY_A}`),
        ),
      );
      const terminal = [...one.usage, ...two.usage].filter((event) => event.task?.id === id);
      expect(terminal).toHaveLength(1);
      expect(terminal[0]!.video).toMatchObject({ seconds: 5, resolution: '720p' });
    } finally {
      await one.close();
      await two.close();
      redisA.disconnect();
      redisB.disconnect();
      await f.ark.close();
    }
  });
});
