// What an image task's terminal state is worth, once per task (the writer whose compare-and-set ended
// it): the books of its work (ledger/reckoning.ts) give back the images charged at submit that the
// tenant is not charged for and settle its money budget, then the one terminal usage event
// (tasks/task-usage-event.ts), the metric and the callback (tasks/callback-hand-over.ts).
import { GatewayError } from '../../errors/gateway-error.js';
import type { ImageTaskRecord } from '../../stores/tasks/task-store.js';
import type { Caller } from '../../types.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { Pricing } from '../ledger/pricing.js';
import { type Reckoning, type WorkEnd, bookFields, costOfBooks, reckon } from '../ledger/reckoning.js';
import { messageOf } from '../tasks/background-work.js';
import { handOverState } from '../tasks/callback-hand-over.js';
import { callerOfTask } from '../tasks/caller-snapshot.js';
import { emitTaskUsage } from '../tasks/task-usage-event.js';
import { type Usage, usageFor } from '../use-case.js';
import type { ImageTaskView } from './image-task-view.js';
import type { LocalRuns } from './local-runs.js';

/** How a task's work ended: its usage (the upstream attempts) and the ledger's end. */
export interface TaskEnd {
  usage: Usage | undefined;
  end: WorkEnd;
  caller: Caller | undefined;
}

export class ImageTaskEnding {
  constructor(
    private readonly deps: GatewayDeps,
    private readonly runs: LocalRuns,
  ) {}

  /**
   * Everything a terminal state is worth: the books settle the charge and make the one terminal usage
   * event; then the metric and the callback (unless the caller was already told: a cancel whose
   * upstream task is followed to its end).
   */
  async ended(record: ImageTaskRecord, view: ImageTaskView, how: TaskEnd, told: { told?: boolean } = {}): Promise<void> {
    const { options } = this.deps;
    const image = record.image;
    const usage = terminalUsage(record, how.usage);
    // the per-request fee was the submit's
    const end: WorkEnd = { ...how.end, noFee: true };
    const books = reckon(usage, end, options.ledger);
    // the images charged at submit that the tenant is not charged for come back
    const back = image.images - books.charged;
    if (back > 0) await this.refundImages(record, back);
    await this.settleBudget(record, usage, books);
    if (!told.told) options.telemetry.recordTaskTransition(view.status);
    this.report(record, view, how, usage, end);
    if (!told.told) this.deliver(record, view);
  }

  /** Hands a state to callback delivery (at least once, signed: delivery-jobs.ts), when the task has a callback. */
  deliver(record: ImageTaskRecord, view: ImageTaskView): void {
    const { options } = this.deps;
    handOverState(options, record, view.status, view).catch((error: unknown) => options.logger.error({ taskId: record.id, error: messageOf(error) }, 'image task callback not queued'));
  }

  private async refundImages(record: ImageTaskRecord, images: number): Promise<void> {
    const charged = record.charge;
    if (!charged) return;
    const taken = charged.images ?? 0;
    const local = this.runs.get(record.id);
    // the charge object of this process knows the window; another instance gives back by the record
    if (local) return local.charge.refund(['images'], { images: Math.min(images, taken) });
    await this.deps.quotas.refundImages(record.owner, Math.min(images, taken), charged.windowEnds?.images);
  }

  /**
   * A money budget reserved at submit (its fee and the most its images may cost), settled to what the
   * task cost: the fee, and the images the books charge the tenant (docs/tenancy-and-billing.md "The books").
   */
  private async settleBudget(record: ImageTaskRecord, usage: Usage, books: Reckoning): Promise<void> {
    const reserved = record.charge?.budget;
    if (reserved === undefined) return;
    const cost = costOfBooks(usage, { ...books, billable: true }, {}, this.deps.options.pricing);
    await this.deps.quotas.settleBudget(record.owner, reserved, Pricing.micros(cost) ?? 0, record.charge?.windowEnds?.budget);
  }

  /** The task's one terminal usage event (docs/tenancy-and-billing.md "The books"). */
  private report(record: ImageTaskRecord, view: ImageTaskView, how: TaskEnd, usage: Usage, end: WorkEnd): void {
    const { options } = this.deps;
    emitTaskUsage(options, () => {
      const errorCode = view.error && typeof view.error.code === 'string' ? view.error.code : undefined;
      const failure = how.end.error;
      return {
        caller: how.caller ?? callerOfTask(record),
        route: record.image.route,
        model: record.model,
        provider: usage.provider ?? record.upstream.provider,
        ...(usage.upstreamModel !== undefined ? { upstreamModel: usage.upstreamModel } : {}),
        ...(usage.upstreamImages !== undefined ? { upstreamImages: usage.upstreamImages } : {}),
        status: view.status === 'succeeded' || view.status === 'cancelled' ? 200 : GatewayError.is(failure) ? failure.status : 500,
        latencyMs: Date.now() - record.createdAt,
        ...(usage.upstreamRequestId !== undefined ? { upstreamRequestId: usage.upstreamRequestId } : {}),
        ...(errorCode !== undefined ? { errorCode } : {}),
        ...(usage.storedBytes !== undefined ? { storedBytes: usage.storedBytes } : {}),
        ...(usage.provenance !== undefined ? { provenance: usage.provenance } : {}),
        ...(usage.imageSizes !== undefined ? { imageSizes: usage.imageSizes } : {}),
        ...(usage.upstreamUsage !== undefined ? { upstreamUsage: usage.upstreamUsage } : {}),
        ...(record.image.quality !== undefined ? { imageQuality: record.image.quality } : {}),
        ...bookFields(usage, end, options.ledger),
        task: { id: record.id, status: view.status },
      };
    });
  }
}

/** The run's usage as the task's books read it: the task's model, the images it was charged, the size and quality asked. */
function terminalUsage(record: ImageTaskRecord, usage: Usage | undefined): Usage {
  const image = record.image;
  const terminal = usage ?? usageFor(record.model);
  terminal.model = record.model;
  // a task ended on another instance is priced by the upstream model its record keeps
  if (terminal.upstreamModel === undefined && record.upstream.model !== undefined) terminal.upstreamModel = record.upstream.model;
  terminal.imagesAsked = image.images;
  if (image.size !== undefined) terminal.sizeAsked = image.size;
  if (image.quality !== undefined) terminal.imageQuality = image.quality;
  return terminal;
}
