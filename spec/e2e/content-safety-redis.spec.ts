// Strikes across instances (docs/content-safety.md "Strikes"): two gateways sharing the host's Redis count
// one tenant's strikes together, so a tenant refused on one instance is suspended on the other, and the
// host's onStrikeLimit clear() lifts it everywhere. Runs when REDIS_URL is set (.ci/run always sets it).
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import type { ModerationPolicy, StrikeLimitEvent } from '../../lib/index.js';
import { startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A, KEY_B, listen } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { removeRedisKeys } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.REDIS_URL;

describe.runIf(Boolean(REDIS_URL))('strikes across instances sharing Redis', () => {
  const prefix = `gwtest:strikes:${randomUUID()}:`;
  const clients: Redis[] = [];
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await removeRedisKeys(REDIS_URL!, [`${prefix}*`]);
  });

  it('two flagged requests on two instances suspend the tenant on both; clear() lifts it', async () => {
    const limits: StrikeLimitEvent[] = [];
    // each instance has its own client, as each process would
    const policyOn = (redis: Redis): ModerationPolicy => ({
      check: ({ text }) => (/forbidden/.test(text ?? '') ? { flagged: true, categories: ['violence'] } : { flagged: false, categories: [] }),
      maxStrikes: 2,
      strikeWindowSeconds: 600,
      redis,
      prefix,
    });
    const first = new Redis(REDIS_URL!);
    const second = new Redis(REDIS_URL!);
    clients.push(first, second);
    const gw = await gatewayWith({
      fakes: { images: startFakePaidImages },
      resolve: (_input, { images }) => ({ provider: 'openai', baseURL: images.openaiBaseURL, apiKey: 'sk-up' }),
      moderation: policyOn(first),
      onStrikeLimit: (event) => void limits.push(event),
    });
    const other = gw.variant({ moderation: policyOn(second) });
    const otherServer = await listen(other.app);
    try {
      const one = new OpenAI({ apiKey: KEY_A, baseURL: `${gw.url}/v1` });
      const two = new OpenAI({ apiKey: KEY_A, baseURL: `${otherServer.url}/v1` });
      const status = (work: Promise<unknown>) =>
        work.then(
          () => 200,
          (error: unknown) => (error as { status?: number }).status,
        );
      expect(await status(one.images.generate({ model: 'gpt-image-1', prompt: 'forbidden one' }))).toBe(400);
      expect(await status(two.images.generate({ model: 'gpt-image-1', prompt: 'forbidden two' }))).toBe(400);
      // suspended on both instances, for this tenant only
      const suspended = await two.images.generate({ model: 'gpt-image-1', prompt: 'a quiet lake' }).catch((error: unknown) => error);
      expect(suspended).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect((suspended as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'tenant_suspended' });
      expect(await status(one.images.generate({ model: 'gpt-image-1', prompt: 'a quiet lake' }))).toBe(403);
      const tenantB = new OpenAI({ apiKey: KEY_B, baseURL: `${gw.url}/v1` });
      expect(await status(tenantB.images.generate({ model: 'gpt-image-1', prompt: 'a quiet lake' }))).toBe(200);
      expect(limits.map((event) => [event.caller.id, event.strikes])).toEqual([['tenant-a', 2]]);
      expect(await first.pttl(`${prefix}tenant-a`)).toBeGreaterThan(0);
      await limits[0]!.clear();
      expect(await status(one.images.generate({ model: 'gpt-image-1', prompt: 'a quiet lake' }))).toBe(200);
      // the upstream made only what was allowed: tenant B's image and tenant A's after the clear
      expect(gw.fakes.images.started()).toBe(2);
    } finally {
      await otherServer.close();
    }
  });
});
