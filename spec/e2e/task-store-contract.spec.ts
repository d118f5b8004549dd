// The TaskStore contract (lib/testing/task-store-contract.ts, exported to hosts as express-image-gateway/testing)
// run against every store: memoryTaskStore always, redisTaskStore against a real Redis when REDIS_URL is set,
// plus what only Redis has (keys, TTLs, scripts, two instances). Each Redis test gets its own key
// prefix and deletes its keys afterwards, so runs never see each other's records.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DeliveryRecord, GatewayConfigError, memoryTaskStore } from '../../lib/index.js';
import { redisTaskStore } from '../../lib/redis.js';
import { describeTaskStoreContract, sampleResult, sampleTask } from '../../lib/testing/index.js';

const REDIS_URL = process.env.REDIS_URL;
const THIRTY_DAYS = 30 * 24 * 60 * 60;
const test = { describe, it, expect, beforeEach };

describeTaskStoreContract(test, 'memoryTaskStore', () => memoryTaskStore());

// a host's own store may leave the delivery methods out: the contract holds without them
describeTaskStoreContract(test, 'a store without the delivery methods', () => {
  const { createDelivery: _c, getDelivery: _g, updateDelivery: _u, listDeliveries: _l, ...rest } = memoryTaskStore();
  return rest;
});

const delivery = (owner: string, createdAt: number): DeliveryRecord => ({
  id: `evt_${randomUUID()}`,
  taskId: `task-${randomUUID()}`,
  owner,
  event: 'succeeded',
  url: 'https://host.example/hook',
  body: '{}',
  state: 'pending',
  createdAt,
  expiresAt: createdAt + 86_400_000,
  attempts: [],
});

describe('memoryTaskStore delivery log', () => {
  it('keeps at most maxEntries deliveries, forgetting the oldest first', async () => {
    const store = memoryTaskStore();
    const owner = `owner-${randomUUID()}`;
    const now = Date.now();
    const made = Array.from({ length: 5 }, (_, i) => delivery(owner, now + i));
    for (const record of made) await store.createDelivery!(record, { maxEntries: 3 });
    expect(await store.getDelivery!(made[1]!.id)).toBeUndefined();
    const page = await store.listDeliveries!({ owner, limit: 10 });
    expect(page.deliveries.map((record) => record.id)).toStrictEqual([made[4]!.id, made[3]!.id, made[2]!.id]);
  });
});

describe.runIf(Boolean(REDIS_URL))('redisTaskStore (REDIS_URL)', () => {
  const clients: Redis[] = [];
  const connect = (): Redis => {
    const client = new Redis(REDIS_URL!);
    clients.push(client);
    return client;
  };
  let client: Redis;
  let prefix: string;

  // clients are made here, not at collection, so a run without REDIS_URL never opens a connection
  beforeAll(() => {
    client = connect();
  });
  beforeEach(() => {
    prefix = `gw-test:${randomUUID()}:`;
  });
  afterEach(async () => {
    await deleteKeys(client, `${prefix}*`);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()));
  });

  describeTaskStoreContract(test, 'contract', () => redisTaskStore({ client, prefix }));

  it('keys are <prefix>task:<id> and <prefix>asset:<id>, prefix gw: by default', async () => {
    const id = `task-${randomUUID()}`;
    try {
      await redisTaskStore({ client }).createTask(sampleTask({ id }));
      await redisTaskStore({ client }).putAsset({ id, owner: 'tenant-a', createdAt: 1 });
      expect(JSON.parse((await client.get(`gw:task:${id}`))!)).toMatchObject({ id, version: 1 });
      expect(JSON.parse((await client.get(`gw:asset:${id}`))!)).toStrictEqual({ id, owner: 'tenant-a', createdAt: 1 });
    } finally {
      await client.del(`gw:task:${id}`, `gw:asset:${id}`);
    }
  });

  it('created tasks expire after 30 days by default, and an update keeps the TTL', async () => {
    const store = redisTaskStore({ client, prefix });
    const record = sampleTask();
    await store.createTask(record);
    await store.putAsset({ id: 'asset-1', owner: 'tenant-a', createdAt: 1 });
    const before = await client.ttl(`${prefix}task:${record.id}`);
    expect(before).toBeGreaterThan(THIRTY_DAYS - 60);
    expect(before).toBeLessThanOrEqual(THIRTY_DAYS);

    expect(await store.updateTask(record.id, 1, { status: 'running' })).toBeDefined();
    const after = await client.ttl(`${prefix}task:${record.id}`);
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThanOrEqual(before);
  });

  it('taskTtlSeconds sets the TTL; 0 means no expiry, also after an update', async () => {
    const short = redisTaskStore({ client, prefix: `${prefix}short:`, taskTtlSeconds: 120 });
    const shortTask = sampleTask();
    await short.createTask(shortTask);
    await short.putAsset({ id: 'a', owner: 'tenant-a', createdAt: 1 });
    await short.updateTask(shortTask.id, 1, { status: 'running' });
    expect(await client.ttl(`${prefix}short:task:${shortTask.id}`)).toBeGreaterThan(100);
    expect(await client.ttl(`${prefix}short:task:${shortTask.id}`)).toBeLessThanOrEqual(120);
    // taskTtlSeconds is for tasks only: an asset record is ownership (assetTtlSeconds)
    expect(await client.ttl(`${prefix}short:asset:a`)).toBe(-1);

    const forever = redisTaskStore({ client, prefix, taskTtlSeconds: 0 });
    const record = sampleTask();
    await forever.createTask(record);
    await forever.putAsset({ id: 'a', owner: 'tenant-a', createdAt: 1 });
    expect(await client.ttl(`${prefix}task:${record.id}`)).toBe(-1);
    expect(await client.ttl(`${prefix}asset:a`)).toBe(-1);
    await forever.updateTask(record.id, 1, { status: 'running' });
    expect(await client.ttl(`${prefix}task:${record.id}`)).toBe(-1);
  });

  // a forgotten asset record would let another tenant reference the asset as the operator's
  // (allow.operatorAssets), so asset records never expire unless the host says so
  it('asset records have no TTL by default; assetTtlSeconds sets one, and a re-record by the owner keeps it set', async () => {
    const store = redisTaskStore({ client, prefix });
    await store.putAsset({ id: 'asset-1', owner: 'tenant-a', createdAt: 1 });
    expect(await client.ttl(`${prefix}asset:asset-1`)).toBe(-1);

    const expiring = redisTaskStore({ client, prefix: `${prefix}ttl:`, assetTtlSeconds: 3600 });
    await expiring.putAsset({ id: 'asset-1', owner: 'tenant-a', createdAt: 1 });
    const ttl = await client.ttl(`${prefix}ttl:asset:asset-1`);
    expect(ttl).toBeGreaterThan(3500);
    expect(ttl).toBeLessThanOrEqual(3600);
    await expiring.putAsset({ id: 'asset-1', owner: 'tenant-a', createdAt: 2 });
    expect(await client.ttl(`${prefix}ttl:asset:asset-1`)).toBeGreaterThan(3500);
  });

  it('a bad taskTtlSeconds, assetTtlSeconds or a missing client fails at creation with a GatewayConfigError', () => {
    for (const taskTtlSeconds of [-1, 1.5, Number.NaN]) expect(() => redisTaskStore({ client, taskTtlSeconds })).toThrow(GatewayConfigError);
    for (const assetTtlSeconds of [-1, 1.5, Number.NaN, '60' as unknown as number]) expect(() => redisTaskStore({ client, assetTtlSeconds })).toThrow(GatewayConfigError);
    expect(() => redisTaskStore({} as { client: Redis })).toThrow(GatewayConfigError);
  });

  it('updates still work after the server forgets its scripts (NOSCRIPT -> EVAL)', async () => {
    const store = redisTaskStore({ client, prefix });
    const record = sampleTask();
    await store.createTask(record);
    expect(await store.updateTask(record.id, 1, { status: 'running' })).toBeDefined();
    await client.script('FLUSH');
    expect((await store.updateTask(record.id, 2, { status: 'succeeded' }))?.version).toBe(3);
    expect(await store.updateTask(record.id, 2, { status: 'failed' })).toBeUndefined();
  });

  it('two instances with one prefix and separate clients see each other and race safely', async () => {
    const a = redisTaskStore({ client: connect(), prefix });
    const b = redisTaskStore({ client: connect(), prefix });
    const record = sampleTask({ result: sampleResult() });

    await a.createTask(record);
    expect(await b.getTask(record.id)).toStrictEqual(record);
    await expect(b.createTask(record)).rejects.toThrow();

    const updated = await b.updateTask(record.id, 1, { status: 'running' });
    expect(await a.getTask(record.id)).toStrictEqual(updated);
    expect(await a.updateTask(record.id, 1, { status: 'failed' })).toBeUndefined();

    // the race that matters: both instances poll the same task and try the same transition
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).updateTask(record.id, 2, { status: `succeeded-${i}` })));
    const winners = results.filter((result) => result !== undefined);
    expect(winners).toHaveLength(1);
    expect(await a.getTask(record.id)).toStrictEqual(winners[0]);
    expect(await b.getTask(record.id)).toStrictEqual(winners[0]);

    await b.putAsset({ id: 'asset-x', owner: 'tenant-b', createdAt: 2 });
    expect(await a.getAsset('asset-x')).toStrictEqual({ id: 'asset-x', owner: 'tenant-b', createdAt: 2 });
  });

  it('a delivery is three keys under the prefix that expire at its retention, and two instances share the log', async () => {
    const a = redisTaskStore({ client: connect(), prefix });
    const b = redisTaskStore({ client: connect(), prefix });
    const record = delivery(`owner-${randomUUID()}`, Date.now());
    expect(await a.createDelivery!(record, { maxEntries: 1 })).toBe(true);
    await b.updateDelivery!(record.id, { attempt: { at: record.createdAt, statusCode: 500, durationMs: 1 } });
    await a.updateDelivery!(record.id, { attempt: { at: record.createdAt + 1, statusCode: 204, durationMs: 1 }, state: 'delivered' });
    expect((await b.getDelivery!(record.id))?.attempts.map((attempt) => attempt.statusCode)).toStrictEqual([500, 204]);
    expect((await b.listDeliveries!({ owner: record.owner, limit: 5 })).deliveries).toStrictEqual([await a.getDelivery!(record.id)]);
    for (const key of [`${prefix}delivery:${record.id}`, `${prefix}delivery-state:${record.id}`, `${prefix}delivery-attempts:${record.id}`]) {
      const ttl = await client.pttl(key);
      expect(ttl).toBeGreaterThan(86_400_000 - 60_000);
      expect(ttl).toBeLessThanOrEqual(86_400_000);
    }
    // Redis keeps every delivery for its retention: maxEntries is the memory store's
    const second = delivery(record.owner, Date.now());
    await a.createDelivery!(second, { maxEntries: 1 });
    expect(await b.getDelivery!(record.id)).toBeDefined();
    await client.script('FLUSH');
    expect((await a.listDeliveries!({ owner: record.owner, limit: 5 })).deliveries.map((found) => found.id)).toStrictEqual([second.id, record.id]);
  });

  it('two instances recording one asset id for two tenants: the first owner stays, whichever instance asks', async () => {
    const a = redisTaskStore({ client: connect(), prefix });
    const b = redisTaskStore({ client: connect(), prefix });
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).putAsset({ id: 'asset-race', owner: `tenant-${i}`, createdAt: i })));
    const winner = (await a.getAsset('asset-race'))!;
    expect(await b.getAsset('asset-race')).toStrictEqual(winner);
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? b : a).putAsset({ id: 'asset-race', owner: `tenant-${i}-late`, createdAt: 99 })));
    expect(await b.getAsset('asset-race')).toStrictEqual(winner);
    expect(await client.ttl(`${prefix}asset:asset-race`)).toBe(-1);
  });
});

async function deleteKeys(client: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
}
