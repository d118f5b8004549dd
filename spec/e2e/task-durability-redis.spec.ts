// Video task durability with redisTaskStore + bullmqScheduler (contract §3, §6): polling survives a real
// Redis outage (a redis-server of the test's own, stopped mid-follow and started again), a terminal
// callback survives a store failure between hand-over and record, background polls see the creator's
// caller through the Redis store, and states only go forward. The shared Redis is used only under a
// key prefix and queue name of each test's own. Runs when REDIS_URL is set (.ci/run always sets it).
import { randomBytes } from 'node:crypto';
import { failingOnceAfterTerminalWrite } from '../helpers/faulty-store.js';
import request from 'supertest';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DeliveryJob, type GatewayOptions, type JobHandlers, type JobScheduler, staticKeys, type TaskStore } from '../../lib/index.js';
import { bullmqScheduler, redisTaskStore } from '../../lib/redis.js';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/callback-receiver.js';
import { type FakeArk, arkTaskObject, startFakeArk } from '../helpers/fake-ark.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A, type TestGateway, createTestGateway } from '../helpers/gateway-app.js';
import { type RedisServerProcess, startRedisServerProcess } from '../helpers/redis-server-process.js';
import { removeRedisKeys } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.REDIS_URL;
const TASKS = '/api/v3/contents/generations/tasks';
const QUEUE_PREFIX = 'gwdur';

interface LogLine {
  level: 'info' | 'warn' | 'error';
  message: string;
  fields?: Record<string, unknown>;
}

describe.runIf(Boolean(REDIS_URL))('video task durability on Redis (bullmqScheduler)', () => {
  let ark: FakeArk;
  let receiver: CallbackReceiver;
  let logs: LogLine[] = [];
  const cleanup: Array<() => Promise<void>> = [];
  const namespaces: string[] = [];

  const statusOf = (delivery: { body: string }): string => (JSON.parse(delivery.body) as { status: string }).status;
  const delivered = (): string[] => receiver.deliveries.filter((d) => d.status < 300).map(statusOf);
  const until = async (done: () => boolean, what: string, timeoutMs = 15_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  /** A gateway on `redisUrl` with its own store prefix and queue; torn down after the test. */
  const gatewayOn = (
    redisUrl: string,
    options: Partial<GatewayOptions> & { wrapStore?: (store: TaskStore) => TaskStore; wrapScheduler?: (scheduler: JobScheduler) => JobScheduler; client?: Redis } = {},
  ): { gateway: TestGateway; store: TaskStore } => {
    const { wrapStore = (s) => s, wrapScheduler = (s) => s, client: given, ...rest } = options;
    const namespace = `gw-dur-${randomBytes(4).toString('hex')}`;
    if (redisUrl === REDIS_URL) namespaces.push(namespace);
    const client = given ?? new Redis(redisUrl);
    client.on('error', () => {});
    const store = wrapStore(redisTaskStore({ client, prefix: `${namespace}:` }));
    const gateway = createTestGateway({
      store,
      resolveUpstream: ({ route }) => (route === 'video.tasks' ? { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-operator-key' } : null),
      callbacks: {
        allowLocal: true,
        pollIntervalsMs: { video: [50] },
        retryBaseMs: 200,
        retryMaxMs: 400,
        scheduler: wrapScheduler(bullmqScheduler({ connection: client, queueName: namespace, prefix: QUEUE_PREFIX })),
      },
      logger: {
        info: (fields, message) => logs.push({ level: 'info', message, fields }),
        warn: (fields, message) => logs.push({ level: 'warn', message, fields }),
        error: (fields, message) => logs.push({ level: 'error', message, fields }),
      },
      ...rest,
    });
    cleanup.push(async () => {
      await gateway.close();
      client.disconnect();
    });
    return { gateway, store };
  };
  const create = async (gw: TestGateway): Promise<string> => {
    const res = await request(gw.app)
      .post(TASKS)
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'seedance', content: [{ type: 'text', text: 'a cat' }], callback_url: receiver.url });
    expect(res.status, res.text).toBe(200);
    return res.body.id as string;
  };

  beforeAll(async () => {
    ark = await startFakeArk();
    receiver = await startCallbackReceiver();
  });
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
    await removeRedisKeys(
      REDIS_URL!,
      namespaces.splice(0).flatMap((namespace) => [`${namespace}:*`, `${QUEUE_PREFIX}:${namespace}:*`]),
    );
    ark.scripts.length = 0;
    receiver.deliveries.length = 0;
    receiver.failFirst = 0;
    expect(JSON.stringify(logs)).not.toContain(KEY_A);
    expect(JSON.stringify(logs)).not.toContain('ark-operator-key');
    logs = [];
  });
  afterAll(async () => {
    await ark.close();
    await receiver.close();
  });

  it('12: a poll that fails in a real Redis outage is logged and retried; the terminal state is delivered once Redis is back', async () => {
    const server: RedisServerProcess = await startRedisServerProcess();
    cleanup.push(() => server.close());
    // the host's store client fails a command at once while Redis is down (the default waits ~10 s,
    // then fails the same way): the outage is longer than the client's own retries
    const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
    const { gateway } = gatewayOn(server.url, { client });
    // runs before the gateway closes: a test that fails mid-outage must not leave close() waiting on Redis
    cleanup.push(() => server.start());
    ark.scripts.push(['running', 'succeeded']);
    const id = await create(gateway);
    await until(() => delivered().includes('running'), 'the running state');
    const upstreamId = [...ark.tasks.keys()].at(-1)!;

    // the next poll's Ark answer is held: Redis goes down while that poll is running
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const held = new Promise<void>((resolve) => (reached = resolve));
    ark.next(async (_request, res) => {
      reached();
      await released;
      sendJson(res, 200, arkTaskObject(upstreamId, 'seedance', 'running'));
    });
    await held;
    await server.stop();
    release();
    await until(() => logs.some((line) => line.level === 'warn' && line.fields?.taskId === id), 'a logged poll failure');
    expect(delivered()).not.toContain('succeeded');
    await server.start();

    await until(() => delivered().includes('succeeded'), 'the terminal state after the outage', 30_000);
    const failure = logs.find((line) => line.level === 'warn' && line.fields?.taskId === id)!;
    expect(failure.message).toContain('task poll failed');
    expect(failure.fields?.error).toEqual(expect.any(String));
    expect(logs.filter((line) => line.level === 'error')).toEqual([]);
  }, 60_000);

  it('11: a store write that fails after recording the terminal state does not lose its delivery', async () => {
    let failed = (): boolean => false;
    const { gateway } = gatewayOn(REDIS_URL!, {
      wrapStore: (inner) => {
        const faulty = failingOnceAfterTerminalWrite(inner);
        failed = faulty.failed;
        return faulty.store;
      },
    });
    ark.scripts.push(['succeeded']);
    const id = await create(gateway);
    await until(() => delivered().includes('succeeded'), 'the terminal state');
    expect(failed()).toBe(true);
    expect(JSON.parse(receiver.deliveries.find((d) => d.status < 300)!.body)).toMatchObject({ id, status: 'succeeded' });
  });

  it("13: background polls give the resolver the creator's caller, kept in the Redis store without the key", async () => {
    const pollCallers: unknown[] = [];
    const { gateway, store } = gatewayOn(REDIS_URL!, {
      verifyKey: staticKeys({ [KEY_A]: { id: 'tenant-a', plan: 'pro', token: KEY_A } }),
      resolveUpstream: ({ route, caller, req }) => {
        if (req === undefined) pollCallers.push(caller);
        return route === 'video.tasks' && caller.plan === 'pro' ? { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-operator-key' } : null;
      },
    });
    ark.scripts.push(['running', 'succeeded']);
    const id = await create(gateway);
    await until(() => delivered().includes('succeeded'), 'the terminal state');
    expect(pollCallers.length).toBeGreaterThan(0);
    for (const caller of pollCallers) expect(caller).toEqual({ id: 'tenant-a', plan: 'pro' });
    expect((await store.getTask(id))?.caller).toEqual({ id: 'tenant-a', plan: 'pro' });
  });

  it('15: a poll that sees an earlier state neither records nor delivers it', async () => {
    const written: string[] = [];
    const { gateway, store } = gatewayOn(REDIS_URL!, {
      wrapStore: (inner) => ({
        ...inner,
        async updateTask(id, version, changes) {
          const updated = await inner.updateTask(id, version, changes);
          if (updated) written.push(updated.status);
          return updated;
        },
      }),
    });
    ark.scripts.push(['running', 'queued', 'succeeded']);
    const id = await create(gateway);
    await until(() => delivered().includes('succeeded'), 'the terminal state');
    expect(ark.taskGets().length).toBeGreaterThanOrEqual(3);
    expect(delivered()).not.toContain('queued');
    expect(written).not.toContain('queued');
    expect((await store.getTask(id))?.status).toBe('succeeded');
  });

  it('15: a delivery job whose state the task has already passed is dropped when the worker runs it', async () => {
    let held: DeliveryJob | undefined;
    let releaseHeld: (() => Promise<void>) | undefined;
    let outcome: Promise<unknown> | undefined;
    const { gateway } = gatewayOn(REDIS_URL!, {
      // the 'running' job is queued only once the task has succeeded (a busy queue), and its run is watched
      wrapScheduler: (inner) => ({
        ...inner,
        start: (handlers, retry) => {
          const watched: JobHandlers = {
            ...handlers,
            deliver: (job) => {
              const run = handlers.deliver(job);
              if (job.eventId === held?.eventId)
                outcome = run.then(
                  () => 'resolved',
                  (error: unknown) => error,
                );
              return run;
            },
          };
          return inner.start(watched, retry);
        },
        schedulePoll: (taskId, delayMs, key) => inner.schedulePoll(taskId, delayMs, key),
        close: () => inner.close(),
        async scheduleDelivery(job) {
          if (statusOf(job) === 'running' && !held) {
            held = job;
            releaseHeld = () => inner.scheduleDelivery(job);
            return;
          }
          return inner.scheduleDelivery(job);
        },
      }),
    });
    ark.scripts.push(['running', 'succeeded']);
    const id = await create(gateway);
    await until(() => delivered().includes('succeeded'), 'the terminal state');
    expect(held).toBeDefined();
    await releaseHeld!();
    await until(() => outcome !== undefined, 'the held job to run');
    expect(await outcome).toBe('resolved');
    expect(receiver.deliveries.map(statusOf)).toEqual(['succeeded']);
    expect(logs).toContainEqual(expect.objectContaining({ message: 'callback dropped: the task has moved past this state', fields: expect.objectContaining({ taskId: id, status: 'running' }) }));
  });
});
