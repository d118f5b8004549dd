// The default TaskStore: in-process maps, for one gateway instance (a restart forgets everything; use
// redisTaskStore for several instances or restarts). Records are copied in and out, so callers can
// never change stored state except through updateTask's compare-and-set. Tasks and assets are both
// capped, per owner and in total, so the store is no memory hole. Tasks are a cache of upstream state:
// one tenant that creates many pushes out its own oldest, never another tenant's. Assets are
// ownership: a forgotten asset record would let any tenant reference that asset as the operator's
// (allow.operatorAssets), so assets are never forgotten and a full cap refuses new ones instead.
import { GatewayConfigError } from '../../errors/config-error.js';
import { memoryDeliveryLog } from './memory-delivery-log.js';
import { memoryEndpointHealth } from './memory-endpoint-health.js';
import { AssetCapacityError, type AssetRecord, type TaskChanges, type TaskRecord, type TaskStore } from './task-store.js';

/** Most task records kept in total. A record with a result is ~1-2 KB, so this bounds tasks to ~200 MB. */
const DEFAULT_MAX_TASKS = 100_000;
/** Most task records one owner keeps: a tenth of the total, so ten busy tenants fit before any is pushed out. */
const DEFAULT_MAX_TASKS_PER_OWNER = 10_000;
/** Most asset records kept in total (~100 bytes each). */
const DEFAULT_MAX_ASSETS = 100_000;
/** Most asset records one owner keeps. */
const DEFAULT_MAX_ASSETS_PER_OWNER = 10_000;

export interface MemoryTaskStoreOptions {
  /**
   * Most tasks kept in total. Past it, the oldest task of the owner with the most tasks is forgotten,
   * so a quiet tenant keeps its tasks while a busy one fills the store. Default 100,000.
   * Example: `memoryTaskStore({ maxTasks: 20_000 })`.
   */
  maxTasks?: number;
  /**
   * Most tasks one owner (`Caller.id`) keeps; its own oldest are forgotten first. Default 10,000 (or
   * `maxTasks`, if smaller). Example: `memoryTaskStore({ maxTasksPerOwner: 500 })`.
   */
  maxTasksPerOwner?: number;
  /**
   * Most assets recorded in total. Assets are never forgotten: once it is reached, CreateAsset answers
   * 503 for every caller until the gateway restarts. Default 100,000. Example: `memoryTaskStore({ maxAssets: 10_000 })`.
   */
  maxAssets?: number;
  /**
   * Most assets one owner records. Assets are never forgotten: once it is reached, that caller's
   * CreateAsset answers 429. Default 10,000 (or `maxAssets`, if smaller). Example: `memoryTaskStore({ maxAssetsPerOwner: 100 })`.
   */
  maxAssetsPerOwner?: number;
}

export function memoryTaskStore(options: MemoryTaskStoreOptions = {}): TaskStore {
  const maxTasks = cap(options.maxTasks, 'maxTasks', DEFAULT_MAX_TASKS);
  const maxAssets = cap(options.maxAssets, 'maxAssets', DEFAULT_MAX_ASSETS);
  const tasks = ownerCappedMap<TaskRecord>(maxTasks, cap(options.maxTasksPerOwner, 'maxTasksPerOwner', Math.min(DEFAULT_MAX_TASKS_PER_OWNER, maxTasks)));
  const assets = assetLedger(maxAssets, cap(options.maxAssetsPerOwner, 'maxAssetsPerOwner', Math.min(DEFAULT_MAX_ASSETS_PER_OWNER, maxAssets)));
  const copy = <T>(value: T): T => structuredClone(value);
  return {
    // the delivery log, capped by the router's `deliveries.maxEntries` (memory-delivery-log.ts)
    ...memoryDeliveryLog(),
    // the health of callback endpoints, beside it (memory-endpoint-health.ts)
    ...memoryEndpointHealth(),
    async createTask(record) {
      if (tasks.get(record.id)) throw new Error(`task ${record.id} exists`);
      tasks.add(copy({ ...record, version: 1 }));
    },
    async getTask(id) {
      const record = tasks.get(id);
      return record ? copy(record) : undefined;
    },
    async updateTask(id: string, expectedVersion: number, changes: TaskChanges) {
      const record = tasks.get(id);
      if (!record || record.version !== expectedVersion) return undefined;
      const updated: TaskRecord = { ...record, ...copy(changes), version: record.version + 1 };
      tasks.replace(updated);
      return copy(updated);
    },
    async putAsset(record) {
      // an id already recorded for another owner keeps its owner (task-store.ts)
      const current = assets.get(record.id);
      if (current && current.owner !== record.owner) return;
      // the owner's own id again replaces its record and takes no new room
      if (!current) assets.checkRoom(record.owner);
      assets.set(copy(record));
    },
    async getAsset(id) {
      const record = assets.get(id);
      return record ? copy(record) : undefined;
    },
    async checkAssetCapacity(owner) {
      assets.checkRoom(owner);
    },
    async listTasks(owner, page) {
      // the owner's ids in creation order (insertion order), video tasks only
      const ids = tasks.idsOf(owner).filter((id) => tasks.get(id)!.kind === 'video');
      if (page.order === 'desc') ids.reverse();
      const start = page.after === undefined ? 0 : ids.indexOf(page.after) + 1;
      if (start === 0 && page.after !== undefined) return { tasks: [], hasMore: false };
      const slice = ids.slice(start, start + page.limit);
      return { tasks: slice.map((id) => copy(tasks.get(id)!)), hasMore: start + page.limit < ids.length };
    },
    async deleteTask(id) {
      tasks.remove(id);
    },
  };
}

function cap(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new GatewayConfigError('memory_store_cap', `memoryTaskStore ${name} must be a whole number >= 1, got ${String(value)}.`, `memoryTaskStore({ ${name}: ${fallback} })`);
  }
  return value;
}

interface AssetLedger {
  get(id: string): AssetRecord | undefined;
  /** Throws AssetCapacityError when one more asset of `owner` would pass a cap. */
  checkRoom(owner: string): void;
  /** Records (or replaces) an asset; the caller checked the room first for a new id. */
  set(record: AssetRecord): void;
}

// Assets only ever grow (ownership is never forgotten), so the caps need only counts, not eviction order.
function assetLedger(maxTotal: number, maxPerOwner: number): AssetLedger {
  const records = new Map<string, AssetRecord>();
  const countByOwner = new Map<string, number>();
  return {
    get: (id) => records.get(id),
    checkRoom(owner) {
      if ((countByOwner.get(owner) ?? 0) >= maxPerOwner) throw new AssetCapacityError('owner', maxPerOwner);
      if (records.size >= maxTotal) throw new AssetCapacityError('store', maxTotal);
    },
    set(record) {
      if (!records.has(record.id)) countByOwner.set(record.owner, (countByOwner.get(record.owner) ?? 0) + 1);
      records.set(record.id, record);
    },
  };
}

interface OwnedRecord {
  id: string;
  owner: string;
}

interface OwnerCappedMap<T extends OwnedRecord> {
  get(id: string): T | undefined;
  /** Stores a record as the newest (replacing one with its id), then forgets what is over the caps. */
  add(record: T): void;
  /** Replaces a stored record in place (same id, same owner): an update is not a new record. */
  replace(record: T): void;
  /** Forgets a record. */
  remove(id: string): void;
  /** The owner's record ids, oldest first. */
  idsOf(owner: string): string[];
}

// Eviction: past the per-owner cap, the owner's own oldest record goes. Past the total, the oldest
// record of an owner with the most records goes (the inserting owner, when it is one of them and the
// record is not the one just added), so the tenant that fills the store pays for it. Owners are kept
// in buckets by record count, so finding the largest is O(1) however many tenants there are (a scan
// over the owners cost 7 ms per insert with 10,000 of them).
function ownerCappedMap<T extends OwnedRecord>(maxTotal: number, maxPerOwner: number): OwnerCappedMap<T> {
  const records = new Map<string, T>();
  // each owner's ids; a Set iterates in insertion order, so the first id is the owner's oldest
  const byOwner = new Map<string, Set<string>>();
  // owners by how many records they hold; counts move by one, so the largest is tracked exactly
  const bySize = new Map<number, Set<string>>();
  let largest = 0;

  const move = (owner: string, from: number, to: number): void => {
    const bucket = bySize.get(from);
    bucket?.delete(owner);
    if (bucket?.size === 0) bySize.delete(from);
    if (to > 0) {
      if (!bySize.has(to)) bySize.set(to, new Set());
      bySize.get(to)!.add(owner);
    }
    if (to > largest) largest = to;
    else if (from === largest && !bySize.has(from)) largest = to;
  };
  const remove = (id: string): void => {
    const record = records.get(id);
    if (!record) return;
    records.delete(id);
    const ids = byOwner.get(record.owner)!;
    ids.delete(id);
    if (ids.size === 0) byOwner.delete(record.owner);
    move(record.owner, ids.size + 1, ids.size);
  };
  const oldestOf = (owner: string): string => byOwner.get(owner)!.values().next().value as string;

  return {
    get: (id) => records.get(id),
    add(record) {
      remove(record.id);
      records.set(record.id, record);
      let ids = byOwner.get(record.owner);
      if (!ids) byOwner.set(record.owner, (ids = new Set()));
      ids.add(record.id);
      move(record.owner, ids.size - 1, ids.size);
      while (ids.size > maxPerOwner) remove(oldestOf(record.owner));
      while (records.size > maxTotal) {
        // never the record just added: with one record, the inserting owner yields to another largest one
        const owners = bySize.get(largest)!;
        let victim = largest > 1 && owners.has(record.owner) ? record.owner : undefined;
        for (const owner of owners) {
          if (victim !== undefined) break;
          if (owner !== record.owner) victim = owner;
        }
        remove(oldestOf(victim!));
      }
    },
    replace(record) {
      if (records.has(record.id)) records.set(record.id, record);
    },
    remove,
    idsOf: (owner) => [...(byOwner.get(owner) ?? [])],
  };
}
