// Image tasks attacked (docs/image-tasks.md): a cancel that lands while the finished work is still being
// completed, a caller that waits with `Prefer: wait`, and the charge held against the work the fake
// upstream counts. Each test is a way a tenant could get images the task does not show or was not
// charged for, or a way the task's one terminal state could be contradicted.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { type GatewayOptions, type JobScheduler, createGatewayRouter, staticKeys, type ResultStorage, type TaskRecord, type TaskStore, memoryScheduler, memoryTaskStore } from '../../lib/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { localResultStorage } from '../../lib/storage.js';
import { OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A, listen } from '../helpers/gateway-app.js';
import { type GatewayFixture, gatewayWith } from '../helpers/gateway-with.js';
import { quotaUsed } from '../helpers/paid-work.js';

const DASHSCOPE_MODEL = 'x-image-2.0';

type Fixture = GatewayFixture<{ images: typeof startFakePaidImages }>;

function start(options: Partial<GatewayOptions> = {}): Promise<Fixture> {
  return gatewayWith(
    {
      fakes: { images: startFakePaidImages },
      resolve: (_, { images }) => ({ provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-2.0' }),
      tenancy: { quotas: { limits: { imagesPerMinute: 100 } } },
    },
    options,
  );
}

const auth = { Authorization: `Bearer ${KEY_A}` };

/** A result storage whose URLs wait for `open()`: the upstream has answered, the task is still completing its answer. */
function gatedStorage(): { storage: ResultStorage; reached: Promise<void>; open: () => void } {
  const inner = localResultStorage({ directory: tempDir('image-task-attacks-'), secret: 'image-task-attacks-secret-0123456789' });
  let open!: () => void;
  let reach!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const storage: ResultStorage = {
    ...inner,
    put: (key, body, info) => inner.put(key, body, info),
    url: async (key, context) => {
      reach();
      await gate;
      return inner.url(key, context);
    },
    delete: (key) => inner.delete(key),
    deletePrefix: (prefix) => inner.deletePrefix(prefix),
    ...(inner.read ? { read: (key: string, query: Record<string, unknown>) => inner.read!(key, query) } : {}),
  };
  return { storage, reached, open };
}

/** The task store the gateway uses, telling the test the ids of the tasks created (a wait answers no id until it ends). */
function watchedStore(): { store: TaskStore; ids: string[] } {
  const inner = memoryTaskStore();
  const ids: string[] = [];
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      if (name === 'createTask') return (record: TaskRecord) => (ids.push(record.id), target.createTask(record));
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
  return { store, ids };
}

describe('a cancel that lands after the upstream answered', () => {
  it('the caller waiting with Prefer: wait gets the cancelled task, never the images of a task that shows cancelled', async () => {
    const gated = gatedStorage();
    const watched = watchedStore();
    const gw = await start({ storage: gated.storage, store: watched.store });
    const answered = request(gw.url)
      .post(OPENAI_IMAGES)
      .set(auth)
      .set('Prefer', 'respond-async, wait=60')
      .send({ model: DASHSCOPE_MODEL, prompt: 'late cancel', n: 2 })
      .then((res) => res);
    await gated.reached;
    // the upstream has answered: the run is storing its images when the cancel arrives
    expect(gw.fakes.images.started()).toBe(1);
    const [id] = watched.ids;
    const cancelled = await request(gw.app).post(`/v1/images/tasks/${id}/cancel`).set(auth);
    expect(cancelled.body.status).toBe('cancelled');
    gated.open();
    const res = await answered;
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id, status: 'cancelled' });
    expect(res.body.data).toBeUndefined();
    expect((await request(gw.app).get(`/v1/images/tasks/${id}`).set(auth)).body.status).toBe('cancelled');
    // a running task's images stay charged, once
    expect(await quotaUsed(gw.router, 'images')).toBe(2);
    expect(gw.usage.filter((event) => event.task?.id === id).map((event) => event.task!.status)).toEqual(['cancelled']);
  });
});

/** A task store whose writes of new tasks wait for `open()`, as a remote store's round trip would. */
function slowStore(): { store: TaskStore; creating: () => number; open: () => void } {
  const inner = memoryTaskStore();
  let creating = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      if (name === 'createTask') {
        return async (record: TaskRecord) => {
          creating += 1;
          await gate;
          return target.createTask(record);
        };
      }
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
  return { store, creating: () => creating, open };
}

describe('a burst of submits against a store with a round trip', () => {
  it("one caller's concurrent submits cannot queue more than maxQueuedPerCaller between the check and the queue", async () => {
    const slow = slowStore();
    const gw = await start({ store: slow.store, limits: { imageTasks: { concurrency: 1, maxQueuedPerCaller: 1 } } });
    const submits = Array.from({ length: 4 }, (_, index) =>
      request(gw.url)
        .post(OPENAI_IMAGES)
        .set(auth)
        .set('Prefer', 'respond-async')
        .send({ model: DASHSCOPE_MODEL, prompt: `burst ${index}` })
        .then((res) => res),
    );
    const refusals: number[] = [];
    for (const submit of submits) void submit.then((res) => res.status === 429 && refusals.push(res.status));
    // every submit is either at the store or refused: then the store answers
    await expect.poll(() => slow.creating() + refusals.length, { timeout: 10_000 }).toBe(4);
    slow.open();
    const statuses = (await Promise.all(submits)).map((res) => res.status).sort();
    // the first admitted holds the caller's one place while its task is written; the others are refused
    expect(statuses).toEqual([202, 429, 429, 429]);
    expect(await quotaUsed(gw.router, 'images')).toBe(1);
  });
});

describe('a queued task ended by its watch', () => {
  it('gives its place in the queue back at once: the caller may queue another, and the ended task never runs', async () => {
    const gw = await start({ limits: { imageTasks: { concurrency: 1, maxQueuedPerCaller: 1, maxQueueSeconds: 1 } } });
    const release = gw.fakes.images.hold();
    const running = await request(gw.app).post(OPENAI_IMAGES).set(auth).set('Prefer', 'respond-async').send({ model: DASHSCOPE_MODEL, prompt: 'holds the slot' });
    await expect.poll(() => gw.fakes.images.started()).toBe(1);
    const waiting = await request(gw.app).post(OPENAI_IMAGES).set(auth).set('Prefer', 'respond-async').send({ model: DASHSCOPE_MODEL, prompt: 'waits too long', n: 3 });
    expect(waiting.status).toBe(202);
    await expect.poll(async () => (await request(gw.app).get(`/v1/images/tasks/${waiting.body.id}`).set(auth)).body.status, { timeout: 10_000, interval: 100 }).toBe('failed');
    const task = await request(gw.app).get(`/v1/images/tasks/${waiting.body.id}`).set(auth);
    expect(task.body.error.code).toBe('task_interrupted');
    const next = await request(gw.app).post(OPENAI_IMAGES).set(auth).set('Prefer', 'respond-async').send({ model: DASHSCOPE_MODEL, prompt: 'takes the freed place' });
    expect(next.status).toBe(202);
    // the running task keeps its image; the ended one was refunded
    expect(await quotaUsed(gw.router, 'images')).toBe(2);
    release();
    await expect.poll(() => gw.usage.filter((event) => event.task !== undefined).length, { timeout: 10_000 }).toBe(3);
    expect(gw.fakes.images.started()).toBe(2);
    expect(running.status).toBe(202);
  });
});

describe('an expired task', () => {
  it('cancelling it answers 409 naming the status the task answers (expired), not the one recorded', async () => {
    const gw = await start({ limits: { imageTasks: { upstreamUrlSeconds: 1 } } });
    const res = await request(gw.app).post(OPENAI_IMAGES).set(auth).set('Prefer', 'respond-async').send({ model: DASHSCOPE_MODEL, prompt: 'short-lived URLs' });
    await expect.poll(async () => (await request(gw.app).get(`/v1/images/tasks/${res.body.id}`).set(auth)).body.status, { timeout: 10_000, interval: 100 }).toBe('expired');
    const cancelled = await request(gw.app).post(`/v1/images/tasks/${res.body.id}/cancel`).set(auth);
    expect(cancelled.status).toBe(409);
    expect(cancelled.body.error.code).toBe('task_not_cancellable');
    expect(cancelled.body.error.message).toContain('(expired)');
  });
});

describe('a replayed submit', () => {
  it('replays the 202 with every header the contract gives it: Location, Preference-Applied, Retry-After, Cache-Control: no-store', async () => {
    const gw = await start();
    const headers = { Prefer: 'respond-async', 'Idempotency-Key': 'attack-replay-1' };
    const first = await request(gw.app).post(OPENAI_IMAGES).set(auth).set(headers).send({ model: DASHSCOPE_MODEL, prompt: 'replayed' });
    const second = await request(gw.app).post(OPENAI_IMAGES).set(auth).set(headers).send({ model: DASHSCOPE_MODEL, prompt: 'replayed' });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.headers['idempotent-replayed']).toBe('true');
    for (const name of ['location', 'preference-applied', 'cache-control', 'retry-after']) expect([name, second.headers[name]]).toEqual([name, first.headers[name]]);
    expect(gw.fakes.images.started()).toBeLessThanOrEqual(1);
  });
});

/** The memory scheduler, its `n`-th schedulePoll held until `open()`: a task marked running whose upstream call is not made yet. */
function heldScheduler(n: number): { scheduler: JobScheduler; reached: Promise<void>; open: () => void } {
  const inner = memoryScheduler();
  let calls = 0;
  let open!: () => void;
  let reach!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const scheduler = new Proxy(inner, {
    get(target, name, receiver) {
      if (name === 'schedulePoll') {
        return async (...args: Parameters<JobScheduler['schedulePoll']>) => {
          calls += 1;
          if (calls === n) {
            reach();
            await gate;
          }
          return target.schedulePoll(...args);
        };
      }
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
  return { scheduler, reached, open };
}

describe('a cancel between running and the upstream call', () => {
  it('a task cancelled once running but before its upstream call was made gets its images back: nothing was made', async () => {
    // the first schedulePoll is the submit's watch, the second the run's, made just before the upstream call
    const held = heldScheduler(2);
    const watched = watchedStore();
    const gw = await start({ callbacks: { scheduler: held.scheduler }, store: watched.store });
    const res = await request(gw.app).post(OPENAI_IMAGES).set(auth).set('Prefer', 'respond-async').send({ model: DASHSCOPE_MODEL, prompt: 'cancelled in the gap', n: 2 });
    expect(res.status).toBe(202);
    await held.reached;
    expect((await request(gw.app).get(`/v1/images/tasks/${res.body.id}`).set(auth)).body.status).toBe('running');
    const cancelled = await request(gw.app).post(`/v1/images/tasks/${res.body.id}/cancel`).set(auth);
    expect(cancelled.body.status).toBe('cancelled');
    held.open();
    await expect.poll(() => gw.usage.filter((event) => event.task?.id === res.body.id).length).toBe(1);
    await gw.fakes.images.settled();
    expect(gw.fakes.images.started()).toBe(0);
    // charged what was made: nothing
    expect(await quotaUsed(gw.router, 'images')).toBe(gw.fakes.images.imagesMade());
  });
});

describe('a task that ends failed although its upstream answered', () => {
  it('a caller waiting with Prefer: wait gets the failure the task records (result_not_kept), not images billed as undelivered', async () => {
    const gw = await gatewayWith({
      fakes: { images: startFakePaidImages },
      resolve: (_, { images }) => ({ provider: 'openai', baseURL: images.openaiBaseURL, apiKey: 'sk-up' }),
      tenancy: { quotas: { limits: { imagesPerMinute: 100 } } },
    });
    const res = await request(gw.app).post(OPENAI_IMAGES).set(auth).set('Prefer', 'respond-async, wait=30').send({ model: 'gpt-image-1', prompt: 'bytes only' });
    expect(res.body.data).toBeUndefined();
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('result_not_kept');
    await expect.poll(() => gw.usage.filter((event) => event.task !== undefined).length).toBe(1);
    const [event] = gw.usage.filter((e) => e.task !== undefined);
    // made by the vendor, not kept by the gateway: the operator's cost (docs/tenancy-and-billing.md "The books")
    expect(event).toMatchObject({
      images: 0,
      absorbedImages: gw.fakes.images.imagesMade(),
      vendorWork: { images: gw.fakes.images.imagesMade() },
      task: { status: 'failed' },
      errorCode: 'result_not_kept',
    });
    expect(await quotaUsed(gw.router, 'images')).toBe(0);
  });
});

/** The collector, reached at runtime (the flag is honoured for functions made after it is set). */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

describe('what a queued task holds', () => {
  it('neither the submitting request nor its socket is held while the task waits for a slot', async () => {
    const fakes = await startFakePaidImages();
    const router = createGatewayRouter({
      verifyKey: staticKeys({ [KEY_A]: { id: 'tenant-a' } }),
      resolveUpstream: () => ({ provider: 'dashscope', baseURL: fakes.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-2.0' }),
      limits: { imageTasks: { concurrency: 1 } },
    });
    const requests: Array<WeakRef<object>> = [];
    const sockets: Array<WeakRef<object>> = [];
    const app = express();
    app.use((req, _res, next) => {
      requests.push(new WeakRef(req));
      sockets.push(new WeakRef(req.socket));
      next();
    });
    app.use(router);
    const server = await listen(app);
    try {
      const release = fakes.hold();
      const post = (prompt: string) =>
        fetch(`${server.url}${OPENAI_IMAGES}`, {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/json', Prefer: 'respond-async', Connection: 'close' },
          body: JSON.stringify({ model: DASHSCOPE_MODEL, prompt }),
        });
      expect((await post('holds the one slot')).status).toBe(202);
      await expect.poll(() => fakes.started()).toBe(1);
      const queued = await post('waits behind it');
      expect(queued.status).toBe(202);
      const { id } = (await queued.json()) as { id: string };
      expect(requests).toHaveLength(2);
      const gc = collector();
      // the second request and its socket: gone while its task still waits
      await expect
        .poll(() => {
          gc();
          return [requests[1]?.deref() === undefined, sockets[1]?.deref() === undefined];
        })
        .toEqual([true, true]);
      expect(fakes.started()).toBe(1);
      release();
      await expect.poll(async () => ((await (await fetch(`${server.url}/v1/images/tasks/${id}`, { headers: auth })).json()) as { status: string }).status, { timeout: 10_000 }).toBe('succeeded');
    } finally {
      await server.close();
      await router.close();
      await fakes.close();
    }
  });
});

describe('a scheduler that is down at submit', () => {
  it('refuses the submit with nothing left behind: no task written that no watch would ever end, the charge given back', async () => {
    const inner = memoryScheduler();
    const scheduler = new Proxy(inner, {
      get(target, name, receiver) {
        if (name === 'schedulePoll') return () => Promise.reject(new Error('scheduler unreachable'));
        return Reflect.get(target, name, receiver) as unknown;
      },
    });
    const watched = watchedStore();
    const gw = await start({ callbacks: { scheduler }, store: watched.store });
    const res = await request(gw.app).post(OPENAI_IMAGES).set(auth).set('Prefer', 'respond-async').send({ model: DASHSCOPE_MODEL, prompt: 'never watched', n: 2 });
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(watched.ids).toEqual([]);
    expect(await quotaUsed(gw.router, 'images')).toBe(0);
    expect(gw.fakes.images.started()).toBe(0);
  });
});
