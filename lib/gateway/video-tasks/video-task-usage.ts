// What a video task's state changes are worth to the operator: the transition and video-seconds
// metrics, and once per task, by the one instance whose compare-and-set recorded it, the terminal usage
// event (docs/tenancy-and-billing.md: bill video on it), its books made by the one ledger rule
// (ledger/reckoning.ts) as an image task's are, with the quota slot and unused video-seconds given back.
// Video differs from images in what is charged: seconds and a concurrent-task slot, not images.
import type { VideoTaskRecord } from '../../stores/tasks/task-store.js';
import type { ResolvedOptions } from '../resolve-options.js';
import type { Quotas } from '../tenancy/quotas.js';
import { usageOf } from '../../json/json-values.js';
import { messageOf } from '../tasks/background-work.js';
import { callerOfTask } from '../tasks/caller-snapshot.js';
import { Pricing } from '../ledger/pricing.js';
import { bookFields } from '../ledger/reckoning.js';
import type { Usage } from '../use-case.js';
import { emitTaskUsage } from '../tasks/task-usage-event.js';
import { updateTaskOf } from '../tasks/task-records.js';

export class VideoTaskUsage {
  constructor(
    private readonly options: ResolvedOptions,
    private readonly quotas: Quotas,
  ) {}

  /** The metrics of a recorded state change: the transition, and a finished video's seconds. */
  recordTransition(record: VideoTaskRecord, state: Record<string, unknown>): void {
    const status = String(state.status);
    this.options.telemetry.recordTaskTransition(status);
    if (status === 'succeeded' && typeof state.duration === 'number' && state.duration > 0) {
      this.options.telemetry.recordVideoSeconds(state.duration, record.upstream.provider, record.model);
    }
  }

  /** Marks a terminal record as reported; the one writer that wins the compare-and-set reports it. */
  async reportTerminal(record: VideoTaskRecord, result: Record<string, unknown>): Promise<void> {
    const updated = await updateTaskOf(this.options.store, record, { usageReported: true });
    if (updated) this.terminalReached(updated, result);
  }

  /**
   * Called exactly once per task, by the instance whose compare-and-set recorded `usageReported`:
   * frees the owner's concurrent-task slot, gives back the video-seconds of a task that did not
   * succeed (nothing was generated), and emits the task's one terminal usage event with what Ark
   * reported (duration, resolution, usage tokens), not what was asked.
   */
  terminalReached(record: VideoTaskRecord, result: Record<string, unknown>): void {
    const status = String(result.status);
    const failed = (error: unknown): void => this.options.logger.warn({ taskId: record.id, error: messageOf(error) }, 'quota release failed');
    const charged = record.charge;
    const ends = charged?.windowEnds;
    if (charged?.slot) this.quotas.releaseVideoTask(record.owner, ends?.videoTasks).catch(failed);
    const seconds = typeof result.duration === 'number' ? result.duration : undefined;
    const reservedSeconds = charged?.videoSeconds ?? 0;
    if (reservedSeconds > 0) {
      // nothing generated: every second back; a shorter video than reserved (`duration: -1`): the rest back
      const unused = status !== 'succeeded' ? reservedSeconds : seconds !== undefined && seconds > 0 ? reservedSeconds - Math.ceil(seconds) : 0;
      if (unused > 0) this.quotas.refundVideoSeconds(record.owner, unused, ends?.videoSeconds).catch(failed);
    }
    const video = status === 'succeeded' ? { video: { ...(seconds !== undefined ? { seconds } : {}), ...(typeof result.resolution === 'string' ? { resolution: result.resolution } : {}) } } : {};
    const upstreamUsage = usageOf(result).usage;
    // what Ark may bill: the seconds it made; a task that did not succeed made nothing it bills
    const made = status === 'succeeded' && seconds !== undefined && seconds > 0 ? seconds : 0;
    const usage: Usage = {
      model: record.model,
      // priced as the upstream model the task was created on when the table lacks the caller's name
      ...(record.upstream.model !== undefined ? { upstreamModel: record.upstream.model } : {}),
      images: 0,
      ...(upstreamUsage ? { upstreamUsage } : {}),
      attempts: [{ provider: record.upstream.provider, id: record.upstream.taskId, images: 0, ...(made > 0 ? { seconds: made } : {}), outcome: status === 'succeeded' ? 'made' : 'failed' }],
    };
    // the books of the one ledger rule (ledger/reckoning.ts): the video's vendor work, and the seconds
    // of video priced without the per-request fee (the create's own event carried it)
    const books = bookFields(usage, { noFee: true }, this.options.ledger, video.video);
    // the money reserved at create (its fee and the most its seconds may cost), settled to the fee and what the video cost
    if (charged?.budget !== undefined) {
      const fee =
        Pricing.micros(this.options.pricing?.costOf({ model: record.model, ...(usage.upstreamModel !== undefined ? { upstreamModel: usage.upstreamModel } : {}), status: 200, images: 0 })) ?? 0;
      const actual = fee + (status === 'succeeded' ? (Pricing.micros(books.cost) ?? 0) : 0);
      this.quotas.settleBudget(record.owner, charged.budget, actual, ends?.budget).catch(failed);
    }
    const error = result.error as { code?: unknown } | null | undefined;
    emitTaskUsage(this.options, () => ({
      caller: callerOfTask(record),
      route: 'video.tasks',
      model: record.model,
      provider: record.upstream.provider,
      ...(usage.upstreamModel !== undefined ? { upstreamModel: usage.upstreamModel } : {}),
      status: 200,
      latencyMs: Date.now() - record.createdAt,
      task: { id: record.id, status },
      ...books,
      ...video,
      ...(upstreamUsage ? { upstreamUsage } : {}),
      ...(error && typeof error.code === 'string' ? { errorCode: error.code } : {}),
      // the task's durable copies, counted once with the task whichever request or poll stored them
      ...(record.stored ? { storedBytes: record.stored.bytes } : {}),
      // the stored video's Content Credentials (read once when it was stored)
      ...(record.stored?.provenance ? { provenance: [record.stored.provenance.c2pa] } : {}),
      // a task that made nothing cost nothing; a priced model says so with amount 0
      ...(books.cost ? { cost: status === 'succeeded' ? books.cost : { amount: 0, currency: books.cost.currency } } : {}),
    }));
  }
}
