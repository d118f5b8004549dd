// The scheduler's watch of an image task (docs/image-tasks.md "Restarts and several instances"): a job
// on the configured scheduler, so it runs on whichever instance the scheduler picks. A task that runs
// on its upstream's own task is followed (upstream-image-task.ts); one whose holder's lease lapsed (that
// instance stopped), or that passed its deadline, is ended `failed` (task_interrupted), its call booked
// by the "may have been under way" rule (ledger/lost-work.ts); so no task stays `running` for ever.
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { NextPoll } from '../../stores/scheduling/job-scheduler.js';
import type { ImageTaskRecord } from '../../stores/tasks/task-store.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { lostWorkUsage } from '../ledger/lost-work.js';
import { hasLapsed, nextLookAt } from '../leases/lease-terms.js';
import { watchKey } from '../tasks/task-keys.js';
import { isTerminalStatus } from '../tasks/task-state-order.js';
import type { ImageTaskEnding } from './image-task-ending.js';
import { viewOf } from './image-task-view.js';
import type { LocalRuns } from './local-runs.js';
import type { UpstreamImageTask } from './upstream-image-task.js';
import { getTaskOf, updateTaskOf } from '../tasks/task-records.js';

// a watch that finds the task still inside its deadline looks again just after it
const WATCH_MARGIN_MS = 1_000;

/** Why an unfinished task is ended: its holder stopped, its deadline passed, or this process closed while it waited. */
export type Interruption = 'lapsed' | 'deadline' | 'closing';

/** Arms the watch that looks at a task at `at` (ms since the epoch), just after it. */
export function watchAt(deps: GatewayDeps, taskId: string, at: number): Promise<void> {
  return deps.options.scheduler.schedulePoll(taskId, Math.max(0, at - Date.now()) + WATCH_MARGIN_MS, watchKey(taskId, at));
}

export class ImageTaskWatch {
  constructor(
    private readonly deps: GatewayDeps,
    private readonly runs: LocalRuns,
    private readonly ending: ImageTaskEnding,
    private readonly upstreamTask: UpstreamImageTask,
  ) {}

  /**
   * One watch (tasks/task-jobs.ts) of the task `first` as the scheduler's job read it: nothing to do
   * once it is terminal; once the lease of the instance holding it lapsed, or past its deadline, it is
   * ended `failed`, whichever instance ran it; else it looks again when the lease ends.
   */
  async watch(first: ImageTaskRecord): Promise<NextPoll | undefined> {
    const taskId = first.id;
    for (let round = 0; round < 8; round += 1) {
      // a lost compare-and-set reads the task again
      const record = round === 0 ? first : await getTaskOf(this.deps.options.store, taskId, 'image');
      // a task cancelled while its upstream task ran is followed to that task's end, for its books
      if (record && record.status === 'cancelled' && !record.usageReported && record.image.onUpstream && record.upstream.taskId) return await this.upstreamTask.follow(record);
      if (!record || isTerminalStatus(record.status)) return undefined;
      if (record.image.onUpstream && record.upstream.taskId) return await this.upstreamTask.follow(record);
      const now = Date.now();
      const lapsed = hasLapsed(record.image.leaseUntil, now);
      const next = nextLookAt(record.image.leaseUntil, record.image.deadline);
      if (!lapsed && next > now) return { delayMs: next - now + WATCH_MARGIN_MS, key: watchKey(taskId, next) };
      if (await this.interrupt(record, lapsed ? 'lapsed' : 'deadline')) return undefined;
    }
    throw new Error(`task ${taskId} kept changing while it was watched`);
  }

  /**
   * Ends an unfinished task `failed` (task_interrupted). A task whose upstream call had started is
   * booked as possibly paid, the gateway's loss (ledger/lost-work.ts); one that never reached its
   * upstream costs nothing. False when the record changed meanwhile.
   */
  async interrupt(record: ImageTaskRecord, why: Interruption): Promise<boolean> {
    const { options } = this.deps;
    const image = record.image;
    const local = this.runs.get(record.id);
    const started = this.runs.startedCall(record);
    const usage = lostWorkUsage({
      model: record.model,
      provider: local?.usage?.provider ?? record.upstream.provider,
      imagesAsked: image.images,
      started,
      ...(image.size !== undefined ? { sizeAsked: image.size } : {}),
      ...(image.quality !== undefined ? { quality: image.quality } : {}),
    });
    const error = new GatewayError({ status: 502, code: ERROR_CODES.taskInterrupted, message: interruptionMessage(why, started, options.ledger.chargeFailedWork) });
    // the terminal event's books: an unknown outcome, lost by the gateway (docs/tenancy-and-billing.md "The books")
    const view = viewOf(record, 'failed', { error: error.toJSON().error });
    const updated = await updateTaskOf(options.store, record, { status: 'failed', result: { ...view }, usageReported: true });
    if (!updated) return false;
    await this.ending.ended(updated, view, { usage, end: { error }, caller: undefined });
    // still waiting in this process's queue: its place (and the caller's share) is free at once;
    // still running here past its budget: its call is cut, so the slot frees too
    this.runs.dropWaiting(record);
    this.runs.get(record.id)?.controller.abort(error);
    return true;
  }
}

/**
 * What an interrupted task says: why it ended, and what may have been made. A started call's outcome
 * is unknown: the upstream may have generated (and billed) the images, which never arrived.
 */
function interruptionMessage(why: Interruption, started: boolean, charged: boolean): string {
  const cause =
    why === 'lapsed'
      ? 'The gateway instance holding the task stopped'
      : why === 'closing'
        ? 'The gateway instance holding the task shut down'
        : started
          ? 'The task did not finish within its upstream deadline'
          : 'The task waited too long for an upstream slot';
  if (!started) return `${cause} before its upstream call started; nothing was generated, and its charge was given back.`;
  const charge = charged ? 'its images stay charged as not delivered' : 'its charge was given back';
  return `${cause} while the upstream was working; its outcome is unknown (the upstream may have generated the images, which were not received), and ${charge}. The task is not run again: submit it again for a new generation.`;
}
