// Tenant controls on one instance (docs/tenancy-and-billing.md): Idempotency-Key on the paid creates
// (replay without an upstream call, 422 on another body, 409 while running, expiry, errors free the
// key, streams refused, too-large answers not kept), quotas in billing units (weighted image charges
// and their refunds, requests, video-seconds, concurrent video tasks, the in-flight override, the
// 429 with Retry-After and RateLimit headers, a refusal that costs nothing), and the usage events.
import http from 'node:http';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { QuotaLimits, QuotaOptions } from '../../lib/index.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { openaiError, startFakeOpenAI } from '../helpers/fake-openai.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { type Responder, sendJson } from '../helpers/fake-upstream.js';

const GENERATIONS = '/v1/images/generations';
const TASKS = '/api/v3/contents/generations/tasks';
const NATIVE = '/api/v3/images/generations';
const image = (extra: Record<string, unknown> = {}) => ({ model: 'dall-e-3', prompt: 'a red fox', ...extra });
const video = (extra: Record<string, unknown> = {}, text = 'a cat on a wall') => ({ model: 'seedance', content: [{ type: 'text', text }], ...extra });

async function start(options: { quotas?: QuotaOptions; idempotency?: { ttlSeconds?: number; maxAnswerBytes?: number } | false } = {}) {
  return gatewayWith({
    fakes: { openai: startFakeOpenAI, ark: startFakeArk },
    resolve: ({ route }, { openai, ark }) =>
      route === 'video.tasks' || route === 'images.native' ? { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-key' } : { provider: 'openai', baseURL: openai.baseURL, apiKey: 'oa-key' },
    tenancy: { quotas: options.quotas },
    ...(options.idempotency !== undefined ? { idempotency: options.idempotency } : {}),
  });
}

/** Quotas for tenant A only. */
const limited = (limits: QuotaLimits): QuotaOptions => ({ limits: (caller) => (caller.id === 'tenant-a' ? limits : undefined) });

/** An OpenAI image answer with as many images as the request's `n`. */
const asAsked: Responder = (recorded, res) => {
  const n = Number((recorded.json as { n?: number }).n ?? 1);
  sendJson(res, 200, { created: 1, data: Array.from({ length: n }, (_item, index) => ({ url: `https://cdn.openai.example/${index}.png` })) });
};

/** A responder that holds the upstream's answer until `release()` is called. */
function held(): { wait: Promise<void>; release: () => void } {
  let release!: () => void;
  const wait = new Promise<void>((resolve) => (release = resolve));
  return { wait, release };
}

async function until(check: () => boolean): Promise<void> {
  for (let round = 0; round < 500 && !check(); round += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
}

describe('Idempotency-Key on the paid creates', () => {
  it('a retry with the same key and body replays the answer byte for byte, marked, without an upstream call or a usage event', async () => {
    const gw = await start();
    const first = await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'order-1').send(image());
    const retry = await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', '"order-1"').send(image());
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers['content-type']).toBe(first.headers['content-type']);
    expect(retry.text).toBe(first.text);
    expect(gw.fakes.openai.apiRequests()).toHaveLength(1);
    // one billable outcome: the replay emits nothing
    expect(gw.usage).toHaveLength(1);
    expect(gw.usage[0]).toMatchObject({ route: 'images.generations', images: 1, status: 200 });
  });

  it('the same key with another body is 422 idempotency_key_reused; another caller or route has its own keys', async () => {
    const gw = await start();
    const post = (key: string, body: object, path = GENERATIONS) => request(gw.app).post(path).set('Authorization', `Bearer ${key}`).set('Idempotency-Key', 'k-1').send(body);
    expect((await post(KEY_A, image())).status).toBe(200);
    const reused = await post(KEY_A, image({ prompt: 'a blue fox' }));
    expect(reused.status).toBe(422);
    expect(reused.body.error).toMatchObject({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });
    // tenant B's k-1 and tenant A's k-1 on the video route are other keys: both run
    expect((await post(KEY_B, image({ prompt: 'a blue fox' }))).status).toBe(200);
    expect((await post(KEY_A, video(), TASKS)).status).toBe(200);
    expect(gw.fakes.openai.apiRequests()).toHaveLength(2);
    expect(gw.fakes.ark.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('a retry while the first is running is 409 with Retry-After; once it finished the retry gets its answer', async () => {
    const gw = await start();
    const gate = held();
    gw.fakes.openai.next(async (_request, res) => {
      await gate.wait;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ created: 1, data: [{ url: 'https://cdn.openai.example/slow.png' }] }));
    });
    const post = () => request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'slow-1').send(image());
    const first = post().then((res) => res);
    await until(() => gw.fakes.openai.apiRequests().length === 1);
    const early = await post();
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('idempotency_key_in_use');
    expect(early.headers['retry-after']).toBe('1');
    gate.release();
    expect((await first).status).toBe(200);
    const late = await post();
    expect(late.status).toBe(200);
    expect(late.headers['idempotent-replayed']).toBe('true');
    expect(late.body.data[0].url).toBe('https://cdn.openai.example/slow.png');
    expect(gw.fakes.openai.apiRequests()).toHaveLength(1);
  });

  it('a lost answer: the client leaves mid-request, the upstream call still finishes, and the retry gets that answer', async () => {
    const gw = await start({ quotas: limited({ inFlight: 1 }) });
    const gate = held();
    gw.fakes.ark.next(async (_request, res) => {
      await gate.wait;
      sendJson(res, 200, { id: 'cgt-20260917121233-lost' });
    });
    const body = JSON.stringify(video());
    const lost = http.request(`${gw.url}${TASKS}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'idempotency-key': 'lost-1' },
    });
    lost.on('error', () => {});
    lost.end(body);
    await until(() => gw.fakes.ark.requests.length === 1);
    lost.destroy();
    // the work goes on after the client left: the caller's one in-flight slot is still taken
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).send(image())).status).toBe(429);
    gate.release();
    await until(() => gw.usage.some((event) => event.route === 'video.tasks'));
    const retry = await request(gw.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'lost-1').send(video());
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.id).toMatch(/^task_/);
    expect(gw.fakes.ark.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    // the one usage event says the task was created (200), not that the client left
    expect(gw.usage.filter((event) => event.route === 'video.tasks')).toEqual([expect.objectContaining({ status: 200 })]);
  });

  it('keys expire after idempotency.ttlSeconds: the same key then runs again', async () => {
    const gw = await start({ idempotency: { ttlSeconds: 1 } });
    const post = () => request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'ttl-1').send(image());
    expect((await post()).status).toBe(200);
    expect((await post()).headers['idempotent-replayed']).toBe('true');
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const after = await post();
    expect(after.status).toBe(200);
    expect(after.headers['idempotent-replayed']).toBeUndefined();
    expect(gw.fakes.openai.apiRequests()).toHaveLength(2);
  });

  it('an error answer frees the key: after an upstream 500 (and after a 400) the retry runs', async () => {
    const gw = await start();
    gw.fakes.openai.next((_request, res) => openaiError(res, 500, 'boom', 'server_error', null));
    const post = (body: object) => request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'err-1').send(body);
    const failed = await post(image());
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const retried = await post(image());
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    const invalid = await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'err-2').send({ prompt: 'no model' });
    expect(invalid.status).toBe(400);
    expect((await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'err-2').send(image())).status).toBe(200);
  });

  it('a video task retried with the same key gets the same task id and Ark gets one create', async () => {
    const gw = await start();
    const post = () => request(gw.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'video-1').send(video());
    const first = await post();
    const retry = await post();
    expect(first.status).toBe(200);
    expect(retry.body.id).toBe(first.body.id);
    expect(gw.fakes.ark.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('refuses the key on a streamed request (400), and a malformed key, without calling the upstream', async () => {
    const gw = await start();
    const streamed = await request(gw.app).post(NATIVE).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 's-1').send({ model: 'seedream', prompt: 'x', stream: true });
    expect(streamed.status).toBe(400);
    expect(streamed.body.error).toMatchObject({ code: 'invalid_request_error', param: 'Idempotency-Key' });
    const malformed = await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'x'.repeat(300)).send(image());
    expect(malformed.status).toBe(400);
    expect(gw.fakes.openai.apiRequests()).toHaveLength(0);
    expect(gw.fakes.ark.requests).toHaveLength(0);
  });

  it('an answer larger than maxAnswerBytes is not kept: the retry is 409 idempotency_answer_not_kept and nothing runs twice', async () => {
    const gw = await start({ idempotency: { maxAnswerBytes: 16 } });
    const post = () => request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'big-1').send(image());
    expect((await post()).status).toBe(200);
    const retry = await post();
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('idempotency_answer_not_kept');
    expect(gw.fakes.openai.apiRequests()).toHaveLength(1);
  });

  it('multipart edits: the same form replays, another file is 422', async () => {
    const gw = await start();
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
    const edit = (bytes: Buffer) =>
      request(gw.app)
        .post('/v1/images/edits')
        .set('Authorization', `Bearer ${KEY_A}`)
        .set('Idempotency-Key', 'edit-1')
        .field('model', 'dall-e-3')
        .field('prompt', 'make it blue')
        .attach('image', bytes, { filename: 'a.png', contentType: 'image/png' });
    expect((await edit(png)).status).toBe(200);
    const replay = await edit(png);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await edit(Buffer.concat([png, Buffer.from([0])]))).status).toBe(422);
    expect(gw.fakes.openai.apiRequests()).toHaveLength(1);
  });

  it('idempotency: false ignores the header', async () => {
    const gw = await start({ idempotency: false });
    const post = () => request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'off-1').send(image());
    expect((await post()).status).toBe(200);
    expect((await post()).headers['idempotent-replayed']).toBeUndefined();
    expect(gw.fakes.openai.apiRequests()).toHaveLength(2);
  });
});

describe('quotas in billing units', () => {
  it('an image request costs n; the one that would pass the limit is 429 with Retry-After and RateLimit headers, costs nothing and calls no upstream', async () => {
    const gw = await start({ quotas: limited({ imagesPerMinute: 5 }) });
    const post = (n: number, key = KEY_A) => request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${key}`).send(image({ n }));
    gw.fakes.openai.next(asAsked);
    expect((await post(4)).status).toBe(200);
    const refused = await post(2);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit_error' });
    expect(refused.body.error.message).toContain('5 images per minute');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['ratelimit-policy']).toBe('"images";q=5;w=60');
    expect(refused.headers.ratelimit).toMatch(/^"images";r=1;t=\d+$/);
    expect(gw.fakes.openai.apiRequests()).toHaveLength(1);
    // the refusal took nothing: the one image left is still there; tenant B has no quota
    expect((await post(1)).status).toBe(200);
    expect((await post(1)).status).toBe(429);
    expect((await post(6, KEY_B)).status).toBe(200);
    const state = await gw.router.quota({ id: 'tenant-a' });
    expect(state).toEqual([expect.objectContaining({ name: 'images', limit: 5, remaining: 0 })]);
    expect(await gw.router.quota({ id: 'tenant-b' })).toEqual([]);
  });

  it('images come back when the upstream fails', async () => {
    const gw = await start({ quotas: limited({ imagesPerMinute: 4 }) });
    gw.fakes.openai.next((_request, res) => openaiError(res, 500, 'boom', 'server_error', null));
    const post = () =>
      request(gw.app)
        .post(GENERATIONS)
        .set('Authorization', `Bearer ${KEY_A}`)
        .send(image({ n: 4 }));
    expect((await post()).status).toBeGreaterThanOrEqual(500);
    expect((await gw.router.quota({ id: 'tenant-a' }))[0]).toMatchObject({ name: 'images', remaining: 4 });
    gw.fakes.openai.next(asAsked);
    expect((await post()).status).toBe(200);
    expect((await post()).status).toBe(429);
  });

  it('an answer with fewer images than n gives the rest back: the quota counts what was generated', async () => {
    const gw = await start({ quotas: limited({ imagesPerMinute: 4 }) });
    // the fake's default answer has one image, whatever n
    const answered = await request(gw.app)
      .post(GENERATIONS)
      .set('Authorization', `Bearer ${KEY_A}`)
      .send(image({ n: 4 }));
    expect(answered.body.data).toHaveLength(1);
    expect((await gw.router.quota({ id: 'tenant-a' }))[0]).toMatchObject({ name: 'images', remaining: 3 });
  });

  it('requests per minute count every upstream route, each answer says what is left; the refused one reaches no upstream', async () => {
    const gw = await start({ quotas: limited({ requestsPerMinute: 2, videoSecondsPerDay: 100 }) });
    const image1 = await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).send(image());
    expect(image1.status).toBe(200);
    expect(image1.headers['ratelimit-policy']).toBe('"requests";q=2;w=60');
    expect(image1.headers.ratelimit).toMatch(/^"requests";r=1;t=\d+$/);
    const task = await request(gw.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).send(video());
    expect(task.status).toBe(200);
    expect(task.headers['ratelimit-policy']).toBe('"requests";q=2;w=60, "video-seconds";q=100;w=86400');
    expect(task.headers.ratelimit).toMatch(/^"requests";r=0;t=\d+, "video-seconds";r=95;t=\d+$/);
    const refused = await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).send(image());
    expect(refused.status).toBe(429);
    expect(refused.headers['ratelimit-policy']).toBe('"requests";q=2;w=60');
    expect(gw.fakes.openai.apiRequests()).toHaveLength(1);
  });

  it('a video task costs its duration: top-level, a --dur flag, or the default (5 s)', async () => {
    const gw = await start({ quotas: limited({ videoSecondsPerDay: 12 }) });
    const post = (body: object) => request(gw.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).send(body);
    expect((await post(video({ duration: 4 }))).status).toBe(200);
    expect((await post(video({}, 'a dog --ratio 16:9 --dur 3'))).status).toBe(200);
    expect((await gw.router.quota({ id: 'tenant-a' }))[0]).toMatchObject({ name: 'video-seconds', limit: 12, remaining: 5 });
    // the default 5 s fits once more, then nothing does
    expect((await post(video())).status).toBe(200);
    const refused = await post(video({ duration: 1 }));
    expect(refused.status).toBe(429);
    expect(refused.headers['ratelimit-policy']).toBe('"video-seconds";q=12;w=86400');
    expect(gw.fakes.ark.requests.filter((r) => r.method === 'POST')).toHaveLength(3);
  });

  it('concurrent video tasks: a slot frees when a query sees the task end, and that end is reported once', async () => {
    const gw = await start({ quotas: limited({ concurrentVideoTasks: 1 }) });
    gw.fakes.ark.scripts.push(['running', 'succeeded']);
    const post = () =>
      request(gw.app)
        .post(TASKS)
        .set('Authorization', `Bearer ${KEY_A}`)
        .send(video({ duration: 5 }));
    const created = await post();
    expect(created.status).toBe(200);
    const refused = await post();
    expect(refused.status).toBe(429);
    expect(refused.headers['ratelimit-policy']).toBe('"video-tasks";q=1');
    const query = () => request(gw.app).get(`${TASKS}/${created.body.id}`).set('Authorization', `Bearer ${KEY_A}`);
    expect((await query()).body.status).toBe('running');
    expect((await query()).body.status).toBe('succeeded');
    expect((await query()).body.status).toBe('succeeded');
    await until(() => gw.usage.some((event) => event.task !== undefined));
    expect((await post()).status).toBe(200);
    const terminal = gw.usage.filter((event) => event.task !== undefined);
    expect(terminal).toHaveLength(1);
    expect(terminal[0]).toMatchObject({
      route: 'video.tasks',
      model: 'seedance',
      provider: 'ark',
      task: { id: created.body.id, status: 'succeeded' },
      video: { seconds: 5, resolution: '720p' },
      upstreamUsage: { completion_tokens: 108900, total_tokens: 108900 },
    });
  });

  it('quotas.limits inFlight overrides limits.inFlightPerCaller per caller, with the same 429 and RateLimit headers', async () => {
    const gw = await start({ quotas: limited({ inFlight: 1 }) });
    const gate = held();
    gw.fakes.openai.next(async (_request, res) => {
      await gate.wait;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ created: 1, data: [{ url: 'https://x.example/1.png' }] }));
    });
    const first = request(gw.app)
      .post(GENERATIONS)
      .set('Authorization', `Bearer ${KEY_A}`)
      .send(image())
      .then((res) => res);
    await until(() => gw.fakes.openai.apiRequests().length === 1);
    const refused = await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).send(image());
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toContain('1 requests in flight');
    expect(refused.headers['ratelimit-policy']).toBe('"in-flight";q=1');
    // tenant B has no override: the default cap of 64 applies
    expect((await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_B}`).send(image())).status).toBe(200);
    gate.release();
    expect((await first).status).toBe(200);
  });

  it('usage events carry what the upstream returned: images, their sizes and its usage counters', async () => {
    const gw = await start();
    gw.fakes.openai.next((_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'oa-77' }).end(
        JSON.stringify({
          created: 1,
          size: '1024x1536',
          data: [{ url: 'https://x.example/1.png' }, { url: 'https://x.example/2.png' }],
          usage: { input_tokens: 50, output_tokens: 50, total_tokens: 100 },
        }),
      );
    });
    expect(
      (
        await request(gw.app)
          .post(GENERATIONS)
          .set('Authorization', `Bearer ${KEY_A}`)
          .send(image({ n: 3 }))
      ).status,
    ).toBe(200);
    expect(gw.usage[0]).toMatchObject({ images: 2, imageSizes: ['1024x1536', '1024x1536'], upstreamUsage: { input_tokens: 50, output_tokens: 50, total_tokens: 100 }, upstreamRequestId: 'oa-77' });
  });
});
