// An image task on Replicate's own prediction, across gateway instances on one Redis (redisTaskStore +
// bullmqScheduler, docs/providers/replicate.md "Image tasks"): the instance that created the prediction
// stops while it runs; another goes on reading it by id to its image, and no prediction is created
// again. Runs when REDIS_URL is set (.ci/run always sets it).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bullmqScheduler, redisTaskStore } from '../../lib/redis.js';
import { type FakeReplicate, REPLICATE_TOKEN, startFakeReplicate } from '../helpers/fake-replicate.js';
import { KEY_A, type TestGateway, createTestGateway } from '../helpers/gateway-app.js';
import { removeRedisKeys } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.REDIS_URL;
const MODEL = 'black-forest-labs/flux-kontext-pro';

describe.runIf(Boolean(REDIS_URL))('Replicate image tasks across instances sharing Redis', () => {
  let replicate: FakeReplicate;
  const namespace = `gw-rep-${randomBytes(4).toString('hex')}`;
  const running: Array<{ gateway: TestGateway; client: Redis }> = [];

  const instance = (): TestGateway => {
    const client = new Redis(REDIS_URL!);
    const gateway = createTestGateway({
      store: redisTaskStore({ client, prefix: `${namespace}:` }),
      callbacks: { scheduler: bullmqScheduler({ connection: client, queueName: namespace, prefix: 'gwtest', lockDurationMs: 1_500, stalledIntervalMs: 500 }), pollIntervalsMs: { image: [1000] } },
      resolveUpstream: ({ model }) => ({ provider: 'replicate', baseURL: replicate.baseURL, apiKey: REPLICATE_TOKEN, model }),
    });
    running.push({ gateway, client });
    return gateway;
  };
  const stop = async (gateway: TestGateway): Promise<void> => {
    const index = running.findIndex((item) => item.gateway === gateway);
    const [stopped] = running.splice(index, 1);
    await gateway.close();
    stopped?.client.disconnect();
  };

  beforeAll(async () => {
    replicate = await startFakeReplicate();
  });
  afterEach(async () => {
    for (const { gateway } of [...running]) await stop(gateway);
    await removeRedisKeys(REDIS_URL!, [`${namespace}:*`, `gwtest:${namespace}:*`]);
  });
  afterAll(async () => {
    await replicate.close();
  });

  it('the instance that created the prediction stops; another reads it by id to its image, and it was created once', async () => {
    const release = replicate.hold();
    try {
      const one = instance();
      const submitted = await request(one.app)
        .post('/v1/images/generations')
        .set('Authorization', `Bearer ${KEY_A}`)
        .set('Prefer', 'respond-async')
        .send({ model: MODEL, prompt: 'a resumed harbour' });
      expect(submitted.status).toBe(202);
      // the prediction is created and has been read once: its id is recorded, its reading scheduled
      await expect.poll(() => replicate.polls().length, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0);
      await stop(one);
      const polledBefore = replicate.polls().length;
      const two = instance();
      release();
      let task: Record<string, unknown> = {};
      await expect
        .poll(
          async () => {
            task = (
              await request(two.app)
                .get(`/v1/images/tasks/${String(submitted.body.id)}`)
                .set('Authorization', `Bearer ${KEY_A}`)
            ).body as Record<string, unknown>;
            return task.status;
          },
          { timeout: 20_000, interval: 100 },
        )
        .toBe('succeeded');
      expect(replicate.polls().length).toBeGreaterThan(polledBefore);
      const url = String((task.result as { data: Array<{ url: string }> }).data[0]!.url);
      expect(url).toMatch(new RegExp(`^${replicate.origin}/files/`));
      expect(replicate.created()).toBe(1);
      expect(replicate.creates()[0]!.headers.prefer).toBeUndefined();
    } finally {
      release();
    }
  }, 40_000);
});
