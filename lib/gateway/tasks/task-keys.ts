// Names derived from a task and its state (contract §6.4): event ids and the keys of scheduled jobs
// (a video task's polls, an image task's watches and follows) are the same on every instance that
// sees the same transition, so a job queued twice is queued once and receivers deduplicate; and the
// delay before a task's next poll, from the one polling schedule of its kind (`callbacks.pollIntervalsMs`).
import { createHash } from 'node:crypto';
import type { DeliveryJob } from '../../stores/scheduling/job-scheduler.js';
import type { TaskRecord } from '../../stores/tasks/task-store.js';

/** Same for every attempt at one state of one task: receivers deduplicate on it (contract §6.4). */
export function eventIdFor(taskId: string, status: string): string {
  return `evt_${createHash('sha256').update(`${taskId}\n${status}`).digest('base64url').slice(0, 27)}`;
}

export function pollKey(taskId: string, polls: number): string {
  return `poll:${taskId}:${polls}`;
}

/** The key of the watch that looks at a task at `at` (ms since the epoch): one job per moment, whichever instance arms it. */
export function watchKey(taskId: string, at: number): string {
  return `${taskId}:watch:${at}`;
}

/**
 * The key of a poll of a task that runs on its upstream's own task: the same on every instance that
 * polls in the same interval of `everyMs`, so the next poll is queued once; `start` for the first.
 */
export function followKey(taskId: string, everyMs: number | 'start'): string {
  return `${taskId}:follow:${everyMs === 'start' ? 'start' : Math.floor(Date.now() / everyMs)}`;
}

/** The delay before the poll after `polls` polls: `intervals` in order, the last one repeating. */
export function pollDelayOf(intervals: readonly number[], polls: number): number {
  return intervals[Math.min(polls, intervals.length - 1)]!;
}

/**
 * The delay before the next poll of work followed for `elapsedMs`, where no instance counts the polls:
 * the interval the schedule has reached by then (its delays added up), the last one repeating.
 */
export function pollDelayAfter(intervals: readonly number[], elapsedMs: number): number {
  let at = 0;
  for (const interval of intervals) {
    at += interval;
    if (at > elapsedMs) return interval;
  }
  return intervals.at(-1)!;
}

/**
 * The delivery of one state of a task to its callback URL (contract §6.2): the body a query returns,
 * under the state's event id, in the task's trace. Video polls, video queries and image tasks all
 * hand their states over through it.
 */
export function callbackJob(record: Pick<TaskRecord, 'id' | 'owner' | 'trace'>, url: string, status: string, body: unknown): DeliveryJob {
  return { eventId: eventIdFor(record.id, status), taskId: record.id, url, body: JSON.stringify(body), status, owner: record.owner, ...(record.trace ? { trace: record.trace } : {}) };
}
