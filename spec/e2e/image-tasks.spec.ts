// Asynchronous image tasks (docs/image-tasks.md): `Prefer: respond-async` and the `/async` aliases answer
// 202 with a task that the gateway runs; the task answers its owner only, ends once, is charged at submit
// and settled at its end, calls back signed, and never repeats paid work. The upstream counts the
// generations it starts, so every test can hold the charge against the work.
import OpenAI from 'openai';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import type { GatewayOptions } from '../../lib/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { localResultStorage } from '../../lib/storage.js';
import { startCallbackReceiver } from '../helpers/callback-receiver.js';
import { OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { type GatewayFixture, gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';
import { quotaUsed } from '../helpers/paid-work.js';

const DASHSCOPE_MODEL = 'x-image-2.0';
const ARK_MODEL = 'doubao-seedream-4-0-250828';
const OPENAI_MODEL = 'gpt-image-1';
// qwen-image-plus offers DashScope's asynchronous synthesis (upstreams §1.5)
const ASYNC_MODEL = 'x-image-plus';
const SECRET = 'whsec_' + Buffer.from('image-task-callback-secret-0123456789').toString('base64');
const TASK_ID = /^imgtask_[A-Za-z0-9_-]{22}$/;

type Fixture = GatewayFixture<{ images: typeof startFakePaidImages }>;

function start(options: Partial<GatewayOptions> & { mountPath?: string } = {}): Promise<Fixture> {
  return gatewayWith(
    {
      fakes: { images: startFakePaidImages },
      resolve: ({ model }, { images }) => {
        if (model === DASHSCOPE_MODEL) return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-2.0' };
        if (model === ASYNC_MODEL) return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-plus' };
        if (model === ARK_MODEL) return { provider: 'ark', baseURL: images.arkBaseURL, apiKey: 'sk-up' };
        return { provider: 'openai', baseURL: images.openaiBaseURL, apiKey: 'sk-up' };
      },
      tenancy: { quotas: { limits: { imagesPerMinute: 100 } } },
      callbacks: { signingSecret: SECRET, allowLocal: true, retryBaseMs: 10, retryMaxMs: 50, pollIntervalsMs: { image: [1000] } },
    },
    options,
  );
}

const auth = (key = KEY_A) => ({ Authorization: `Bearer ${key}` });

function submit(gw: Fixture, body: Record<string, unknown>, headers: Record<string, string> = { Prefer: 'respond-async' }, path = OPENAI_IMAGES) {
  return request(gw.app).post(path).set(auth()).set(headers).send(body);
}

/** Polls the task until it has ended, as a client following Retry-After would (without the wait). */
async function ended(gw: Fixture, id: string, key = KEY_A, prefix = ''): Promise<Record<string, unknown>> {
  let last: Record<string, unknown> = {};
  await expect
    .poll(
      async () => {
        const res = await request(gw.app).get(`${prefix}/v1/images/tasks/${id}`).set(auth(key));
        last = res.body as Record<string, unknown>;
        return ['succeeded', 'failed', 'cancelled', 'expired'].includes(String(last.status));
      },
      { timeout: 10_000, interval: 50 },
    )
    .toBe(true);
  return last;
}

const taskEvents = (gw: Fixture) => gw.usage.filter((event) => event.task !== undefined && event.task.id.startsWith('imgtask_'));

describe('submitting an image task', () => {
  it('answers 202 with the task, where to find it and that the preference was applied; the task then succeeds with the synchronous answer', async () => {
    const gw = await start({ mountPath: '/gw' });
    const res = await request(gw.app).post(`/gw${OPENAI_IMAGES}`).set(auth()).set('Prefer', 'respond-async').send({ model: DASHSCOPE_MODEL, prompt: 'a lighthouse' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ object: 'image.task', status: 'queued', model: DASHSCOPE_MODEL });
    expect(res.body.id).toMatch(TASK_ID);
    expect(typeof res.body.created).toBe('number');
    expect(res.headers.location).toBe(`/gw/v1/images/tasks/${res.body.id}`);
    expect(res.headers['preference-applied']).toBe('respond-async');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.headers['cache-control']).toBe('no-store');

    const task = await ended(gw, res.body.id as string, KEY_A, '/gw');
    expect(task).toMatchObject({ id: res.body.id, status: 'succeeded', model: DASHSCOPE_MODEL });
    const done = await request(gw.app)
      .get(res.headers.location as string)
      .set(auth());
    expect(done.headers['retry-after']).toBeUndefined();
    expect(done.headers['cache-control']).toBe('no-store');
  });

  it('runs the work once, and the task answers the result with the upstream URLs, one terminal usage event and the images charged', async () => {
    const gw = await start();
    const res = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'a lighthouse', n: 2 });
    expect(res.status).toBe(202);
    const task = await ended(gw, res.body.id as string);
    expect(task.status).toBe('succeeded');
    const result = task.result as { data: Array<{ url: string }> };
    expect(result.data).toHaveLength(2);
    expect(result.data[0]!.url).toMatch(/\/results\/generation-1-0\.png$/);
    expect(gw.fakes.images.started()).toBe(1);
    await expect.poll(() => taskEvents(gw).length).toBe(1);
    const [event] = taskEvents(gw);
    expect(event).toMatchObject({ route: 'images.generations', model: DASHSCOPE_MODEL, images: 2, task: { id: res.body.id, status: 'succeeded' } });
    // the submit's own event bills nothing: the task's terminal event does
    expect(gw.usage.filter((e) => e.task === undefined).every((e) => e.images === 0)).toBe(true);
    expect(await quotaUsed(gw.router, 'images')).toBe(2);
  });

  it('the /async aliases are the same as the header', async () => {
    const gw = await start();
    const res = await request(gw.app).post('/v1/images/generations/async').set(auth()).send({ model: ARK_MODEL, prompt: 'a harbour' });
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(`/v1/images/tasks/${res.body.id}`);
    const task = await ended(gw, res.body.id as string);
    expect(task).toMatchObject({ status: 'succeeded', model: ARK_MODEL });
    expect((task.result as { data: unknown[] }).data).toHaveLength(1);
    expect(gw.fakes.images.started()).toBe(1);
  });

  it('an edit is submitted as a task from its form, with callback_url as a form field that never reaches the upstream', async () => {
    const receiver = await startCallbackReceiver();
    try {
      const gw = await start();
      const res = await request(gw.app)
        .post('/v1/images/edits/async')
        .set(auth())
        .field('model', DASHSCOPE_MODEL)
        .field('prompt', 'make it blue')
        .field('callback_url', receiver.url)
        .attach('image', TINY_PNG, { filename: 'in.png', contentType: 'image/png' });
      expect(res.status).toBe(202);
      const task = await ended(gw, res.body.id as string);
      expect(task.status).toBe('succeeded');
      expect(gw.fakes.images.started()).toBe(1);
      const sent = gw.fakes.images.requests.find((r) => r.method === 'POST');
      expect(sent?.body.toString()).not.toContain('callback_url');
      const deliveries = await receiver.accepted(2);
      const bodies = deliveries.map((d) => JSON.parse(d.body) as Record<string, unknown>);
      expect(bodies.map((b) => b.status)).toEqual(['running', 'succeeded']);
      expect(bodies[1]).toEqual(task);
      for (const delivery of deliveries) expect(() => new Webhook(SECRET).verify(delivery.body, delivery.headers as Record<string, string>)).not.toThrow();
    } finally {
      await receiver.close();
    }
  });

  it('callback_url gets the callback URL rules: a loopback target is refused with 400 and nothing runs', async () => {
    const gw = await start({ callbacks: { signingSecret: SECRET } });
    const res = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'x', callback_url: 'http://127.0.0.1:9/hook' });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('callback_url');
    expect(gw.fakes.images.started()).toBe(0);
  });

  it('b64_json without result storage is a 400 that names the storage option, and the upstream is not called', async () => {
    const gw = await start();
    const res = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'x', response_format: 'b64_json' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('storage');
    expect(res.body.error.param).toBe('response_format');
    expect(gw.fakes.images.started()).toBe(0);
    expect(await quotaUsed(gw.router, 'images')).toBe(0);
  });

  it('an edit whose form repeats response_format with b64_json among the values is refused the same way', async () => {
    const gw = await start();
    const res = await request(gw.app)
      .post('/v1/images/edits/async')
      .set(auth())
      .field('model', DASHSCOPE_MODEL)
      .field('prompt', 'make it blue')
      .field('response_format', 'url')
      .field('response_format', 'b64_json')
      .attach('image', TINY_PNG, { filename: 'in.png', contentType: 'image/png' });
    expect(res.status).toBe(400);
    expect(gw.fakes.images.started()).toBe(0);
  });

  it('with storage, an upstream that answers bytes only (gpt-image) ends with durable URLs, and no bytes are kept with the task', async () => {
    const gw = await start({ storage: localResultStorage({ directory: tempDir('image-tasks-'), secret: 'image-task-results-secret-0123456789' }) });
    // the listening server's own address: stored URLs are signed under the base the request reached
    const res = await request(gw.url).post(OPENAI_IMAGES).set(auth()).set('Prefer', 'respond-async').send({ model: OPENAI_MODEL, prompt: 'x', response_format: 'b64_json' });
    expect(res.status).toBe(202);
    const task = await ended(gw, res.body.id as string);
    expect(task.status).toBe('succeeded');
    const entry = (task.result as { data: Array<Record<string, unknown>> }).data[0]!;
    expect(entry.b64_json).toBeUndefined();
    expect(String(entry.url)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    const image = await fetch(String(entry.url));
    expect(Buffer.from(await image.arrayBuffer()).equals(TINY_PNG)).toBe(true);
  });

  it('without storage, an upstream that answers bytes only ends failed with result_not_kept: its images are vendor work the operator absorbs', async () => {
    const gw = await start();
    const res = await submit(gw, { model: OPENAI_MODEL, prompt: 'x' });
    const task = await ended(gw, res.body.id as string);
    expect(task.status).toBe('failed');
    expect((task.error as { code: string }).code).toBe('result_not_kept');
    expect(gw.fakes.images.started()).toBe(1);
    // the vendor made them (vendorWork), the gateway could not keep them: the operator's cost, given back to the quota
    await expect.poll(() => taskEvents(gw).length).toBe(1);
    expect(taskEvents(gw)[0]).toMatchObject({ images: 0, absorbedImages: gw.fakes.images.imagesMade(), lostBy: 'gateway', vendorWork: { images: gw.fakes.images.imagesMade() } });
    expect(await quotaUsed(gw.router, 'images')).toBe(0);
  });

  it('bad input is the ordinary 400 before anything is queued, charged or called', async () => {
    const gw = await start();
    const res = await submit(gw, { model: DASHSCOPE_MODEL });
    expect(res.status).toBe(400);
    expect(gw.fakes.images.started()).toBe(0);
    expect(taskEvents(gw)).toHaveLength(0);
  });
});

describe("on the upstream's own task", () => {
  it('a model with DashScope asynchronous synthesis is submitted there once and followed by id until it succeeds', async () => {
    const receiver = await startCallbackReceiver();
    try {
      const gw = await start();
      gw.fakes.images.workMs = 300;
      const res = await submit(gw, { model: ASYNC_MODEL, prompt: 'a slow lighthouse', callback_url: receiver.url });
      expect(res.status).toBe(202);
      const task = await ended(gw, res.body.id as string);
      expect(task.status).toBe('succeeded');
      expect((task.result as { data: Array<{ url: string }> }).data[0]!.url).toMatch(/\/results\/generation-1-0\.png$/);
      const submits = gw.fakes.images.requests.filter((r) => r.method === 'POST');
      expect(submits.map((r) => r.path)).toEqual(['/api/v1/services/aigc/text2image/image-synthesis']);
      expect(submits[0]!.headers['x-dashscope-async']).toBe('enable');
      expect(submits[0]!.json).toMatchObject({ model: 'qwen-image-plus', input: { prompt: 'a slow lighthouse' } });
      expect(gw.fakes.images.requests.some((r) => r.method === 'GET' && r.path === '/api/v1/tasks/ds-task-1')).toBe(true);
      expect(gw.fakes.images.started()).toBe(1);
      await expect.poll(() => taskEvents(gw).length).toBe(1);
      expect(taskEvents(gw)[0]).toMatchObject({ images: 1, provider: 'dashscope', task: { status: 'succeeded' } });
      expect(await quotaUsed(gw.router, 'images')).toBe(1);
      const deliveries = await receiver.accepted(2);
      expect(deliveries.map((d) => (JSON.parse(d.body) as { status: string }).status)).toEqual(['running', 'succeeded']);
    } finally {
      await receiver.close();
    }
  });

  it('Prefer: wait gets the ordinary answer of a task that ends on the upstream task API within the wait', async () => {
    const gw = await start();
    gw.fakes.images.workMs = 300;
    const res = await submit(gw, { model: ASYNC_MODEL, prompt: 'waited for' }, { Prefer: 'respond-async, wait=30' });
    expect(res.status).toBe(200);
    expect(res.body.object).toBeUndefined();
    expect(res.body.data[0].url).toMatch(/\/results\/generation-1-0\.png$/);
    expect(gw.fakes.images.started()).toBe(1);
  });

  it('an upstream task does not hold a slot of the queue: with one slot, a second task starts while the first is followed', async () => {
    const gw = await start({ limits: { imageTasks: { concurrency: 1 } } });
    const release = gw.fakes.images.hold();
    const first = await submit(gw, { model: ASYNC_MODEL, prompt: 'followed' });
    await expect.poll(() => gw.fakes.images.started()).toBe(1);
    const second = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'queued behind' });
    await expect.poll(() => gw.fakes.images.started()).toBe(2);
    release();
    expect((await ended(gw, first.body.id as string)).status).toBe('succeeded');
    expect((await ended(gw, second.body.id as string)).status).toBe('succeeded');
  });
});

describe('Prefer: wait', () => {
  it('work done within the wait gets the ordinary 200 answer', async () => {
    const gw = await start();
    const res = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'quick' }, { Prefer: 'respond-async, wait=30' });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.object).toBeUndefined();
    expect(gw.fakes.images.started()).toBe(1);
  });

  it('work still running after the wait gets the 202, and goes on to succeed', async () => {
    const gw = await start();
    const release = gw.fakes.images.hold();
    const res = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'slow' }, { Prefer: 'respond-async; x=1, wait=1' });
    expect(res.status).toBe(202);
    expect(['queued', 'running']).toContain(res.body.status);
    release();
    const task = await ended(gw, res.body.id as string);
    expect(task.status).toBe('succeeded');
    expect(gw.fakes.images.started()).toBe(1);
  });
});

describe('who sees a task', () => {
  it('another tenant, an unknown id and a malformed one get the same 404; no key gets 401', async () => {
    const gw = await start();
    const res = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'mine' });
    const id = res.body.id as string;
    const theirs = await request(gw.app).get(`/v1/images/tasks/${id}`).set(auth(KEY_B));
    const unknown = await request(gw.app)
      .get(`/v1/images/tasks/imgtask_${'A'.repeat(22)}`)
      .set(auth());
    const malformed = await request(gw.app).get('/v1/images/tasks/../../etc').set(auth());
    expect(theirs.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(theirs.body.error.code).toBe(unknown.body.error.code);
    expect(malformed.status).toBe(404);
    const cancelTheirs = await request(gw.app).post(`/v1/images/tasks/${id}/cancel`).set(auth(KEY_B));
    expect(cancelTheirs.status).toBe(404);
    expect((await request(gw.app).get(`/v1/images/tasks/${id}`)).status).toBe(401);
    // a video task id is not an image task, and an image task is not a video task
    expect((await request(gw.app).get(`/api/v3/contents/generations/tasks/${id}`).set(auth())).status).toBe(404);
    await ended(gw, id);
  });

  it('a task older than imageTasks.keepSeconds answers 404', async () => {
    const gw = await start({ limits: { imageTasks: { keepSeconds: 1 } } });
    const res = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'short-lived' });
    await ended(gw, res.body.id as string);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await request(gw.app).get(`/v1/images/tasks/${res.body.id}`).set(auth())).status).toBe(404);
  });
});

describe('cancelling', () => {
  it('a queued task is cancelled before it starts: nothing is generated and its charge comes back', async () => {
    const gw = await start({ limits: { imageTasks: { concurrency: 1 } } });
    const release = gw.fakes.images.hold();
    const first = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'first' });
    await expect.poll(() => gw.fakes.images.started()).toBe(1);
    const second = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'second', n: 3 });
    expect(await quotaUsed(gw.router, 'images')).toBe(4);
    const cancelled = await request(gw.app).post(`/v1/images/tasks/${second.body.id}/cancel`).set(auth());
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: second.body.id, status: 'cancelled' });
    expect(await quotaUsed(gw.router, 'images')).toBe(1);
    release();
    expect((await ended(gw, first.body.id as string)).status).toBe('succeeded');
    expect((await ended(gw, second.body.id as string)).status).toBe('cancelled');
    expect(gw.fakes.images.started()).toBe(1);
    // a cancelled task cannot be cancelled into something else; cancelling it again is harmless
    expect((await request(gw.app).post(`/v1/images/tasks/${second.body.id}/cancel`).set(auth())).status).toBe(200);
    const again = await request(gw.app).post(`/v1/images/tasks/${first.body.id}/cancel`).set(auth());
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('task_not_cancellable');
    expect(
      taskEvents(gw)
        .map((e) => e.task!.status)
        .sort(),
    ).toEqual(['cancelled', 'succeeded']);
  });

  it('close() ends the tasks still waiting at once: failed task_interrupted, refunded, reported once, never started', async () => {
    const gw = await start({ limits: { imageTasks: { concurrency: 1 } } });
    const release = gw.fakes.images.hold();
    const first = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'running' });
    await expect.poll(() => gw.fakes.images.started()).toBe(1);
    const second = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'waiting', n: 3 });
    expect(await quotaUsed(gw.router, 'images')).toBe(4);
    await gw.router.close();
    const waiting = await request(gw.app).get(`/v1/images/tasks/${second.body.id}`).set(auth());
    expect(waiting.body).toMatchObject({ id: second.body.id, status: 'failed', error: { code: 'task_interrupted' } });
    // the waiting task's three images come back at once (it never started: no vendor work)
    expect(await quotaUsed(gw.router, 'images')).toBeLessThanOrEqual(1);
    const events = taskEvents(gw).filter((event) => event.task!.id === second.body.id);
    expect(events.map((event) => [event.task!.status, event.images, event.vendorWork])).toEqual([['failed', 0, { images: 0, attempts: [] }]]);
    release();
    expect(first.status).toBe(202);
    expect(gw.fakes.images.started()).toBe(1);
  });

  it('a running task cancelled mid-call stays cancelled whatever the call answers; its images stay charged, since the upstream may bill them', async () => {
    const gw = await start();
    const release = gw.fakes.images.hold();
    const res = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'racing', n: 2 });
    await expect.poll(() => gw.fakes.images.started()).toBe(1);
    const cancelled = await request(gw.app).post(`/v1/images/tasks/${res.body.id}/cancel`).set(auth());
    expect(cancelled.body.status).toBe('cancelled');
    release();
    await gw.fakes.images.settled();
    const task = await ended(gw, res.body.id as string);
    expect(task.status).toBe('cancelled');
    expect(gw.fakes.images.started()).toBe(1);
    await expect.poll(() => taskEvents(gw).length).toBe(1);
    expect(taskEvents(gw)[0]).toMatchObject({ images: 0, undeliveredImages: 2, task: { status: 'cancelled' } });
    expect(await quotaUsed(gw.router, 'images')).toBe(2);
  });
});

describe('retries and limits', () => {
  it('an Idempotency-Key on the submit replays the same 202, task id and Location; the work runs once', async () => {
    const gw = await start();
    const headers = { Prefer: 'respond-async', 'Idempotency-Key': 'task-key-1' };
    const first = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'once' }, headers);
    const second = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'once' }, headers);
    expect(second.status).toBe(202);
    expect(second.body.id).toBe(first.body.id);
    expect(second.headers.location).toBe(first.headers.location);
    expect(second.headers['idempotent-replayed']).toBe('true');
    await ended(gw, first.body.id as string);
    expect(gw.fakes.images.started()).toBe(1);
  });

  it('the official openai SDK at its default retries submits one task through the alias', async () => {
    const gw = await start();
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${gw.url}/v1` });
    const created = (await client.post('/images/generations/async', { body: { model: DASHSCOPE_MODEL, prompt: 'sdk' } })) as { id: string; status: string };
    expect(created.id).toMatch(TASK_ID);
    const task = (await ended(gw, created.id)) as { status: string };
    expect(task.status).toBe('succeeded');
    expect(gw.fakes.images.started()).toBe(1);
  });

  it("one caller's queue is bounded (429 task_queue_full) while another caller still gets a slot", async () => {
    const gw = await start({ limits: { imageTasks: { concurrency: 2, perCallerConcurrency: 1, maxQueuedPerCaller: 1 } } });
    const release = gw.fakes.images.hold();
    const running = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'a1' });
    await expect.poll(() => gw.fakes.images.started()).toBe(1);
    const waiting = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'a2' });
    expect(waiting.status).toBe(202);
    const refused = await submit(gw, { model: DASHSCOPE_MODEL, prompt: 'a3' });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('task_queue_full');
    // tenant-a holds one slot at most: tenant-b's task starts beside it
    const other = await request(gw.app).post(OPENAI_IMAGES).set(auth(KEY_B)).set('Prefer', 'respond-async').send({ model: DASHSCOPE_MODEL, prompt: 'b1' });
    expect(other.status).toBe(202);
    await expect.poll(() => gw.fakes.images.started()).toBe(2);
    release();
    for (const id of [running.body.id, waiting.body.id]) expect((await ended(gw, id as string)).status).toBe('succeeded');
    expect((await ended(gw, other.body.id as string, KEY_B)).status).toBe('succeeded');
    expect(gw.fakes.images.started()).toBe(3);
  });

  it('without the header, nothing changes: the image route answers one request with one answer', async () => {
    const gw = await start();
    const res = await request(gw.app).post(OPENAI_IMAGES).set(auth()).send({ model: DASHSCOPE_MODEL, prompt: 'sync' });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(taskEvents(gw)).toHaveLength(0);
  });
});
