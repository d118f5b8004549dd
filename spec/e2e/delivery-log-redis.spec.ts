// The delivery log shared by gateway instances on one Redis (docs/video-tasks-and-callbacks.md
// "Delivery log"): redisTaskStore keeps it, bullmqScheduler runs deliveries and replays. A task's
// deliveries recorded by one instance are read and replayed by another; a replay is a BullMQ job of its
// own beside the delivery it repeats. Runs when REDIS_URL is set, each run under its own key prefix.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bullmqScheduler, redisTaskStore } from '../../lib/redis.js';
import { OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { removeRedisKeys } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.REDIS_URL;
const SECRET = 'whsec_' + Buffer.from('delivery-log-redis-secret-0123456789').toString('base64');

describe.runIf(Boolean(REDIS_URL))('the delivery log on Redis', () => {
  let client: Redis;
  const prefix = `gw-test:${randomUUID()}:`;
  const bullPrefix = `gw-test-bull:${randomUUID()}`;

  beforeAll(() => {
    client = new Redis(REDIS_URL!);
  });
  afterAll(async () => {
    await removeRedisKeys(REDIS_URL!, [`${prefix}*`, `${bullPrefix}*`]);
    await client.quit();
  });

  it("one instance records a task's deliveries; another lists them and replays the dead letters through BullMQ, each once", async () => {
    let down = true;
    const receiver = await startFakeUpstream((_req, res) => {
      res.writeHead(down ? 503 : 204);
      res.end();
    });
    try {
      const store = redisTaskStore({ client, prefix });
      const callbacks = (name: string) => ({
        signingSecret: SECRET,
        allowLocal: true,
        retryBaseMs: 10,
        retryMaxMs: 40,
        maxAttempts: 2,
        scheduler: bullmqScheduler({ connection: client, prefix: bullPrefix, queueName: `deliveries-${name}`, concurrency: 4 }),
      });
      const one = await gatewayWith({
        fakes: { images: startFakePaidImages },
        resolve: (_input, { images }) => ({ provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-2.0' }),
        store,
        callbacks: callbacks('shared'),
      });
      const two = one.variant({ store, callbacks: callbacks('shared') });
      const created = await request(one.app)
        .post(OPENAI_IMAGES)
        .set('Authorization', `Bearer ${KEY_A}`)
        .set('Prefer', 'respond-async')
        .send({ model: 'x-image-2.0', prompt: 'a lighthouse', callback_url: `${receiver.origin}/hook?sig=abc` });
      expect(created.status).toBe(202);
      const taskId = created.body.id as string;

      // the terminal state's delivery runs out of attempts: a dead letter, seen from the other instance
      let failed: Array<{ id: string; url: string }> = [];
      await expect
        .poll(
          async () => {
            const res = await request(two.app).get(`/v1/deliveries?task_id=${taskId}&state=failed`).set('Authorization', `Bearer ${KEY_A}`);
            failed = res.body.data as typeof failed;
            return failed.some((delivery) => (delivery as unknown as { event: string }).event === 'succeeded');
          },
          { timeout: 20_000, interval: 50 },
        )
        .toBe(true);
      expect(failed[0]!.url).toBe(`${receiver.origin}/hook`);
      expect((await request(two.app).get(`/v1/deliveries/${failed[0]!.id}`).set('Authorization', `Bearer ${KEY_B}`)).status).toBe(404);
      const before = receiver.requests.length;

      down = false;
      const replay = await request(two.app).post('/v1/deliveries/replay').set('Authorization', `Bearer ${KEY_A}`).send({ state: 'failed' });
      expect(replay.status).toBe(202);
      expect(replay.body.queued).toBe(failed.length);
      await expect.poll(() => receiver.requests.length - before, { timeout: 20_000 }).toBe(failed.length);
      const replayed = receiver.requests.slice(before);
      expect(replayed.every((req) => req.headers['webhook-replay'] === 'true')).toBe(true);
      expect(new Set(replayed.map((req) => req.headers['webhook-id']))).toStrictEqual(new Set(failed.map((delivery) => delivery.id)));
      for (const delivery of failed) {
        await expect.poll(async () => (await one.router.deliveries.get(delivery.id))?.state, { timeout: 10_000 }).toBe('delivered');
        expect((await one.router.deliveries.get(delivery.id))!.attempts.at(-1)).toMatchObject({ status_code: 204, replay: true });
      }
    } finally {
      await receiver.close();
    }
  });
});
