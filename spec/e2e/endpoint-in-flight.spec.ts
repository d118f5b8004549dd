// One hanging endpoint delays no other (docs/video-tasks-and-callbacks.md "Endpoints that heal"): many
// deliveries to a receiver that never answers are queued first, with fewer scheduler workers than
// deliveries; at most `deliveries.perEndpointInFlight` of them hold a worker, the rest wait outside the
// scheduler's turn, and a healthy receiver's callback still arrives within a second. With
// memoryScheduler, and with bullmqScheduler over Redis when REDIS_URL is set.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { type GatewayOptions, type TaskStore, memoryScheduler, memoryTaskStore } from '../../lib/index.js';
import { bullmqScheduler, redisTaskStore } from '../../lib/redis.js';
import { OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { removeRedisKeys } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.REDIS_URL;
const HANGING = 40;
const WORKERS = 4;

/** Dead letters to the hanging receiver, for the operator's bulk replay to queue ahead of everything else. */
async function deadLetters(store: TaskStore, url: string): Promise<void> {
  const now = Date.now();
  for (let i = 0; i < HANGING; i += 1) {
    await store.createDelivery!(
      {
        id: `evt_hang_${randomUUID()}`,
        taskId: `imgtask_hang_${i}`,
        owner: 'tenant-a',
        event: 'succeeded',
        url,
        body: `{"id":"imgtask_hang_${i}","status":"succeeded"}`,
        state: 'failed',
        createdAt: now - HANGING + i,
        expiresAt: now + 3_600_000,
        attempts: [],
      },
      { maxEntries: 10_000 },
    );
  }
}

async function walk(store: TaskStore, scheduler: GatewayOptions['callbacks']): Promise<void> {
  let hangingOpen = 0;
  let hangingMost = 0;
  // never answers: each attempt holds its connection for the whole timeout
  const hanging = await startFakeUpstream(() => {
    hangingOpen += 1;
    hangingMost = Math.max(hangingMost, hangingOpen);
  });
  const healthy = await startFakeUpstream((_req, res) => {
    res.writeHead(204);
    res.end();
  });
  try {
    await deadLetters(store, `${hanging.origin}/hook`);
    const gw = await gatewayWith({
      fakes: { images: startFakePaidImages },
      resolve: (_input, { images }) => ({ provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-2.0' }),
      store,
      callbacks: { allowLocal: true, timeoutMs: 20_000, maxAttempts: 1, ...scheduler },
    });
    expect(await gw.router.deliveries.replayAll({ tenant: 'tenant-a', state: 'failed' })).toStrictEqual({ queued: HANGING });
    // the hanging receiver holds what it may before the healthy task is created
    await expect.poll(() => hanging.requests.length, { timeout: 5_000 }).toBe(2);

    const started = performance.now();
    const created = await request(gw.app)
      .post(OPENAI_IMAGES)
      .set('Authorization', `Bearer ${KEY_A}`)
      .set('Prefer', 'respond-async')
      .send({ model: 'x-image-2.0', prompt: 'a lighthouse', callback_url: `${healthy.origin}/hook` });
    expect(created.status).toBe(202);
    await expect.poll(() => healthy.requests.length, { timeout: 5_000, interval: 10 }).toBeGreaterThan(0);
    const waitedMs = performance.now() - started;
    // a generous bound: the attempts to the hanging receiver last 20 s each
    expect(waitedMs).toBeLessThan(1_000);
    expect(hangingMost).toBe(2);
    expect(hanging.requests).toHaveLength(2);
  } finally {
    await healthy.close();
    await hanging.close();
  }
}

describe('one hanging endpoint delays no other', () => {
  it(`memoryScheduler with ${WORKERS} workers: ${HANGING} deliveries to a receiver that never answers, then a healthy one's callback within 1 s`, async () => {
    await walk(memoryTaskStore(), { scheduler: memoryScheduler({ deliveryConcurrency: WORKERS }) });
  });

  it.runIf(Boolean(REDIS_URL))(
    `bullmqScheduler with ${WORKERS} workers over Redis: the same`,
    async () => {
      const client = new Redis(REDIS_URL!);
      const prefix = `gw-test:${randomUUID()}:`;
      const bullPrefix = `gw-test-bull:${randomUUID()}`;
      try {
        await walk(redisTaskStore({ client, prefix }), { scheduler: bullmqScheduler({ connection: client, prefix: bullPrefix, concurrency: WORKERS }) });
      } finally {
        await removeRedisKeys(REDIS_URL!, [`${prefix}*`, `${bullPrefix}*`]);
        client.disconnect();
      }
    },
    30_000,
  );
});
