// The caller a background poll hands to resolveUpstream: a JSON copy of the Caller
// that created the task, stored with it, so a resolver that authorizes by plan or tenant fields sees
// the same caller on polls as on the create request. Stores are JSON (task-store.ts), so the copy is
// taken through JSON; a string holding the caller's bearer key is left out (a key is never stored);
// a caller that cannot be copied, or is too large to keep with every task, is kept as { id } only.
import type { Caller } from '../../types.js';

/** Larger snapshots are not kept: every poll reads the record, and a store keeps many tasks. */
export const MAX_CALLER_SNAPSHOT_BYTES = 16 * 1024;

export type CallerSnapshot = { ok: true; caller: Caller } | { ok: false; caller: Caller; reason: string };

export function snapshotCaller(caller: Caller, bearerKey: string): CallerSnapshot {
  const fallback: Caller = { id: caller.id };
  let json: string | undefined;
  try {
    json = JSON.stringify(caller, (_name, value: unknown) => (typeof value === 'string' && bearerKey !== '' && value.includes(bearerKey) ? undefined : value));
  } catch (error) {
    // circular structures and BigInt values cannot be stored
    return { ok: false, caller: fallback, reason: error instanceof Error ? error.message : String(error) };
  }
  if (json === undefined) return { ok: false, caller: fallback, reason: 'the caller is not JSON' };
  if (Buffer.byteLength(json) > MAX_CALLER_SNAPSHOT_BYTES) return { ok: false, caller: fallback, reason: `the caller is larger than ${MAX_CALLER_SNAPSHOT_BYTES} bytes as JSON` };
  const copy: unknown = JSON.parse(json);
  // a toJSON() may turn the caller into something that is not an object
  if (copy === null || typeof copy !== 'object' || Array.isArray(copy)) return { ok: false, caller: fallback, reason: 'the caller is not a JSON object' };
  // the owner is what ownership checks use; the snapshot can never name another tenant
  return { ok: true, caller: { ...copy, id: caller.id } };
}

/** The caller of a stored task: its snapshot, or `{ id: owner }` for a record written before snapshots existed. */
export function callerOfTask(record: { owner: string; caller?: Caller }): Caller {
  return record.caller ? { ...record.caller, id: record.owner } : { id: record.owner };
}
