// The endpoint methods of both shipped task stores (docs/video-tasks-and-callbacks.md "Endpoints that
// heal"): failures in a row or failing time disable an endpoint, exactly one of many concurrent attempts
// says it disabled it, one enable of many finds it disabled, a disabled one is forgotten with its paused
// deliveries, and tenants never share an endpoint. Redis
// runs when REDIS_URL is set, under a key prefix of its own.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { type EndpointHealthStore, type EndpointRule, memoryTaskStore } from '../../lib/index.js';
import { redisTaskStore } from '../../lib/redis.js';
import { removeRedisKeys } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.REDIS_URL;
const HOUR = 3_600_000;
const RULE: EndpointRule = { attempts: 5, failingMs: HOUR, keepMs: 60_000 };

function contract(name: string, make: () => EndpointHealthStore): void {
  describe(name, () => {
    const endpoint = () => ({ tenant: `tenant-${randomUUID()}`, url: 'https://hooks.example.com/video' });

    it('five failures in a row disable it; a success before resets the count', async () => {
      const store = make();
      const target = endpoint();
      const t0 = Date.now();
      for (let i = 0; i < 4; i += 1) expect((await store.recordEndpointAttempt(target, { ok: false, at: t0 + i }, RULE)).disabledNow).toBe(false);
      expect((await store.recordEndpointAttempt(target, { ok: true, at: t0 + 5 }, RULE)).health).toMatchObject({ failures: 0, lastSuccessAt: t0 + 5, disabled: false });
      for (let i = 0; i < 4; i += 1) await store.recordEndpointAttempt(target, { ok: false, at: t0 + 10 + i }, RULE);
      const fifth = await store.recordEndpointAttempt(target, { ok: false, at: t0 + 20 }, RULE);
      expect(fifth).toMatchObject({ disabledNow: true, health: { disabled: true, reason: 'attempts', disabledAt: t0 + 20, failures: 5, failingSince: t0 + 10, lastSuccessAt: t0 + 5 } });
      expect((await store.recordEndpointAttempt(target, { ok: false, at: t0 + 21 }, RULE)).disabledNow).toBe(false);
      expect(await store.getEndpoint(target)).toMatchObject({ disabled: true });
      expect(await store.getEndpoint({ ...target, tenant: 'someone-else' })).toBeUndefined();
      expect((await store.listDisabledEndpoints(target.tenant)).map((health) => health.url)).toStrictEqual([target.url]);
    });

    it('failing for an hour with no success disables it, whatever the count', async () => {
      const store = make();
      const target = endpoint();
      const t0 = Date.now();
      expect((await store.recordEndpointAttempt(target, { ok: false, at: t0 }, RULE)).disabledNow).toBe(false);
      expect((await store.recordEndpointAttempt(target, { ok: false, at: t0 + HOUR - 1 }, RULE)).disabledNow).toBe(false);
      expect(await store.recordEndpointAttempt(target, { ok: false, at: t0 + HOUR }, RULE)).toMatchObject({ disabledNow: true, health: { reason: 'hours', failures: 3 } });
    });

    it('a disabled endpoint is forgotten keepMs after its last attempt, as its paused deliveries are: healthy again, and listed no more', async () => {
      const store = make();
      const target = endpoint();
      const brief: EndpointRule = { ...RULE, attempts: 1, keepMs: 50 };
      expect((await store.recordEndpointAttempt(target, { ok: false, at: Date.now() }, brief)).disabledNow).toBe(true);
      expect(await store.listDisabledEndpoints(target.tenant)).toHaveLength(1);
      await expect.poll(() => store.getEndpoint(target), { timeout: 5_000, interval: 20 }).toBeUndefined();
      expect(await store.listDisabledEndpoints(target.tenant)).toStrictEqual([]);
    });

    it('of 20 concurrent failing attempts past the bound one disables it; of 5 concurrent enables one finds it disabled', async () => {
      const store = make();
      const target = endpoint();
      const at = Date.now();
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => store.recordEndpointAttempt(target, { ok: false, at }, RULE)));
      expect(outcomes.filter((outcome) => outcome.disabledNow)).toHaveLength(1);
      const enables = await Promise.all(Array.from({ length: 5 }, () => store.enableEndpoint(target, RULE)));
      expect(enables.filter(Boolean)).toHaveLength(1);
      expect(await store.getEndpoint(target)).toMatchObject({ disabled: false, failures: 0 });
      expect(await store.listDisabledEndpoints(target.tenant)).toStrictEqual([]);
    });
  });
}

contract('memoryTaskStore', () => memoryTaskStore() as EndpointHealthStore);

describe.runIf(Boolean(REDIS_URL))('on Redis', () => {
  const client = REDIS_URL ? new Redis(REDIS_URL) : undefined;
  const prefix = `gw-test:${randomUUID()}:`;
  afterAll(async () => {
    await removeRedisKeys(REDIS_URL!, [`${prefix}*`]);
    client?.disconnect();
  });
  contract('redisTaskStore', () => redisTaskStore({ client: client!, prefix }) as EndpointHealthStore);
});
