// The default TaskStore: in-process maps, for one gateway instance (a restart forgets everything; use
// redisTaskStore for several instances or restarts). Records are copied in and out, so callers can
// never change stored state except through updateTask's compare-and-set.
import type { AssetRecord, TaskChanges, TaskRecord, TaskStore } from './task-store.js';

export interface MemoryTaskStoreOptions {
  /** Most tasks kept; the oldest are forgotten first. Default 100,000. */
  maxTasks?: number;
}

export function memoryTaskStore(options: MemoryTaskStoreOptions = {}): TaskStore {
  const maxTasks = options.maxTasks ?? 100_000;
  const tasks = new Map<string, TaskRecord>();
  const assets = new Map<string, AssetRecord>();
  const copy = <T>(value: T): T => structuredClone(value);
  return {
    async createTask(record) {
      if (tasks.has(record.id)) throw new Error(`task ${record.id} exists`);
      tasks.set(record.id, copy({ ...record, version: 1 }));
      // Map iteration is insertion order: the first key is the oldest task
      while (tasks.size > maxTasks) tasks.delete(tasks.keys().next().value as string);
    },
    async getTask(id) {
      const record = tasks.get(id);
      return record ? copy(record) : undefined;
    },
    async updateTask(id: string, expectedVersion: number, changes: TaskChanges) {
      const record = tasks.get(id);
      if (!record || record.version !== expectedVersion) return undefined;
      const updated: TaskRecord = { ...record, ...copy(changes), version: record.version + 1 };
      tasks.set(id, updated);
      return copy(updated);
    },
    async putAsset(record) {
      assets.set(record.id, copy(record));
    },
    async getAsset(id) {
      const record = assets.get(id);
      return record ? copy(record) : undefined;
    },
  };
}
