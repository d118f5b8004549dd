// The default TaskStore: in-process maps, for one gateway instance (a restart forgets everything; use
// redisTaskStore for several instances or restarts). Records are copied in and out, so callers can
// never change stored state except through updateTask's compare-and-set. Tasks and assets are both
// capped, per owner and in total, so the store is no memory hole and one tenant that creates many
// records pushes out its own oldest ones, never another tenant's.
import { GatewayConfigError } from '../errors/config-error.js';
import type { AssetRecord, TaskChanges, TaskRecord, TaskStore } from './task-store.js';

/** Most task records kept in total. A record with a result is ~1-2 KB, so this bounds tasks to ~200 MB. */
export const DEFAULT_MAX_TASKS = 100_000;
/** Most task records one owner keeps: a tenth of the total, so ten busy tenants fit before any is pushed out. */
export const DEFAULT_MAX_TASKS_PER_OWNER = 10_000;
/** Most asset records kept in total (~100 bytes each). */
export const DEFAULT_MAX_ASSETS = 100_000;
/** Most asset records one owner keeps. */
export const DEFAULT_MAX_ASSETS_PER_OWNER = 10_000;

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
  /** Most assets kept in total, forgotten as tasks are. Default 100,000. Example: `memoryTaskStore({ maxAssets: 10_000 })`. */
  maxAssets?: number;
  /** Most assets one owner keeps. Default 10,000 (or `maxAssets`, if smaller). Example: `memoryTaskStore({ maxAssetsPerOwner: 100 })`. */
  maxAssetsPerOwner?: number;
}

export function memoryTaskStore(options: MemoryTaskStoreOptions = {}): TaskStore {
  const maxTasks = cap(options.maxTasks, 'maxTasks', DEFAULT_MAX_TASKS);
  const maxAssets = cap(options.maxAssets, 'maxAssets', DEFAULT_MAX_ASSETS);
  const tasks = ownerCappedMap<TaskRecord>(maxTasks, cap(options.maxTasksPerOwner, 'maxTasksPerOwner', Math.min(DEFAULT_MAX_TASKS_PER_OWNER, maxTasks)));
  const assets = ownerCappedMap<AssetRecord>(maxAssets, cap(options.maxAssetsPerOwner, 'maxAssetsPerOwner', Math.min(DEFAULT_MAX_ASSETS_PER_OWNER, maxAssets)));
  const copy = <T>(value: T): T => structuredClone(value);
  return {
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
      assets.add(copy(record));
    },
    async getAsset(id) {
      const record = assets.get(id);
      return record ? copy(record) : undefined;
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
}

// Eviction: past the per-owner cap, the owner's own oldest record goes. Past the total, the oldest
// record of the owner with the most records goes (on a tie, the one whose oldest is oldest), so the
// tenant that fills the store pays for it. Finding that owner walks the owners: O(owners), only on
// an insert into a full store.
function ownerCappedMap<T extends OwnedRecord>(maxTotal: number, maxPerOwner: number): OwnerCappedMap<T> {
  const records = new Map<string, { record: T; seq: number }>();
  // each owner's ids; a Set iterates in insertion order, so the first id is the owner's oldest
  const byOwner = new Map<string, Set<string>>();
  let seq = 0;

  const remove = (id: string): void => {
    const entry = records.get(id);
    if (!entry) return;
    records.delete(id);
    const ids = byOwner.get(entry.record.owner)!;
    ids.delete(id);
    if (ids.size === 0) byOwner.delete(entry.record.owner);
  };
  const oldestOf = (ids: Set<string>): string => ids.values().next().value as string;
  const largestOwnersOldest = (): string => {
    let chosen: { size: number; seq: number; id: string } | undefined;
    for (const ids of byOwner.values()) {
      const id = oldestOf(ids);
      const candidate = { size: ids.size, seq: records.get(id)!.seq, id };
      if (!chosen || candidate.size > chosen.size || (candidate.size === chosen.size && candidate.seq < chosen.seq)) chosen = candidate;
    }
    return chosen!.id;
  };

  return {
    get: (id) => records.get(id)?.record,
    add(record) {
      remove(record.id);
      records.set(record.id, { record, seq: (seq += 1) });
      let ids = byOwner.get(record.owner);
      if (!ids) byOwner.set(record.owner, (ids = new Set()));
      ids.add(record.id);
      while (ids.size > maxPerOwner) remove(oldestOf(ids));
      while (records.size > maxTotal) remove(largestOwnersOldest());
    },
    replace(record) {
      const entry = records.get(record.id);
      if (entry) entry.record = record;
    },
  };
}
