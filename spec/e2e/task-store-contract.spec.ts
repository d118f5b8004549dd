// The TaskStore contract (lib/gateway/tasks/task-store.ts), one suite run against every store: memoryTaskStore
// always, redisTaskStore against a real Redis when REDIS_URL is set. Each Redis test gets its own key
// prefix and deletes its keys afterwards, so runs never see each other's records.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayConfigError, memoryTaskStore, redisTaskStore, type TaskRecord, type TaskStore } from '../../lib/index.js';

const REDIS_URL = process.env.REDIS_URL;
const THIRTY_DAYS = 30 * 24 * 60 * 60;

const makeTask = (overrides: Partial<TaskRecord> = {}): TaskRecord => ({
  id: `task-${randomUUID()}`,
  owner: 'tenant-a',
  model: 'seedance-1-0-pro',
  upstream: { provider: 'ark', baseURL: 'https://ark.cn-beijing.volces.com/api/v3', taskId: 'cgt-20250101-abc' },
  createdAt: 1779348818123,
  status: 'queued',
  callback: { url: 'https://host.example/hook', polls: 0, done: false },
  version: 1,
  ...overrides,
});

// what cjson would mangle if Redis re-encoded user data: empty containers, big and fractional numbers
const trickyResult = (): Record<string, unknown> => ({
  id: 'cgt-20250101-abc',
  status: 'succeeded',
  content: { video_url: 'https://cdn.example/v.mp4?sig=a%2Fb&x=1', last_frame_url: null },
  usage: { completion_tokens: 108900, total_tokens: 108900 },
  created_at: 1779348818,
  updated_at: 1779348818123,
  ratio: 0.5,
  negative: -3,
  zero: 0,
  seed: 9007199254740991,
  flags: { watermark: false, camera_fixed: true },
  empty: {},
  list: [],
  nested: [{}, [], [[]], { a: { b: { c: [1, '2', null, { d: {} }] } } }],
  prompt: '一只狐狸 🦊 в снегу, "quoted" \\ back\nslash',
  nothing: null,
});

function describeTaskStoreContract(name: string, makeStore: () => TaskStore): void {
  describe(name, () => {
    let store: TaskStore;
    beforeEach(() => {
      store = makeStore();
    });

    it('createTask then getTask returns an equal record at version 1', async () => {
      const record = makeTask({ version: 7 });
      await store.createTask(record);
      expect(await store.getTask(record.id)).toStrictEqual({ ...record, version: 1 });
    });

    it('getTask of an unknown id is undefined', async () => {
      expect(await store.getTask(`task-${randomUUID()}`)).toBeUndefined();
    });

    it('createTask of an existing id rejects and keeps the first record', async () => {
      const record = makeTask();
      await store.createTask(record);
      await expect(store.createTask({ ...record, owner: 'tenant-b' })).rejects.toThrow();
      expect(await store.getTask(record.id)).toStrictEqual(record);
    });

    it('hands out copies: mutating what went in or came out does not change the store', async () => {
      const record = makeTask({ result: { content: { video_url: 'https://cdn.example/a.mp4' } } });
      await store.createTask(record);
      record.status = 'mutated-input';
      (record.result as { content: { video_url: string } }).content.video_url = 'mutated';

      const got = (await store.getTask(record.id))!;
      got.status = 'mutated-output';
      got.upstream.taskId = 'mutated';
      got.callback!.polls = 99;

      const changes = { status: 'running', callback: { url: 'https://host.example/hook', polls: 1, done: false } };
      const updated = (await store.updateTask(record.id, 1, changes))!;
      changes.callback.polls = 42;
      updated.status = 'mutated-update';
      updated.callback!.done = true;

      expect(await store.getTask(record.id)).toStrictEqual({
        ...makeTask({ id: record.id, result: { content: { video_url: 'https://cdn.example/a.mp4' } } }),
        status: 'running',
        callback: { url: 'https://host.example/hook', polls: 1, done: false },
        version: 2,
      });
    });

    it('updateTask at the right version applies the changes, bumps the version and returns the record', async () => {
      const record = makeTask({ callback: { url: 'https://host.example/hook', notifiedStatus: 'queued', polls: 3, done: false } });
      await store.createTask(record);
      const callback = { url: 'https://host.example/hook', polls: 4, done: true };
      const updated = await store.updateTask(record.id, 1, { status: 'succeeded', result: { status: 'succeeded' }, callback });
      // shallow: callback is replaced whole (notifiedStatus gone), untouched fields stay
      const expected: TaskRecord = { ...record, status: 'succeeded', result: { status: 'succeeded' }, callback, version: 2 };
      expect(updated).toStrictEqual(expected);
      expect(await store.getTask(record.id)).toStrictEqual(expected);

      expect(await store.updateTask(record.id, 2, { status: 'expired' })).toStrictEqual({ ...expected, status: 'expired', version: 3 });
    });

    it('updateTask with a stale version returns undefined and changes nothing', async () => {
      const record = makeTask();
      await store.createTask(record);
      const first = await store.updateTask(record.id, 1, { status: 'running' });
      expect(first?.version).toBe(2);

      expect(await store.updateTask(record.id, 1, { status: 'failed', result: { error: 'late' } })).toBeUndefined();
      expect(await store.updateTask(record.id, 3, { status: 'failed' })).toBeUndefined();
      expect(await store.getTask(record.id)).toStrictEqual(first);
    });

    it('updateTask of an unknown id is undefined and creates nothing', async () => {
      const id = `task-${randomUUID()}`;
      expect(await store.updateTask(id, 1, { status: 'running' })).toBeUndefined();
      expect(await store.getTask(id)).toBeUndefined();
    });

    it('20 concurrent updates at one version: exactly one wins (two instances never both act on a transition)', async () => {
      const record = makeTask();
      await store.createTask(record);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.updateTask(record.id, 1, { status: `running-${i}` })));
      const winners = results.filter((result) => result !== undefined);
      expect(winners).toHaveLength(1);
      expect(winners[0]!.version).toBe(2);
      expect(await store.getTask(record.id)).toStrictEqual(winners[0]);
    });

    it('nested results round-trip exactly: empty objects/arrays, unicode, numbers, nulls', async () => {
      const record = makeTask({ result: trickyResult() });
      await store.createTask(record);
      expect(await store.getTask(record.id)).toStrictEqual(record);

      const result = { ...trickyResult(), extra: { more: [{}, []] } };
      const updated = await store.updateTask(record.id, 1, { status: 'succeeded', result });
      expect(updated).toStrictEqual({ ...record, status: 'succeeded', result, version: 2 });
      expect(await store.getTask(record.id)).toStrictEqual(updated);
    });

    it('putAsset then getAsset returns an equal copy; unknown asset is undefined; the owner\'s put replaces', async () => {
      const asset = { id: `asset-${randomUUID()}`, owner: 'tenant-a', createdAt: 1779348818123 };
      await store.putAsset(asset);
      const got = (await store.getAsset(asset.id))!;
      expect(got).toStrictEqual(asset);
      got.owner = 'mutated';
      expect(await store.getAsset(asset.id)).toStrictEqual(asset);

      await store.putAsset({ ...asset, createdAt: 1779348818999 });
      expect(await store.getAsset(asset.id)).toStrictEqual({ ...asset, createdAt: 1779348818999 });
      expect(await store.getAsset(`asset-${randomUUID()}`)).toBeUndefined();
    });

    it('putAsset of an id another tenant owns changes nothing: ownership never moves', async () => {
      const asset = { id: `asset-${randomUUID()}`, owner: 'tenant-a', createdAt: 1779348818123 };
      await store.putAsset(asset);
      await store.putAsset({ ...asset, owner: 'tenant-b', createdAt: 1779348818999 });
      expect(await store.getAsset(asset.id)).toStrictEqual(asset);
    });

    it('concurrent putAssets of one id by 20 tenants: one tenant ends up owning it, and keeps it', async () => {
      const id = `asset-${randomUUID()}`;
      const owners = Array.from({ length: 20 }, (_, i) => `tenant-${i}`);
      await Promise.all(owners.map((owner, i) => store.putAsset({ id, owner, createdAt: i })));
      const winner = (await store.getAsset(id))!;
      expect(owners).toContain(winner.owner);
      expect(winner).toStrictEqual({ id, owner: winner.owner, createdAt: owners.indexOf(winner.owner) });

      await Promise.all(owners.filter((owner) => owner !== winner.owner).map((owner) => store.putAsset({ id, owner, createdAt: 99 })));
      expect(await store.getAsset(id)).toStrictEqual(winner);
    });

    it('tasks and assets are separate namespaces', async () => {
      const id = `shared-${randomUUID()}`;
      await store.putAsset({ id, owner: 'tenant-a', createdAt: 1 });
      expect(await store.getTask(id)).toBeUndefined();
      await store.createTask(makeTask({ id }));
      expect(await store.getAsset(id)).toStrictEqual({ id, owner: 'tenant-a', createdAt: 1 });
    });
  });
}

describeTaskStoreContract('memoryTaskStore', () => memoryTaskStore());

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

  describeTaskStoreContract('contract', () => redisTaskStore({ client, prefix }));

  it('keys are <prefix>task:<id> and <prefix>asset:<id>, prefix gw: by default', async () => {
    const id = `task-${randomUUID()}`;
    try {
      await redisTaskStore({ client }).createTask(makeTask({ id }));
      await redisTaskStore({ client }).putAsset({ id, owner: 'tenant-a', createdAt: 1 });
      expect(JSON.parse((await client.get(`gw:task:${id}`))!)).toMatchObject({ id, version: 1 });
      expect(JSON.parse((await client.get(`gw:asset:${id}`))!)).toStrictEqual({ id, owner: 'tenant-a', createdAt: 1 });
    } finally {
      await client.del(`gw:task:${id}`, `gw:asset:${id}`);
    }
  });

  it('created tasks expire after 30 days by default, and an update keeps the TTL', async () => {
    const store = redisTaskStore({ client, prefix });
    const record = makeTask();
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
    const shortTask = makeTask();
    await short.createTask(shortTask);
    await short.putAsset({ id: 'a', owner: 'tenant-a', createdAt: 1 });
    await short.updateTask(shortTask.id, 1, { status: 'running' });
    expect(await client.ttl(`${prefix}short:task:${shortTask.id}`)).toBeGreaterThan(100);
    expect(await client.ttl(`${prefix}short:task:${shortTask.id}`)).toBeLessThanOrEqual(120);
    // taskTtlSeconds is for tasks only: an asset record is ownership (assetTtlSeconds)
    expect(await client.ttl(`${prefix}short:asset:a`)).toBe(-1);

    const forever = redisTaskStore({ client, prefix, taskTtlSeconds: 0 });
    const record = makeTask();
    await forever.createTask(record);
    await forever.putAsset({ id: 'a', owner: 'tenant-a', createdAt: 1 });
    expect(await client.ttl(`${prefix}task:${record.id}`)).toBe(-1);
    expect(await client.ttl(`${prefix}asset:a`)).toBe(-1);
    await forever.updateTask(record.id, 1, { status: 'running' });
    expect(await client.ttl(`${prefix}task:${record.id}`)).toBe(-1);
  });

  // a forgotten asset record would let another tenant reference the asset as the operator's
  // (allowOperatorAssets), so asset records never expire unless the host says so
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
    const record = makeTask();
    await store.createTask(record);
    expect(await store.updateTask(record.id, 1, { status: 'running' })).toBeDefined();
    await client.script('FLUSH');
    expect((await store.updateTask(record.id, 2, { status: 'succeeded' }))?.version).toBe(3);
    expect(await store.updateTask(record.id, 2, { status: 'failed' })).toBeUndefined();
  });

  it('two instances with one prefix and separate clients see each other and race safely', async () => {
    const a = redisTaskStore({ client: connect(), prefix });
    const b = redisTaskStore({ client: connect(), prefix });
    const record = makeTask({ result: trickyResult() });

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
