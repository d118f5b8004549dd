// The executor of image tasks (docs/image-tasks.md), for the one task service (tasks/task-service.ts).
// Why it differs from video's: the work runs HERE. A submit is checked, resolved and charged like the
// synchronous request, answered at once with a task, and run by this process in its fair queue under a
// lease any instance can see, so a watch must end a task whose holder stopped; only a single call to an
// upstream with a task API of its own is handed to that vendor and followed from any instance. So its
// charge is the images asked, settled by what the run made, and it can be cancelled. The parts: the
// runs this process holds (local-runs.ts) and the run of each (image-task-run.ts), the watch that ends
// a task nobody finishes (image-task-watch.ts), the follow of work handed to an upstream's own task
// (upstream-image-task.ts), and what a terminal state is worth (image-task-ending.ts). The task core
// (tasks/) gives them the caller snapshot, the callback check and hand-over, the scheduler's keys and
// jobs, and the store's compare-and-set that every task write uses. The store never holds image bytes.
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { NextPoll } from '../../stores/scheduling/job-scheduler.js';
import type { ImageTaskRecord } from '../../stores/tasks/task-store.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { type WholeAnswer, type ImageCall, type PreparedImage, imagesAskedOf, prepareImage, pricedAskOf, rebasePrepared } from '../image-pipeline/image-pipeline.js';
import { mayHaveBeenUnderWay } from '../ledger/lost-work.js';
import { nextLookAt } from '../leases/lease-terms.js';
import { checkCallbackTarget } from '../tasks/callback-target.js';
import type { TaskExecutor } from '../tasks/task-executor.js';
import { findOwnTask, getTaskOf, updateTaskOf } from '../tasks/task-records.js';
import { isTerminalStatus } from '../tasks/task-state-order.js';
import type { QuotaCharge } from '../tenancy/quotas.js';
import type { Quoted } from '../tenancy/quote.js';
import { withCharge } from '../tenancy/with-charge.js';
import { type Outcome, type Usage, type UseCaseRequest, settle, usageFor } from '../use-case.js';
import { ImageTaskEnding } from './image-task-ending.js';
import { ImageTaskRunner } from './image-task-run.js';
import { type ImageTaskView, viewOf } from './image-task-view.js';
import { ImageTaskWatch, watchAt } from './image-task-watch.js';
import { LocalRuns } from './local-runs.js';
import { IMAGE_TASK_PREFIX, newImageTaskRecord, runRequest } from './new-image-task.js';
import { checkKeepableFormat, queueRefusal } from './submit-refusals.js';
import { UpstreamImageTask } from './upstream-image-task.js';

export type { ImageTaskView } from './image-task-view.js';
export { TaskNotRun } from './local-runs.js';

/** An accepted submit: the task as created, and, for `Prefer: wait`, how its run in this process ends. */
export interface SubmittedImageTask {
  task: ImageTaskView;
  /** Resolves once the run here ends: the answer to write as a synchronous one, or the failure. */
  finished: Promise<Outcome<WholeAnswer>>;
}

export interface ImageTaskSubmit extends ImageCall {
  /** The caller's callback URL (a JSON field, or a form field on edits), unchecked. */
  callbackUrl: unknown;
  /** The request's bearer key: never stored, and never allowed inside the callback URL. */
  callerKey: string;
}

/** What image tasks exchange with their routes (tasks/task-executor.ts). */
export interface ImageTaskTypes {
  create: ImageTaskSubmit;
  created: SubmittedImageTask;
  read: ImageTaskView;
}

export class ImageTaskExecutor implements TaskExecutor<'image', ImageTaskTypes> {
  readonly kind = 'image';
  readonly idPrefix = IMAGE_TASK_PREFIX;
  /** The tasks this process holds, queued or running, and their leases (docs/image-tasks.md "Restarts and several instances"). */
  private readonly runs: LocalRuns;
  private readonly ending: ImageTaskEnding;
  private readonly runner: ImageTaskRunner;
  private readonly watches: ImageTaskWatch;

  constructor(private readonly deps: GatewayDeps) {
    this.runs = new LocalRuns(deps.options);
    this.ending = new ImageTaskEnding(deps, this.runs);
    this.runner = new ImageTaskRunner(deps, this.runs, this.ending);
    this.watches = new ImageTaskWatch(deps, this.runs, this.ending, new UpstreamImageTask(deps, this.ending));
  }

  /**
   * Checks, resolves and charges the request exactly as the synchronous route would, then records the
   * task and queues its run. Bad input, a refused charge and a full queue fail here, with nothing kept.
   * A dry run is checked and resolved the same way and answered the quote of the charge: no place in
   * the queue, no task (docs/tenancy-and-billing.md "Quotes before work").
   */
  create(from: UseCaseRequest, call: ImageTaskSubmit): Promise<Outcome<SubmittedImageTask | Quoted>> {
    const usage = usageFor(call.model);
    const { options } = this.deps;
    const { dryRun } = from;
    const { queue } = this.runs;
    return settle(usage, async () => {
      checkKeepableFormat(call, options.storage);
      const callbackUrl = await checkCallbackTarget(options, call.callbackUrl, call.callerKey);
      const ready = await prepareImage(this.deps, from, call);
      // a quote holds no place: how full the queue is now says nothing of when the real submit comes
      const admission = dryRun ? 'ok' : queue.admit(from.caller.id);
      if (admission !== 'ok') throw queueRefusal(admission);
      return { ready, callbackUrl };
    }).then((checked) => {
      if (!checked.ok) return { ok: false, error: checked.error, usage };
      const { ready, callbackUrl } = checked.answer;
      const images = imagesAskedOf(ready);
      usage.imagesAsked = images;
      // charged now, settled at the terminal state (docs/image-tasks.md "What is charged")
      // a money budget reserves the most the images may cost, settled when the task ends
      const priced = pricedAskOf(ready, usage);
      const cost = { requests: 1, images, priced };
      return withCharge(this.deps.quotas, from.caller, cost, usage, (charge) => this.createCharged(from, call, ready, callbackUrl, charge, usage), 'by-work', dryRun).then((created) => {
        // refused or not written: the place admit held in the queue is given back (queued by create otherwise)
        if (!created.ok && !dryRun) queue.release(from.caller.id);
        return created;
      });
    });
  }

  private async createCharged(from: UseCaseRequest, call: ImageTaskSubmit, ready: PreparedImage, callbackUrl: string | undefined, charge: QuotaCharge, usage: Usage): Promise<SubmittedImageTask> {
    const { options } = this.deps;
    const { caller } = from;
    const record = newImageTaskRecord(this.deps, { from, model: call.model, route: call.route, callerKey: call.callerKey, ready, callbackUrl, charge, usage });
    const state = record.image;
    // the watch runs on whichever instance the scheduler picks; if this one stops, it ends the task. It
    // is armed before the record is written: a scheduler that is down leaves no task nothing would end,
    // and a watch whose record was never written finds nothing to do
    await watchAt(this.deps, record.id, nextLookAt(state.leaseUntil, state.deadline));
    // no record, nothing to settle later: a failure here is refunded by withCharge
    await options.store.createTask(record);
    options.telemetry.recordTaskTransition('queued');
    let settleRun!: (outcome: Outcome<WholeAnswer>) => void;
    const finished = new Promise<Outcome<WholeAnswer>>((resolve) => (settleRun = resolve));
    const controller = new AbortController();
    // the run is made for the task, not the request: the request (its sockets, its body) can go
    const taskFrom = runRequest(caller, controller, from.resultBase);
    this.runs.hold(record.id, caller.id, { ready: rebasePrepared(ready, taskFrom), caller, controller, settle: settleRun, charge }, () =>
      options.telemetry.detached(() => options.telemetry.taskRun(record.model, record.trace, () => this.runner.run(record.id))),
    );
    return { task: viewOf(record, record.status), finished };
  }

  /** `GET /v1/images/tasks/{id}`: the caller's task, or the same 404 for another's, an unknown or an old one. */
  get(from: UseCaseRequest, id: string): Promise<Outcome<ImageTaskView>> {
    const usage = usageFor('');
    return settle(usage, async () => {
      const record = await this.owned(from, id);
      usage.model = record.model;
      return this.present(record);
    });
  }

  /**
   * `POST /v1/images/tasks/{id}/cancel`: a task not yet terminal becomes `cancelled`. A queued task's
   * charge comes back whole; a running one's upstream call is aborted, but what it may have started is
   * paid work, so its images stay charged (docs/image-tasks.md "Cancelling").
   */
  cancel(from: UseCaseRequest, id: string): Promise<Outcome<ImageTaskView>> {
    const usage = usageFor('');
    return settle(usage, async () => {
      for (let round = 0; round < 8; round += 1) {
        const record = await this.owned(from, id);
        usage.model = record.model;
        if (record.status === 'cancelled') return this.present(record);
        if (isTerminalStatus(record.status)) {
          throw new GatewayError({
            status: 409,
            code: ERROR_CODES.taskNotCancellable,
            message: `Task '${id}' has already ended (${this.present(record).status}); only a queued or running task can be cancelled.`,
          });
        }
        const local = this.runs.get(record.id);
        const started = this.runs.startedCall(record);
        // work handed to the upstream's own task goes on there: what it made is known when it ends, and
        // charged then (upstream-image-task.ts); the task is cancelled for its caller now
        const followed = started && record.image.onUpstream === true && record.upstream.taskId !== '';
        const view = viewOf(record, 'cancelled');
        const updated = await updateTaskOf(this.deps.options.store, record, { status: 'cancelled', result: { ...view }, usageReported: !followed });
        if (!updated) continue;
        const run = this.runs.get(record.id);
        // aborted before its call is made, the call is never sent: nothing was made, everything comes back
        const cancelled = GatewayError.invalidRequest('the task was cancelled');
        run?.controller.abort(cancelled);
        if (followed) {
          this.deps.options.telemetry.recordTaskTransition('cancelled');
          this.ending.deliver(updated, view);
        } else await this.ending.ended(updated, view, { usage: cancelledUsage(record, started, run?.usage ?? local?.usage), end: { error: cancelled }, caller: run?.caller });
        this.runs.dropWaiting(record);
        return view;
      }
      throw new Error(`task ${id} kept changing while it was cancelled`);
    });
  }

  /** The scheduler's watch of an image task (image-task-watch.ts). */
  follow(record: ImageTaskRecord): Promise<NextPoll | undefined> {
    return this.watches.watch(record);
  }

  /**
   * The gateway closes (docs/image-tasks.md "Restarts and several instances"): the tasks still waiting
   * in this process would never start, so each ends now, `task_interrupted` and refunded, its callback
   * queued, rather than when its watch fires. Tasks already running keep their call until the sockets close.
   */
  async close(): Promise<void> {
    this.runs.closing = true;
    await Promise.all(
      this.runs.waiting().map(async (id) => {
        for (let round = 0; round < 8; round += 1) {
          const record = await getTaskOf(this.deps.options.store, id, 'image').catch(() => undefined);
          if (!record || record.status !== 'queued') return;
          if (await this.watches.interrupt(record, 'closing').catch(() => true)) return;
        }
      }),
    );
  }

  /** The caller's own image task, kept for `limits.imageTasks.keepSeconds`; anything else is the one 404. */
  private async owned(from: UseCaseRequest, id: string): Promise<ImageTaskRecord> {
    const record = await findOwnTask(this.deps.options.store, this, from.caller.id, id);
    if (!record || Date.now() - record.createdAt > this.deps.options.imageTasks.keepMs) {
      throw GatewayError.notFound(`Image task '${id.slice(0, 64)}' was not found.`);
    }
    return record;
  }

  /** A terminal task as recorded; a succeeded one whose upstream URLs have outlived their lifetime reads `expired`. */
  private present(record: ImageTaskRecord): ImageTaskView {
    const recorded = record.result as ImageTaskView | undefined;
    if (!recorded) return viewOf(record, record.status);
    const image = record.image;
    if (recorded.status === 'succeeded' && !image?.durable && image?.finishedAt !== undefined && Date.now() - image.finishedAt > this.deps.options.imageTasks.upstreamUrlMs) {
      return viewOf(record, 'expired');
    }
    return recorded;
  }
}

/**
 * A cancelled task's work: nothing when its call had not started; else what the call may have made
 * (the "may have been under way" rule, ledger/lost-work.ts), lost by the caller's own act.
 */
function cancelledUsage(record: ImageTaskRecord, started: boolean, run: Usage | undefined): Usage | undefined {
  if (!started) return undefined;
  const work = run ?? usageFor(record.model);
  mayHaveBeenUnderWay(work, record.upstream.provider, record.image.images);
  work.lostBy = 'cancelled';
  return work;
}
