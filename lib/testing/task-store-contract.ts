// The TaskStore contract (lib/stores/tasks/task-store.ts) as a suite hosts run against their own store:
// what the gateway relies on (copies in and out, compare-and-set on version, asset ownership that never
// moves, exact JSON round-trips), and the delivery log's optional methods when the store has them
// (all four or none). The gateway's own spec runs it for memoryTaskStore and redisTaskStore.
import { randomUUID } from 'node:crypto';
import type { ImageTaskRecord, TaskRecord, TaskRecordBase, TaskStore, VideoTaskRecord } from '../stores/tasks/task-store.js';
import type { DeliveryAttempt, DeliveryLogStore, DeliveryRecord } from '../stores/tasks/delivery-records.js';
import type { ProviderName } from '../types.js';
import type { ContractTestApi } from './test-api.js';

/** Fields a sample task is given: any of a video task's, or `kind: 'image'` with the image task's state. */
export type SampleTaskOverrides = Partial<VideoTaskRecord> | (Partial<TaskRecordBase> & Pick<ImageTaskRecord, 'kind' | 'image'>);

/** A task record as the gateway writes one (fresh random id; a video task unless `kind` says otherwise); `overrides` replace fields. */
export const sampleTask = (overrides: SampleTaskOverrides = {}): TaskRecord => ({
  kind: 'video',
  id: `task-${randomUUID()}`,
  owner: 'tenant-a',
  model: 'seedance-1-0-pro',
  // a store keeps the provider's name as it is given and never reads it: any name round-trips
  upstream: { provider: 'example-vendor' as ProviderName, baseURL: 'https://upstream.example/api/v3', taskId: 'cgt-20250101-abc' },
  createdAt: 1779348818123,
  status: 'queued',
  callback: { url: 'https://host.example/hook', polls: 0, done: false },
  version: 1,
  ...overrides,
});

/**
 * A terminal result holding what a serializing store gets wrong (Redis cjson would mangle these): empty
 * containers, big and fractional numbers, nulls, unicode and escapes.
 */
export const sampleResult = (): Record<string, unknown> => ({
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

const DAY_MS = 24 * 3600_000;

/** A delivery as the gateway records one (fresh random id, created now, kept a week); `overrides` replace fields. */
const sampleDelivery = (overrides: Partial<DeliveryRecord> = {}): DeliveryRecord => {
  const createdAt = overrides.createdAt ?? Date.now();
  return {
    id: `evt_${randomUUID()}`,
    taskId: `task-${randomUUID()}`,
    owner: 'tenant-a',
    event: 'succeeded',
    url: 'https://host.example/hook?token=receiver-secret',
    body: JSON.stringify(sampleResult()),
    state: 'pending',
    createdAt,
    expiresAt: createdAt + 7 * DAY_MS,
    attempts: [],
    ...overrides,
  };
};

const DELIVERY_METHODS = ['createDelivery', 'getDelivery', 'updateDelivery', 'listDeliveries'] as const;

/** The store's delivery methods when it has all four, else undefined (the gateway then runs with the log off). */
function deliveryLogOf(store: TaskStore): DeliveryLogStore | undefined {
  return DELIVERY_METHODS.every((name) => typeof store[name] === 'function') ? (store as DeliveryLogStore) : undefined;
}

/**
 * Declares the TaskStore contract suite (one `describe` named `name`). `makeStore` runs before each test; the
 * suite uses random ids, so it may return one shared store. Pass the runner's own functions, e.g. in vitest:
 *
 * ```ts
 * import { beforeEach, describe, expect, it } from 'vitest';
 * import { describeTaskStoreContract } from 'express-image-gateway/testing';
 * describeTaskStoreContract({ describe, it, expect, beforeEach }, 'myTaskStore', () => myTaskStore());
 * ```
 */
export function describeTaskStoreContract(test: ContractTestApi, name: string, makeStore: () => TaskStore | Promise<TaskStore>): void {
  const { describe, it, expect, beforeEach } = test;
  describe(name, () => {
    let store: TaskStore;
    beforeEach(async () => {
      store = await makeStore();
    });

    it('createTask then getTask returns an equal record at version 1', async () => {
      const record = sampleTask({ version: 7 });
      await store.createTask(record);
      expect(await store.getTask(record.id)).toStrictEqual({ ...record, version: 1 });
    });

    it('keeps the create span context (trace) through create and updates', async () => {
      const trace = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };
      const record = sampleTask({ trace });
      await store.createTask(record);
      expect((await store.getTask(record.id))?.trace).toStrictEqual(trace);
      expect((await store.updateTask(record.id, 1, { status: 'running' }))?.trace).toStrictEqual(trace);
      expect((await store.getTask(record.id))?.trace).toStrictEqual(trace);
    });

    it('getTask of an unknown id is undefined', async () => {
      expect(await store.getTask(`task-${randomUUID()}`)).toBeUndefined();
    });

    it('createTask of an existing id rejects and keeps the first record', async () => {
      const record = sampleTask();
      await store.createTask(record);
      await expect(store.createTask({ ...record, owner: 'tenant-b' })).rejects.toThrow();
      expect(await store.getTask(record.id)).toStrictEqual(record);
    });

    it('hands out copies: mutating what went in or came out does not change the store', async () => {
      const record = sampleTask({ result: { content: { video_url: 'https://cdn.example/a.mp4' } } });
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
        ...sampleTask({ id: record.id, result: { content: { video_url: 'https://cdn.example/a.mp4' } } }),
        status: 'running',
        callback: { url: 'https://host.example/hook', polls: 1, done: false },
        version: 2,
      });
    });

    it('updateTask at the right version applies the changes, bumps the version and returns the record', async () => {
      const record = sampleTask({ callback: { url: 'https://host.example/hook', notifiedStatus: 'queued', polls: 3, done: false } });
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
      const record = sampleTask();
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
      const record = sampleTask();
      await store.createTask(record);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.updateTask(record.id, 1, { status: `running-${i}` })));
      const winners = results.filter((result) => result !== undefined);
      expect(winners).toHaveLength(1);
      expect(winners[0]!.version).toBe(2);
      expect(await store.getTask(record.id)).toStrictEqual(winners[0]);
    });

    it('nested results round-trip exactly: empty objects/arrays, unicode, numbers, nulls', async () => {
      const record = sampleTask({ result: sampleResult() });
      await store.createTask(record);
      expect(await store.getTask(record.id)).toStrictEqual(record);

      const result = { ...sampleResult(), extra: { more: [{}, []] } };
      const updated = await store.updateTask(record.id, 1, { status: 'succeeded', result });
      expect(updated).toStrictEqual({ ...record, status: 'succeeded', result, version: 2 });
      expect(await store.getTask(record.id)).toStrictEqual(updated);
    });

    it('durable results: stored keys and the result base round-trip, and a stored-only update keeps status and result', async () => {
      const record = sampleTask({ resultBase: 'https://api.example.com/ai' });
      await store.createTask(record);
      expect(await store.getTask(record.id)).toStrictEqual(record);
      const stored = {
        keys: { video_url: '0123456789abcdef0123456789abcdef/AAAAAAAAAAAAAAAAAAAAAA.mp4', last_frame_url: '0123456789abcdef0123456789abcdef/BBBBBBBBBBBBBBBBBBBBBB.png' },
        bytes: 52428800,
      };
      const updated = await store.updateTask(record.id, 1, { stored });
      expect(updated).toStrictEqual({ ...record, stored, version: 2 });
      expect(await store.getTask(record.id)).toStrictEqual(updated);
      // a second writer at the old version cannot replace the keys the first recorded
      expect(await store.updateTask(record.id, 1, { stored: { keys: { video_url: 'other' }, bytes: 1 } })).toBeUndefined();
      expect((await store.getTask(record.id))?.stored).toStrictEqual(stored);
    });

    it("putAsset then getAsset returns an equal copy; unknown asset is undefined; the owner's put replaces", async () => {
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
      await store.createTask(sampleTask({ id }));
      expect(await store.getAsset(id)).toStrictEqual({ id, owner: 'tenant-a', createdAt: 1 });
    });

    // optional methods (OpenAI's video list and delete): checked for a store that offers them
    it("listTasks pages one owner's video tasks in creation order, either way, without image tasks", async () => {
      if (!store.listTasks) return;
      const owner = `owner-${randomUUID()}`;
      const tasks = [0, 1, 2, 3, 4].map((index) => sampleTask({ owner, createdAt: 1779348818000 + index * 1000 }));
      for (const task of tasks) await store.createTask(task);
      await store.createTask(sampleTask({ owner: `other-${randomUUID()}` }));
      const image = { route: 'images.generations', images: 1, deadline: 1 } as const;
      await store.createTask(sampleTask({ kind: 'image', owner, createdAt: 1779348818500, image }));
      const ids = tasks.map((task) => task.id);

      const first = await store.listTasks(owner, { limit: 2, order: 'desc' });
      expect(first.tasks.map((task) => task.id)).toStrictEqual([ids[4], ids[3]]);
      expect(first.hasMore).toBe(true);
      expect(first.tasks[0]).toStrictEqual({ ...tasks[4], version: 1 });
      const rest = await store.listTasks(owner, { limit: 10, order: 'desc', after: ids[3]! });
      expect(rest).toStrictEqual({ tasks: [ids[2], ids[1], ids[0]].map((id) => ({ ...tasks.find((task) => task.id === id)!, version: 1 })), hasMore: false });
      const ascending = await store.listTasks(owner, { limit: 3, order: 'asc', after: ids[0]! });
      expect(ascending.tasks.map((task) => task.id)).toStrictEqual([ids[1], ids[2], ids[3]]);
      expect(ascending.hasMore).toBe(true);
      expect(await store.listTasks(owner, { limit: 3, order: 'asc', after: `task-${randomUUID()}` })).toStrictEqual({ tasks: [], hasMore: false });
      expect(await store.listTasks(`owner-${randomUUID()}`, { limit: 3, order: 'desc' })).toStrictEqual({ tasks: [], hasMore: false });
    });

    it('has all four delivery methods or none', async () => {
      expect([0, DELIVERY_METHODS.length]).toContain(DELIVERY_METHODS.filter((name) => typeof store[name] === 'function').length);
    });

    it('createDelivery then getDelivery returns an equal record; the same id again is refused and the first kept; an unknown id is undefined', async () => {
      const log = deliveryLogOf(store);
      if (!log) return;
      const record = sampleDelivery({ attempts: [{ at: 1, statusCode: 500, durationMs: 3, response: 'down' }] });
      expect(await log.createDelivery(record, { maxEntries: 1000 })).toBe(true);
      expect(await log.getDelivery(record.id)).toStrictEqual(record);
      expect(await log.createDelivery({ ...record, event: 'running', attempts: [] }, { maxEntries: 1000 })).toBe(false);
      expect(await log.getDelivery(record.id)).toStrictEqual(record);
      expect(await log.getDelivery(`evt_${randomUUID()}`)).toBeUndefined();
    });

    it('updateDelivery appends attempts in order and sets the state; 20 concurrent attempts are all kept; an unknown id is undefined', async () => {
      const log = deliveryLogOf(store);
      if (!log) return;
      const record = sampleDelivery();
      await log.createDelivery(record, { maxEntries: 1000 });
      const failedAttempt: DeliveryAttempt = { at: record.createdAt, error: 'connect ECONNREFUSED', durationMs: 2 };
      const taken: DeliveryAttempt = { at: record.createdAt + 10, statusCode: 204, durationMs: 5, replay: true };
      expect(await log.updateDelivery(record.id, { attempt: failedAttempt })).toStrictEqual({ ...record, attempts: [failedAttempt] });
      expect(await log.updateDelivery(record.id, { attempt: taken, state: 'delivered' })).toStrictEqual({ ...record, state: 'delivered', attempts: [failedAttempt, taken] });
      expect(await log.updateDelivery(record.id, { state: 'pending' })).toStrictEqual({ ...record, state: 'pending', attempts: [failedAttempt, taken] });

      const busy = sampleDelivery();
      await log.createDelivery(busy, { maxEntries: 1000 });
      await Promise.all(Array.from({ length: 20 }, (_, i) => log.updateDelivery(busy.id, { attempt: { at: i, statusCode: 500, durationMs: i } })));
      expect((await log.getDelivery(busy.id))?.attempts).toHaveLength(20);

      const unknown = `evt_${randomUUID()}`;
      expect(await log.updateDelivery(unknown, { state: 'failed' })).toBeUndefined();
      expect(await log.getDelivery(unknown)).toBeUndefined();
    });

    it('listDeliveries pages newest first (ties by id), after a delivery, by owner, task, state and time', async () => {
      const log = deliveryLogOf(store);
      if (!log) return;
      const owner = `owner-${randomUUID()}`;
      const taskId = `task-${randomUUID()}`;
      const base = Date.now() - 60_000;
      // two at the same millisecond: their ids order them
      const made = [
        sampleDelivery({ owner, taskId, createdAt: base, id: 'evt_a' + randomUUID() }),
        sampleDelivery({ owner, createdAt: base + 1, id: 'evt_b' + randomUUID(), state: 'failed' }),
        sampleDelivery({ owner, taskId, createdAt: base + 2, id: 'evt_c' + randomUUID() }),
        sampleDelivery({ owner, createdAt: base + 2, id: 'evt_d' + randomUUID(), state: 'failed' }),
      ];
      for (const record of made) await log.createDelivery(record, { maxEntries: 1000 });
      await log.createDelivery(sampleDelivery({ owner: `other-${randomUUID()}`, taskId, createdAt: base + 3 }), { maxEntries: 1000 });
      const ids = (page: { deliveries: DeliveryRecord[] }): string[] => page.deliveries.map((record) => record.id);
      const newest = [made[3]!.id, made[2]!.id, made[1]!.id, made[0]!.id];

      const first = await log.listDeliveries({ owner, limit: 3 });
      expect(ids(first)).toStrictEqual(newest.slice(0, 3));
      expect(first.hasMore).toBe(true);
      expect(first.deliveries[0]).toStrictEqual(made[3]);
      const rest = await log.listDeliveries({ owner, limit: 3, after: { createdAt: made[1]!.createdAt, id: made[1]!.id } });
      expect(ids(rest)).toStrictEqual([made[0]!.id]);
      expect(rest.hasMore).toBe(false);
      const tie = await log.listDeliveries({ owner, limit: 10, after: { createdAt: made[3]!.createdAt, id: made[3]!.id } });
      expect(ids(tie)).toStrictEqual(newest.slice(1));

      expect(ids(await log.listDeliveries({ owner, state: 'failed', limit: 10 }))).toStrictEqual([made[3]!.id, made[1]!.id]);
      expect(ids(await log.listDeliveries({ owner, taskId, limit: 10 }))).toStrictEqual([made[2]!.id, made[0]!.id]);
      expect(ids(await log.listDeliveries({ owner, since: base + 1, until: base + 2, limit: 10 }))).toStrictEqual([made[1]!.id]);
      expect(ids(await log.listDeliveries({ owner: `owner-${randomUUID()}`, limit: 10 }))).toStrictEqual([]);
      // the state as it is now, not as it was created
      await log.updateDelivery(made[0]!.id, { state: 'failed' });
      expect(ids(await log.listDeliveries({ owner, state: 'failed', limit: 10 }))).toStrictEqual([made[3]!.id, made[1]!.id, made[0]!.id]);
      expect(ids(await log.listDeliveries({ taskId, limit: 10 }))).toHaveLength(3);
    });

    it('a delivery past its retention (expiresAt) is gone: not read, not listed', async () => {
      const log = deliveryLogOf(store);
      if (!log) return;
      const owner = `owner-${randomUUID()}`;
      const createdAt = Date.now() - 8 * DAY_MS;
      const old = sampleDelivery({ owner, createdAt, expiresAt: createdAt + 7 * DAY_MS });
      const fresh = sampleDelivery({ owner });
      await log.createDelivery(old, { maxEntries: 1000 });
      await log.createDelivery(fresh, { maxEntries: 1000 });
      expect(await log.getDelivery(old.id)).toBeUndefined();
      expect(await log.updateDelivery(old.id, { state: 'failed' })).toBeUndefined();
      expect((await log.listDeliveries({ owner, limit: 10 })).deliveries.map((record) => record.id)).toStrictEqual([fresh.id]);
    });

    it("deleteTask forgets the task and its place in its owner's list", async () => {
      if (!store.deleteTask) return;
      const owner = `owner-${randomUUID()}`;
      const kept = sampleTask({ owner, createdAt: 1 });
      const gone = sampleTask({ owner, createdAt: 2 });
      await store.createTask(kept);
      await store.createTask(gone);
      await store.deleteTask(gone.id);
      expect(await store.getTask(gone.id)).toBeUndefined();
      expect(await store.getTask(kept.id)).toStrictEqual(kept);
      if (store.listTasks) expect((await store.listTasks(owner, { limit: 10, order: 'desc' })).tasks.map((task) => task.id)).toStrictEqual([kept.id]);
      // deleting an unknown id is no error
      await store.deleteTask(`task-${randomUUID()}`);
    });
  });
}
