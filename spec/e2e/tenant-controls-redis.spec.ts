// Tenant controls across gateway instances sharing one Redis (docs/tenancy-and-billing.md): concurrent
// retries of one Idempotency-Key on two instances reach the upstream once (images and video tasks);
// quotas on two instances draw from one budget; a Redis outage is answered as configured (refuse: 503,
// allow: run uncounted with a warning; idempotency: 503); a video task's terminal state is reported by
// exactly one usage event, whichever instance sees it, and frees its concurrent-task slot once.
// Runs when REDIS_URL is set (.ci/run always sets it); outages use a private redis-server.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { QuotaOptions } from '../../lib/index.js';
import { bullmqScheduler, redisIdempotencyStore, redisTaskStore } from '../../lib/redis.js';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/callback-receiver.js';
import { type FakeArk, startFakeArk } from '../helpers/fake-ark.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { KEY_A, type TestGateway, createTestGateway } from '../helpers/gateway-app.js';
import { type RedisServerProcess, startRedisServerProcess } from '../helpers/redis-server-process.js';
import { removeRedisKeys } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.REDIS_URL;
const GENERATIONS = '/v1/images/generations';
const TASKS = '/api/v3/contents/generations/tasks';
const image = { model: 'dall-e-3', prompt: 'a red fox' };
const video = (extra: Record<string, unknown> = {}) => ({ model: 'seedance', content: [{ type: 'text', text: 'a cat' }], duration: 5, ...extra });

interface Instance extends TestGateway {
  client: Redis;
  warnings: string[];
}

describe.runIf(Boolean(REDIS_URL))('tenant controls across instances sharing Redis', () => {
  let openai: FakeOpenAI;
  let ark: FakeArk;
  let receiver: CallbackReceiver;
  let namespace = '';
  const running: Instance[] = [];

  const instance = (options: { url?: string; quotas?: Omit<QuotaOptions, 'redis' | 'prefix'>; scheduler?: boolean } = {}): Instance => {
    const client = new Redis(options.url ?? REDIS_URL!, { maxRetriesPerRequest: 1 });
    // an outage must not print ioredis's unhandled error events
    client.on('error', () => {});
    const warnings: string[] = [];
    const gateway = createTestGateway({
      store: redisTaskStore({ client, prefix: `${namespace}:` }),
      idempotency: { store: redisIdempotencyStore({ client, prefix: `${namespace}:idem:` }) },
      ...(options.quotas ? { tenancy: { quotas: { ...options.quotas, redis: client, prefix: `${namespace}:quota:` } } } : {}),
      resolveUpstream: ({ route }) => (route === 'video.tasks' ? { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-key' } : { provider: 'openai', baseURL: openai.baseURL, apiKey: 'oa-key' }),
      callbacks: {
        allowLocal: true,
        pollIntervalsMs: { video: [60] },
        retryBaseMs: 300,
        retryMaxMs: 600,
        ...(options.scheduler ? { scheduler: bullmqScheduler({ connection: client, queueName: namespace, prefix: 'gwtest', lockDurationMs: 1_500, stalledIntervalMs: 500 }) } : {}),
      },
      logger: { warn: (_fields, message) => warnings.push(message), info: () => {}, error: () => {} },
    });
    const started: Instance = {
      ...gateway,
      client,
      warnings,
      close: async () => {
        await gateway.close();
        client.disconnect();
      },
    };
    running.push(started);
    return started;
  };

  beforeAll(async () => {
    openai = await startFakeOpenAI();
    ark = await startFakeArk();
    receiver = await startCallbackReceiver();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((gw) => gw.close()));
    await removeRedisKeys(REDIS_URL!, [`${namespace}:*`, `gwtest:${namespace}:*`]);
    openai.requests.length = 0;
    ark.requests.length = 0;
    receiver.deliveries.length = 0;
  });
  afterAll(async () => {
    await openai.close();
    await ark.close();
    await receiver.close();
  });
  const fresh = (): void => {
    namespace = `gw-tc-${randomBytes(4).toString('hex')}`;
  };

  it('concurrent retries of one key on two instances: one upstream call, every other answer a 409 or the replay', async () => {
    fresh();
    const a = instance();
    const b = instance();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    openai.next(async (_request, res) => {
      await gate;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ created: 7, data: [{ url: 'https://cdn.openai.example/once.png' }] }));
    });
    const post = (gw: Instance) => request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'lost-answer-1').send(image);
    let settled = 0;
    const retries = [a, b, a, b, a, b, a, b].map((gw) =>
      post(gw).then((res) => {
        settled += 1;
        return res;
      }),
    );
    // the first holds the upstream; it is released only once every concurrent retry has its answer
    for (let round = 0; round < 1_000 && (openai.apiRequests().length === 0 || settled < 7); round += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(settled).toBe(7);
    release();
    const answers = await Promise.all(retries);
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(7);
    for (const gw of [a, b]) {
      const replay = await post(gw);
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(answers.find((res) => res.status === 200)!.text);
    }
    expect(openai.apiRequests()).toHaveLength(1);
  });

  it('a video create retried concurrently on two instances creates one Ark task; every success names it', async () => {
    fresh();
    const a = instance();
    const b = instance();
    const post = (gw: Instance) => request(gw.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'video-lost-1').send(video());
    const first = await Promise.all([a, b, a, b, a, b].map((gw) => post(gw).then((res) => res)));
    const later = await Promise.all([a, b].map((gw) => post(gw).then((res) => res)));
    const ids = new Set([...first, ...later].filter((res) => res.status === 200).map((res) => res.body.id as string));
    expect(ids.size).toBe(1);
    expect(later.every((res) => res.status === 200)).toBe(true);
    expect([...first, ...later].every((res) => res.status === 200 || res.status === 409)).toBe(true);
    expect(ark.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('quotas on two instances share one budget', async () => {
    fresh();
    const quotas = { limits: { requestsPerMinute: 3, imagesPerMinute: 10 } };
    const a = instance({ quotas });
    const b = instance({ quotas });
    const post = (gw: Instance) => request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).send(image);
    expect((await post(a)).status).toBe(200);
    expect((await post(b)).status).toBe(200);
    expect((await post(a)).status).toBe(200);
    const refused = [await post(b), await post(a)];
    expect(refused.map((res) => res.status)).toEqual([429, 429]);
    expect(refused[0]!.headers['ratelimit-policy']).toBe('"requests";q=3;w=60');
    expect(openai.apiRequests()).toHaveLength(3);
    expect(await b.router.quota({ id: 'tenant-a' })).toEqual([
      expect.objectContaining({ name: 'requests', limit: 3, remaining: 0 }),
      expect.objectContaining({ name: 'images', limit: 10, remaining: 7 }),
    ]);
  });

  it('exactly one usage event for a task terminal state seen by two instances and the callback poller; its slot freed once', async () => {
    fresh();
    const quotas = { limits: { concurrentVideoTasks: 1 } };
    const a = instance({ quotas, scheduler: true });
    const b = instance({ quotas, scheduler: true });
    ark.scripts.push(['running', 'succeeded']);
    const created = await request(a.app)
      .post(TASKS)
      .set('Authorization', `Bearer ${KEY_A}`)
      .send(video({ callback_url: receiver.url }));
    expect(created.status).toBe(200);
    expect((await request(b.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).send(video())).status).toBe(429);
    const query = (gw: Instance) => request(gw.app).get(`${TASKS}/${created.body.id}`).set('Authorization', `Bearer ${KEY_A}`);
    for (let round = 0; round < 100; round += 1) {
      const seen = await Promise.all([query(a), query(b), query(a), query(b)]);
      if (seen.every((res) => res.body.status === 'succeeded')) break;
    }
    const accepted = await receiver.accepted(1);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    // settle: a poll in flight on either instance has had time to land
    await new Promise((resolve) => setTimeout(resolve, 500));
    const terminal = [...a.usage, ...b.usage].filter((event) => event.task !== undefined);
    expect(terminal).toHaveLength(1);
    expect(terminal[0]).toMatchObject({ task: { id: created.body.id, status: 'succeeded' }, video: { seconds: 5 } });
    // the one slot came back exactly once: one task fits again, a second does not
    expect((await request(b.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).send(video())).status).toBe(200);
    expect((await request(a.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).send(video())).status).toBe(429);
  }, 30_000);

  describe('when Redis is down', () => {
    let redis: RedisServerProcess;
    beforeAll(async () => {
      redis = await startRedisServerProcess();
    });
    afterAll(async () => {
      await redis.close();
    });
    const ready = async (gw: Instance): Promise<void> => {
      for (let round = 0; round < 300 && gw.client.status !== 'ready'; round += 1) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(gw.client.status).toBe('ready');
    };

    it("whenRedisDown 'refuse' (the default): 503 quota_unavailable, no upstream call; served again once Redis is back", async () => {
      fresh();
      const gw = instance({ url: redis.url, quotas: { limits: { requestsPerMinute: 100 } } });
      await ready(gw);
      await redis.stop();
      const refused = await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).send(image);
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('quota_unavailable');
      expect(refused.headers['retry-after']).toBeDefined();
      expect(openai.apiRequests()).toHaveLength(0);
      await redis.start();
      await ready(gw);
      expect((await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).send(image)).status).toBe(200);
    });

    it("whenRedisDown 'allow': the request runs uncounted and a warning is logged", async () => {
      fresh();
      const gw = instance({ url: redis.url, quotas: { limits: { requestsPerMinute: 100 }, whenRedisDown: 'allow' } });
      await ready(gw);
      await redis.stop();
      try {
        const served = await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).send(image);
        expect(served.status).toBe(200);
        expect(gw.warnings.some((message) => message.includes('uncounted'))).toBe(true);
        expect(openai.apiRequests()).toHaveLength(1);
      } finally {
        await redis.start();
      }
    });

    it('an Idempotency-Key request is 503 idempotency_unavailable and runs nothing', async () => {
      fresh();
      const gw = instance({ url: redis.url });
      await ready(gw);
      await redis.stop();
      try {
        const refused = await request(gw.app).post(GENERATIONS).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'down-1').send(image);
        expect(refused.status).toBe(503);
        expect(refused.body.error.code).toBe('idempotency_unavailable');
        expect(openai.apiRequests()).toHaveLength(0);
      } finally {
        await redis.start();
      }
    });
  });
});
