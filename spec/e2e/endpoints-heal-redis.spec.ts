// Endpoints that heal on a shared Redis (docs/video-tasks-and-callbacks.md "Endpoints that heal"): two
// gateway instances on one redisTaskStore and one BullMQ queue count the same endpoint's failures
// together, the operator's hook is told once though both see it fail, the other instance pauses new
// deliveries, and enabling on one sends the paused from whichever instance runs the jobs. Runs when
// REDIS_URL is set, under a key prefix of its own.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointDisabledEvent } from '../../lib/index.js';
import { bullmqScheduler, redisTaskStore } from '../../lib/redis.js';
import { OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { removeRedisKeys } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.REDIS_URL;

describe.runIf(Boolean(REDIS_URL))('endpoints that heal on Redis', () => {
  let client: Redis;
  const prefix = `gw-test:${randomUUID()}:`;
  const bullPrefix = `gw-test-bull:${randomUUID()}`;

  beforeAll(() => {
    client = new Redis(REDIS_URL!);
  });
  afterAll(async () => {
    await removeRedisKeys(REDIS_URL!, [`${prefix}*`, `${bullPrefix}*`]);
    client.disconnect();
  });

  it('two instances: disabled once (one hook call), paused on the other, enabled on one, the paused sent once each', async () => {
    let down = true;
    const receiver = await startFakeUpstream((_req, res) => {
      res.writeHead(down ? 503 : 204);
      res.end();
    });
    try {
      const events: EndpointDisabledEvent[] = [];
      const store = redisTaskStore({ client, prefix });
      const options = () => ({
        store,
        deliveries: { disableAfter: { attempts: 3 } },
        onEndpointDisabled: (event: EndpointDisabledEvent) => void events.push(event),
        callbacks: { allowLocal: true, retryBaseMs: 10, retryMaxMs: 20, maxAttempts: 2, scheduler: bullmqScheduler({ connection: client, prefix: bullPrefix, queueName: 'heal', concurrency: 4 }) },
      });
      const one = await gatewayWith({
        fakes: { images: startFakePaidImages },
        resolve: (_input, { images }) => ({ provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-2.0' }),
        ...options(),
      });
      const two = one.variant(options());
      const url = `${receiver.origin}/hook?sig=abc`;
      const submit = async (app: typeof one.app): Promise<string> => {
        const res = await request(app)
          .post(OPENAI_IMAGES)
          .set('Authorization', `Bearer ${KEY_A}`)
          .set('Prefer', 'respond-async')
          .send({ model: 'x-image-2.0', prompt: 'a lighthouse', callback_url: url });
        expect(res.status).toBe(202);
        return res.body.id as string;
      };
      const states = async (taskId: string): Promise<string[]> => (await one.router.deliveries.list({ taskId })).data.map((delivery) => delivery.state);

      // both instances' tasks fail against the same endpoint, until it is disabled
      for (let i = 0; events.length === 0 && i < 6; i += 1) {
        const taskId = await submit(i % 2 === 0 ? one.app : two.app);
        await expect.poll(async () => (await states(taskId)).length === 2 && !(await states(taskId)).includes('pending'), { timeout: 20_000, interval: 50 }).toBe(true);
      }
      await expect.poll(() => events.length, { timeout: 5_000 }).toBe(1);
      expect(events[0]).toMatchObject({ url: `${receiver.origin}/hook`, tenant: 'tenant-a', reason: 'attempts' });

      // up again, but disabled: the other instance pauses the new task's states
      down = false;
      const before = receiver.requests.length;
      const pausedTask = await submit(two.app);
      await expect.poll(() => states(pausedTask), { timeout: 10_000 }).toStrictEqual(['paused', 'paused']);
      expect(receiver.requests.length).toBe(before);

      const enabled = await one.router.deliveries.enable(url, { tenant: 'tenant-a' });
      expect(enabled).toMatchObject({ url: `${receiver.origin}/hook`, enabled: 1 });
      expect(enabled.queued).toBeGreaterThanOrEqual(2);
      await expect.poll(() => receiver.requests.length - before, { timeout: 20_000 }).toBe(enabled.queued);
      const ids = receiver.requests.slice(before).map((req) => req.headers['webhook-id']);
      expect(new Set(ids).size).toBe(ids.length);
      await expect.poll(() => states(pausedTask), { timeout: 10_000 }).toStrictEqual(['delivered', 'delivered']);
      // the other instance sees it enabled: nothing more to do
      expect(await two.router.deliveries.enable(url, { tenant: 'tenant-a' })).toStrictEqual({ url: `${receiver.origin}/hook`, enabled: 0, queued: 0 });
      expect(events).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
