// A task record's id, and the reads and writes of one kind of record (docs/architecture.md "One task
// lifecycle"). Ids are the gateway's own: random (128 bits), so another caller cannot guess one, under a
// prefix per kind that callers already hold (`imgtask_…`, `task_…`). The store hands out records of
// every kind, and each kind's code reads and writes only its own, told apart by the record's `kind`,
// never by its id or by which fields it has. A record never changes kind, so an update of one answers a
// record of the same kind.
import { randomBytes } from 'node:crypto';
import { type TaskChanges, type TaskKind, type TaskRecordOf, type TaskStore, isTaskOfKind } from '../../stores/tasks/task-store.js';

const TASK_ID = /^([a-z]+)_[A-Za-z0-9_-]{22}$/;

/** A new id under `prefix`: `<prefix>_` and 22 base64url characters. */
export function newTaskId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString('base64url')}`;
}

/** Whether `id` has the shape of an id minted under one of `prefixes`: anything else is never read from the store. */
export function isTaskId(id: string, prefixes: ReadonlySet<string>): boolean {
  const prefix = TASK_ID.exec(id)?.[1];
  return prefix !== undefined && prefixes.has(prefix);
}

/** The task `id` when it is one of kind `kind`; undefined for no record and for another kind's. */
export async function getTaskOf<K extends TaskKind>(store: TaskStore, id: string, kind: K): Promise<TaskRecordOf<K> | undefined> {
  const record = await store.getTask(id);
  return isTaskOfKind(record, kind) ? record : undefined;
}

/**
 * The store's compare-and-set on a record of kind `K` (TaskStore.updateTask): the record as written, or
 * undefined when another writer got there first.
 */
export async function updateTaskOf<K extends TaskKind>(store: TaskStore, record: { id: string; version: number; kind: K }, changes: TaskChanges): Promise<TaskRecordOf<K> | undefined> {
  const updated = await store.updateTask(record.id, record.version, changes);
  return isTaskOfKind(updated, record.kind) ? updated : undefined;
}

/**
 * The caller's own task `id` of kind `kind`: undefined for an id not of the kind's shape (never read
 * from the store), an unknown id, another kind's task and another owner's alike, so every one of them
 * gets the same 404 (docs/architecture.md "Public contract").
 */
export async function findOwnTask<K extends TaskKind>(store: TaskStore, kind: { kind: K; idPrefix: string }, owner: string, id: string): Promise<TaskRecordOf<K> | undefined> {
  if (!isTaskId(id, new Set([kind.idPrefix]))) return undefined;
  const record = await getTaskOf(store, id, kind.kind);
  return record?.owner === owner ? record : undefined;
}
