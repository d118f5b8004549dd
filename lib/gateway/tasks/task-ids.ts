// The gateway's own task ids (docs/architecture.md "Long-lived work"): random (128 bits), so another
// caller cannot guess one, under a prefix per kind that callers already hold (`imgtask_…`, `task_…`).
// The id names a task; the record says its kind.
import { randomBytes } from 'node:crypto';

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
