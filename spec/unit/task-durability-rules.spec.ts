// The pure rules behind task durability: the forward order of task states (contract §3, open set) and
// the caller snapshot kept with a task for background polls (no key, JSON only, bounded).
import { describe, expect, it } from 'vitest';
import { MAX_CALLER_SNAPSHOT_BYTES, callerOfTask, snapshotCaller } from '../../lib/gateway/tasks/caller-snapshot.js';
import { isPassedStatus, statusRank } from '../../lib/gateway/tasks/task-state-order.js';

describe('statusRank', () => {
  it.each([
    ['queued', 0],
    ['QUEUED', 0],
    ['running', 1],
    ['processing', 1], // unknown non-terminal: ranks with running (contract §3: names beyond the four not shown)
    ['succeeded', 2],
    ['failed', 2],
    ['expired', 2],
    ['cancelled', 2],
    ['canceled', 2],
  ])('%s ranks %i', (status, rank) => {
    expect(statusRank(status)).toBe(rank);
  });
});

describe('isPassedStatus', () => {
  it.each([
    ['queued', 'running', true],
    ['running', 'succeeded', true],
    ['queued', 'failed', true],
    ['processing', 'succeeded', true],
    ['running', 'running', false],
    ['running', 'queued', false],
    ['processing', 'running', false], // same rank: forward, delivered as a change
    ['running', 'processing', false],
    ['succeeded', 'running', false],
    ['failed', 'succeeded', false], // terminal never passes terminal
    ['queued', undefined, false],
  ])('%s after %s: %s', (status, current, passed) => {
    expect(isPassedStatus(status, current)).toBe(passed);
  });
});

describe('snapshotCaller', () => {
  const KEY = 'sk-test-snapshot-0123456789';
  const circular: Record<string, unknown> = { id: 't' };
  circular.self = circular;
  it.each([
    ['plain fields are kept', { id: 't', plan: 'pro', limits: { videos: 3 } }, { ok: true, caller: { id: 't', plan: 'pro', limits: { videos: 3 } } }],
    ['a string holding the key is left out', { id: 't', token: KEY, nested: { header: `Bearer ${KEY}` } }, { ok: true, caller: { id: 't', nested: {} } }],
    ['functions and undefined are left out, dates become strings', { id: 't', at: new Date(0), f: () => 1, u: undefined }, { ok: true, caller: { id: 't', at: '1970-01-01T00:00:00.000Z' } }],
    ['a circular caller is kept as { id }', circular, { ok: false, caller: { id: 't' } }],
    ['a BigInt is kept as { id }', { id: 't', n: 1n }, { ok: false, caller: { id: 't' } }],
    ['a toJSON that is not an object is kept as { id }', { id: 't', toJSON: () => 'x' }, { ok: false, caller: { id: 't' } }],
    ['a caller too large to store is kept as { id }', { id: 't', blob: 'x'.repeat(MAX_CALLER_SNAPSHOT_BYTES) }, { ok: false, caller: { id: 't' } }],
  ])('%s', (_name, caller, expected) => {
    expect(snapshotCaller(caller as { id: string }, KEY)).toMatchObject(expected);
    const snapshot = snapshotCaller(caller as { id: string }, KEY);
    expect(JSON.stringify(snapshot.caller)).not.toContain(KEY);
  });
});

describe('callerOfTask', () => {
  it.each([
    ['a record with a snapshot', { owner: 't', caller: { id: 't', plan: 'pro' } }, { id: 't', plan: 'pro' }],
    ['a record written before snapshots', { owner: 't' }, { id: 't' }],
    ['a snapshot can never name another owner', { owner: 't', caller: { id: 'other', plan: 'pro' } }, { id: 't', plan: 'pro' }],
  ])('%s', (_name, record, expected) => {
    expect(callerOfTask(record)).toEqual(expected);
  });
});
