// Video task durability with the in-memory scheduler (contract §3, §6): a terminal callback survives a
// failure between scheduling its delivery and recording it, polling survives a store outage and a
// resolver that refuses for a while, background polls see the caller of the create request, and
// states only go forward (an earlier state is never recorded nor delivered).
import request from 'supertest';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import {
  type Caller,
  type DeliveryJob,
  type GatewayOptions,
  type JobHandlers,
  type JobScheduler,
  memoryScheduler,
  memoryTaskStore,
  staticKeys,
  type TaskRecord,
  type TaskStore,
} from '../../lib/index.js';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/callback-receiver.js';
import { type FakeArk, startFakeArk } from '../helpers/fake-ark.js';
import { failingOnceAfterTerminalWrite } from '../helpers/faulty-store.js';
import { KEY_A, type TestGateway, createTestGateway } from '../helpers/gateway-app.js';

const TASKS = '/api/v3/contents/generations/tasks';
const body = (callbackUrl: string) => ({ model: 'seedance', content: [{ type: 'text', text: 'a cat' }], callback_url: callbackUrl });

interface LogLine {
  level: 'info' | 'warn' | 'error';
  message: string;
  fields?: Record<string, unknown>;
}

let ark: FakeArk;
let receiver: CallbackReceiver;
const open: TestGateway[] = [];
let logs: LogLine[];

const arkFor =
  (): GatewayOptions['resolveUpstream'] =>
  ({ route }) =>
    route === 'video.tasks' ? { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-operator-key' } : null;

function gatewayWith(options: Partial<GatewayOptions> = {}): TestGateway {
  const gateway = createTestGateway({
    store: memoryTaskStore(),
    resolveUpstream: arkFor(),
    logger: {
      info: (fields, message) => logs.push({ level: 'info', message, fields }),
      warn: (fields, message) => logs.push({ level: 'warn', message, fields }),
      error: (fields, message) => logs.push({ level: 'error', message, fields }),
    },
    ...options,
    callbacks: { allowLocal: true, pollIntervalsMs: { video: [30] }, retryBaseMs: 20, retryMaxMs: 40, ...options.callbacks },
  });
  open.push(gateway);
  return gateway;
}

const create = async (gw: TestGateway): Promise<string> => {
  const res = await request(gw.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).send(body(receiver.url));
  expect(res.status, res.text).toBe(200);
  return res.body.id as string;
};
const statusOf = (delivery: { body: string }): string => (JSON.parse(delivery.body) as { status: string }).status;
const until = async (done: () => boolean, what: string, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};
const deliveredStatuses = (): string[] => receiver.deliveries.filter((d) => d.status < 300).map(statusOf);

beforeAll(async () => {
  ark = await startFakeArk();
  receiver = await startCallbackReceiver();
});
afterAll(async () => {
  await ark.close();
  await receiver.close();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((gw) => gw.close()));
  ark.scripts.length = 0;
  receiver.deliveries.length = 0;
  receiver.failFirst = 0;
  // no log line of any test may carry a key
  expect(JSON.stringify(logs)).not.toContain(KEY_A);
  expect(JSON.stringify(logs)).not.toContain('ark-operator-key');
});
beforeAll(() => {
  logs = [];
});

describe('11: a terminal callback is never lost', () => {
  it('a delivery that could not be scheduled is scheduled again, with the same webhook-id', async () => {
    logs = [];
    ark.scripts.push(['succeeded']);
    const inner = memoryScheduler();
    const refused: string[] = [];
    // the scheduler fails once, right where the state is handed to delivery (a crash or slow Redis)
    const scheduler: JobScheduler = {
      ...inner,
      start: (handlers, retry) => inner.start(handlers, retry),
      schedulePoll: (taskId, delayMs, key) => inner.schedulePoll(taskId, delayMs, key),
      close: () => inner.close(),
      async scheduleDelivery(job) {
        if (refused.length === 0) {
          refused.push(job.eventId);
          throw new Error('scheduler unavailable');
        }
        return inner.scheduleDelivery(job);
      },
    };
    const gw = gatewayWith({ callbacks: { scheduler } });
    const id = await create(gw);
    const [delivered] = await receiver.accepted(1);
    expect(JSON.parse(delivered!.body)).toMatchObject({ id, status: 'succeeded' });
    expect(delivered!.headers['webhook-id']).toBe(refused[0]);
  });

  it('a store write that fails after recording the terminal state does not lose its delivery', async () => {
    logs = [];
    ark.scripts.push(['succeeded']);
    // the write lands, then the store answers with an error (a timeout after the command ran)
    const { store, failed } = failingOnceAfterTerminalWrite(memoryTaskStore());
    const gw = gatewayWith({ store });
    const id = await create(gw);
    const [delivered] = await receiver.accepted(1);
    expect(failed()).toBe(true);
    expect(JSON.parse(delivered!.body)).toMatchObject({ id, status: 'succeeded' });
  });
});

describe('12: polling survives a store outage', () => {
  it('failed polls are logged with the task id and retried; following resumes when the store is back', async () => {
    logs = [];
    ark.scripts.push(['running', 'succeeded']);
    const inner = memoryTaskStore();
    let down = false;
    const outage = async <T>(run: () => Promise<T>): Promise<T> => {
      if (down) throw new Error('store unavailable: connect ECONNREFUSED');
      return run();
    };
    const store: TaskStore = {
      ...inner,
      getTask: (id) => outage(() => inner.getTask(id)),
      updateTask: (id, version, changes) => outage(() => inner.updateTask(id, version, changes)),
    };
    const gw = gatewayWith({ store });
    const id = await create(gw);
    down = true;
    const failures = () => logs.filter((line) => line.level === 'warn' && line.fields?.taskId === id);
    await until(() => failures().length >= 3, 'three logged poll failures');
    down = false;
    const accepted = await receiver.accepted(2);
    expect(accepted.map(statusOf).sort()).toEqual(['running', 'succeeded']);
    expect(failures()[0]).toMatchObject({ message: expect.stringContaining('task poll failed'), fields: { taskId: id, error: 'store unavailable: connect ECONNREFUSED' } });
  });

  it('a poll that keeps failing is given up after a bounded number of attempts, logged as an error', async () => {
    logs = [];
    const inner = memoryTaskStore();
    let down = false;
    const store: TaskStore = {
      ...inner,
      getTask: async (id) => {
        if (down) throw new Error('store unavailable');
        return inner.getTask(id);
      },
    };
    // maxFollowMs / retryMaxMs < maxAttempts: the bound is maxAttempts (3)
    const gw = gatewayWith({ store, callbacks: { allowLocal: true, pollIntervalsMs: { video: [30] }, retryBaseMs: 5, retryMaxMs: 10, maxAttempts: 3, maxFollowMs: 20 } });
    const id = await create(gw);
    down = true;
    await until(() => logs.some((line) => line.level === 'error' && line.fields?.taskId === id), 'the poll to be given up');
    const given = logs.find((line) => line.level === 'error' && line.fields?.taskId === id)!;
    expect(given).toMatchObject({ message: 'task poll given up', fields: { taskId: id, attempts: 3, error: 'store unavailable' } });
    expect(logs.filter((line) => line.level === 'warn' && line.fields?.taskId === id)).toHaveLength(3);
  });
});

describe('13: background polls see the caller of the create request', () => {
  it('the resolver gets the stored caller snapshot (never the key); a record without one falls back to { id: owner }', async () => {
    logs = [];
    const seen: Array<{ caller: Caller; background: boolean }> = [];
    const store = memoryTaskStore();
    const scheduler = memoryScheduler();
    const gw = gatewayWith({
      store,
      callbacks: { scheduler },
      // a host that puts the key on its caller object: the snapshot must not keep it
      verifyKey: staticKeys({ [KEY_A]: { id: 'tenant-a', plan: 'pro', limits: { videos: 3 }, token: KEY_A } }),
      // authorizes by plan: a caller without one gets no upstream
      resolveUpstream: ({ route, caller, req }) => {
        seen.push({ caller, background: req === undefined });
        return route === 'video.tasks' && (caller.plan === 'pro' || caller.plan === undefined) ? { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-operator-key' } : null;
      },
    });
    ark.scripts.push(['succeeded']);
    const id = await create(gw);
    const [delivered] = await receiver.accepted(1);
    expect(JSON.parse(delivered!.body)).toMatchObject({ id, status: 'succeeded' });
    const polls = seen.filter((entry) => entry.background);
    expect(polls.length).toBeGreaterThan(0);
    for (const entry of polls) expect(entry.caller).toEqual({ id: 'tenant-a', plan: 'pro', limits: { videos: 3 } });
    expect((await store.getTask(id))?.caller).toEqual({ id: 'tenant-a', plan: 'pro', limits: { videos: 3 } });

    // a record written before snapshots existed: the resolver gets { id: owner }
    const created = await store.getTask(id);
    const old: TaskRecord = { ...created!, id: 'task_0123456789abcdefghijkl', status: 'queued', version: 1, callback: { url: receiver.url, polls: 0, done: false } };
    delete old.caller;
    delete old.result;
    // same Ark task as above (it answers 'succeeded'), another gateway id
    await store.createTask(old);
    seen.length = 0;
    await scheduler.schedulePoll(old.id, 0, `poll:${old.id}:0`);
    await until(() => deliveredStatuses().length >= 2, 'the old record to be delivered');
    expect(seen.filter((entry) => entry.background).map((entry) => entry.caller)).toContainEqual({ id: 'tenant-a' });
  });

  it('a resolver that refuses (null) or throws during a poll is a logged, retried failure, not the end of following', async () => {
    logs = [];
    let refusals = 0;
    const gw = gatewayWith({
      resolveUpstream: ({ route, req }) => {
        if (route !== 'video.tasks') return null;
        // the create request is served; the first background polls are refused, then one throws
        if (req === undefined && refusals < 3) {
          refusals += 1;
          if (refusals === 3) throw new Error('plan lookup timed out');
          return null;
        }
        return { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-operator-key' };
      },
    });
    ark.scripts.push(['succeeded']);
    const id = await create(gw);
    const [delivered] = await receiver.accepted(1);
    expect(JSON.parse(delivered!.body)).toMatchObject({ id, status: 'succeeded' });
    expect(refusals).toBe(3);
    const warned = logs.filter((line) => line.level === 'warn' && line.fields?.taskId === id);
    expect(warned.length).toBeGreaterThanOrEqual(3);
    expect(warned[0]!.message).toContain('task poll failed');
  });
});

describe('15: states go forward', () => {
  it('a poll that sees an earlier state neither records nor delivers it', async () => {
    logs = [];
    ark.scripts.push(['running', 'queued', 'succeeded']);
    const inner = memoryTaskStore();
    const written: string[] = [];
    const store: TaskStore = {
      ...inner,
      async updateTask(id, version, changes) {
        const updated = await inner.updateTask(id, version, changes);
        if (updated) written.push(updated.status);
        return updated;
      },
    };
    const gw = gatewayWith({ store });
    const id = await create(gw);
    await until(() => deliveredStatuses().includes('succeeded'), 'the terminal state');
    expect(ark.taskGets().length).toBeGreaterThanOrEqual(3);
    expect(deliveredStatuses()).toEqual(['running', 'succeeded']);
    expect(written).not.toContain('queued');
    expect((await store.getTask(id))?.status).toBe('succeeded');
  });

  it('a query that gets an earlier state from Ark answers the state the task has reached', async () => {
    // no callback: only queries follow this task; Ark's second answer lags behind its first
    ark.scripts.push(['running', 'queued']);
    const gw = gatewayWith();
    const created = await request(gw.app)
      .post(TASKS)
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'seedance', content: [{ type: 'text', text: 'a cat' }] });
    expect(created.status, created.text).toBe(200);
    const query = () =>
      request(gw.app)
        .get(`${TASKS}/${created.body.id as string}`)
        .set('Authorization', `Bearer ${KEY_A}`);
    expect((await query()).body.status).toBe('running');
    const lagging = await query();
    expect(lagging.status).toBe(200);
    expect(lagging.body).toMatchObject({ id: created.body.id, status: 'running' });
  });

  it('a delivery whose state the task has already passed is dropped at delivery time', async () => {
    logs = [];
    ark.scripts.push(['running', 'succeeded']);
    const inner = memoryScheduler();
    let held: DeliveryJob | undefined;
    let deliver: JobHandlers['deliver'] | undefined;
    // the 'running' delivery is held back until the task has succeeded (a busy or slow queue)
    const scheduler: JobScheduler = {
      ...inner,
      start: (handlers, retry) => {
        deliver = (job) => handlers.deliver(job);
        return inner.start(handlers, retry);
      },
      schedulePoll: (taskId, delayMs, key) => inner.schedulePoll(taskId, delayMs, key),
      close: () => inner.close(),
      async scheduleDelivery(job) {
        if (statusOf(job) === 'running') {
          held = job;
          return;
        }
        return inner.scheduleDelivery(job);
      },
    };
    const gw = gatewayWith({ callbacks: { scheduler } });
    const id = await create(gw);
    const [delivered] = await receiver.accepted(1);
    expect(JSON.parse(delivered!.body)).toMatchObject({ id, status: 'succeeded' });
    expect(held).toBeDefined();
    // now the held job runs, as the scheduler would run it: it must be dropped, not delivered
    await expect(deliver!(held!)).resolves.toBeUndefined();
    expect(receiver.deliveries.map(statusOf)).toEqual(['succeeded']);
    expect(logs).toContainEqual(
      expect.objectContaining({ message: 'callback dropped: the task has moved past this state', fields: expect.objectContaining({ taskId: id, status: 'running', current: 'succeeded' }) }),
    );
  });
});
