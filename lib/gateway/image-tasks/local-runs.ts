// The image tasks this process holds (docs/image-tasks.md "Restarts and several instances"): each
// accepted task waits in the fair queue (fair-queue.ts) and then runs here, while a lease on its record,
// renewed by this process, tells the other instances that it is held. A task another writer ended (a
// cancel, a watch) is let go: its place in the queue is freed and a caller waiting on it is told.
import { GatewayError } from '../../errors/gateway-error.js';
import type { Caller } from '../../types.js';
import type { ImageTaskRecord } from '../../stores/tasks/task-store.js';

import type { WholeAnswer, PreparedImage } from '../image-pipeline/image-pipeline.js';
import { leaseEnd } from '../leases/lease-terms.js';
import { LeaseRenewer } from '../leases/lease-renewer.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { isTerminalStatus } from '../tasks/task-state-order.js';
import type { QuotaCharge } from '../tenancy/quotas.js';
import { type Outcome, type Usage, usageFor } from '../use-case.js';
import { FairQueue } from './fair-queue.js';
import { getTaskOf, updateTaskOf } from '../tasks/task-records.js';

/**
 * The outcome of a task whose run here does not stand: it was cancelled, or ended by the watch, before
 * its run started or before the run's result was recorded. A caller waiting with `Prefer: wait` is then
 * answered the task as recorded, never the run's images (docs/image-tasks.md "Cancelling").
 */
export class TaskNotRun extends Error {
  constructor(taskId: string) {
    super(`image task ${taskId} did not end with its run here: another writer ended it first`);
    this.name = 'TaskNotRun';
  }
}

/** What runs a task in this process: the prepared call and the cancellation of its upstream work. */
export interface LocalRun {
  ready: PreparedImage;
  caller: Caller;
  controller: AbortController;
  settle: (outcome: Outcome<WholeAnswer>) => void;
  charge: QuotaCharge;
  /** The run's usage once it began: `attempted` says whether an upstream call was made. */
  usage?: Usage;
}

export class LocalRuns {
  readonly queue: FairQueue;
  /** Tasks accepted by this process and not yet ended, by id. */
  private readonly runs = new Map<string, LocalRun>();
  /** Set by close(): a slot that frees now starts nothing (the waiting tasks are ended instead). */
  closing = false;
  /** Renews the lease of every task this process holds, queued or running. */
  private readonly leases: LeaseRenewer;

  constructor(private readonly options: ResolvedOptions) {
    const config = options.imageTasks;
    this.queue = new FairQueue({ concurrency: config.concurrency, perCaller: config.perCallerConcurrency, maxQueued: config.maxQueued, maxQueuedPerCaller: config.maxQueuedPerCaller });
    this.leases = new LeaseRenewer(config.lease.renewMs, (id) => this.renewLease(id), options.logger);
  }

  get(taskId: string): LocalRun | undefined {
    return this.runs.get(taskId);
  }

  has(taskId: string): boolean {
    return this.runs.has(taskId);
  }

  /** Holds a task accepted here: its run is queued, and its lease renewed until it is let go. */
  hold(taskId: string, owner: string, run: LocalRun, start: () => Promise<void>): void {
    this.runs.set(taskId, run);
    this.leases.hold(taskId);
    this.queue.push(owner, taskId, start);
  }

  /** The tasks held here whose run has not begun. */
  waiting(): string[] {
    return [...this.runs.entries()].filter(([, run]) => run.usage === undefined).map(([id]) => id);
  }

  /**
   * Whether the task's upstream call may have started: a run of this process knows whether its call
   * was made; another instance's is assumed made once the task is marked running.
   */
  startedCall(record: ImageTaskRecord): boolean {
    const local = this.runs.get(record.id);
    return record.image.startedAt !== undefined && (local === undefined || local.usage?.attempted === true);
  }

  /**
   * One renewal of the lease this process holds on a task. A task another instance ended meanwhile (a
   * cancel, or a watch that found the lease lapsed while this process could not reach the store) is
   * let go: its run here is stopped.
   */
  private async renewLease(taskId: string): Promise<void> {
    const { store, imageTasks } = this.options;
    const record = await getTaskOf(store, taskId, 'image');
    if (!this.runs.has(taskId)) return;
    if (!record || isTerminalStatus(record.status)) {
      this.runs.get(taskId)?.controller.abort(GatewayError.invalidRequest('the task was ended by another instance'));
      if (record) this.dropWaiting(record);
      this.leases.release(taskId);
      return;
    }
    if (record.image.onUpstream) return this.leases.release(taskId);
    // a lost race (a run's own write) is fine: the lease is renewed again at the next tick
    await updateTaskOf(store, record, { image: { ...record.image, leaseUntil: leaseEnd(imageTasks.lease, Date.now()) } });
  }

  /** This process no longer holds the task: its lease is not renewed any more. */
  letGo(taskId: string): void {
    this.runs.delete(taskId);
    this.leases.release(taskId);
  }

  /** A task ended by a cancel or its watch while it waited here: its run will never start, so this process lets go of it now. */
  dropWaiting(record: ImageTaskRecord): void {
    const run = this.runs.get(record.id);
    if (!run || !this.queue.remove(record.owner, record.id)) return;
    this.letGo(record.id);
    run.settle({ ok: false, error: new TaskNotRun(record.id), usage: usageFor(record.model) });
  }
}
