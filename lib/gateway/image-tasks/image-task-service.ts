// Asynchronous image tasks (docs/image-tasks.md): a submit is checked, resolved and charged like the
// synchronous request, then answered at once with a task; the work runs here, in this process's fair
// queue (fair-queue.ts), through the same image use case (image-pipeline.ts), and its terminal state is
// recorded in the TaskStore with the compare-and-set every task write uses. A watch job on the
// configured scheduler ends a task that nobody finishes (its instance stopped) as `failed`, on
// whichever instance runs it, so no task stays `running` for ever. The store never holds image bytes.
import { randomBytes } from 'node:crypto';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ImageGenerationResponse } from '../../images/image-generation-response.js';
import { isObject, parseJsonBody } from '../../json/json-values.js';
import type { NextPoll } from '../../stores/scheduling/job-scheduler.js';
import type { ImageTaskState, TaskChanges, TaskRecord } from '../../stores/tasks/task-store.js';
import type { Caller } from '../../types.js';
import type { GatewayDeps } from '../gateway-deps.js';
import {
  type WholeAnswer,
  type ImageCall,
  type PreparedImage,
  firstUpstreamOf,
  imagesAskedOf,
  prepareImage,
  pricedAskOf,
  rebasePrepared,
  runBudgetOf,
  runPreparedImage,
  singleNativeCall,
} from '../image-pipeline.js';
import type { CallContext } from '../../providers/call-context.js';
import type { UpstreamImageTasks } from '../../providers/provider.js';
import { capabilityOf } from '../../providers/registry.js';
import type { Upstream } from '../../types.js';
import { rehostImageAnswer } from '../rehost-images.js';
import { resolveUpstreams } from '../resolve-upstreams.js';
import { NEVER_ABORTED, messageOf } from '../tasks/background-work.js';
import { callerOfTask, snapshotCaller } from '../tasks/caller-snapshot.js';
import { checkCallbackTarget } from '../tasks/callback-target.js';
import type { TaskWatches } from '../tasks/task-jobs.js';
import { callbackJob } from '../tasks/task-keys.js';
import { taskUpstreamAmong } from '../tasks/upstream-task-state.js';
import { isTerminalStatus } from '../tasks/task-state-order.js';
import type { QuotaCharge } from '../tenancy/quotas.js';
import { pricedWork, withCharge } from '../tenancy/with-charge.js';
import type { Quoted } from '../tenancy/quote.js';
import { Pricing } from '../tenancy/pricing.js';
import type { Cost } from '../../options/pricing.js';
import { type Cancellation, type Outcome, type Usage, type UseCaseRequest, attempting, mayHaveBeenPaid, settle, usageFor } from '../use-case.js';
import { FairQueue } from './fair-queue.js';

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

const IMAGE_TASK_ID = /^imgtask_[A-Za-z0-9_-]{22}$/;
// a watch that finds the task still inside its deadline looks again just after it
const WATCH_MARGIN_MS = 1_000;
// DashScope keeps a task 24 h (upstreams §1.5): following it longer would only read UNKNOWN
const UPSTREAM_TASK_LIFETIME_MS = 24 * 3600_000;

/** The task as a query answers it (docs/image-tasks.md): `result` once succeeded, `error` once failed. */
export interface ImageTaskView {
  id: string;
  object: 'image.task';
  status: string;
  created: number;
  model: string;
  result?: Record<string, unknown>;
  error?: Record<string, unknown>;
}

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

type NativeCall = NonNullable<ReturnType<typeof singleNativeCall>>;

/** What runs a task in this process: the prepared call and the cancellation of its upstream work. */
interface LocalRun {
  ready: PreparedImage;
  caller: Caller;
  controller: AbortController;
  settle: (outcome: Outcome<WholeAnswer>) => void;
  charge: QuotaCharge;
  /** The run's usage once it began: `attempted` says whether an upstream call was made. */
  usage?: Usage;
}

export class ImageTaskService implements TaskWatches {
  private readonly queue: FairQueue;
  /** Tasks accepted by this process and not yet ended, by id. */
  private readonly local = new Map<string, LocalRun>();
  /** Set by close(): a slot that frees now starts nothing (the waiting tasks are ended instead). */
  private closing = false;

  constructor(private readonly deps: GatewayDeps) {
    const config = deps.options.imageTasks;
    this.queue = new FairQueue({ concurrency: config.concurrency, perCaller: config.perCallerConcurrency, maxQueued: config.maxQueued, maxQueuedPerCaller: config.maxQueuedPerCaller });
  }

  owns(taskId: string): boolean {
    return IMAGE_TASK_ID.test(taskId);
  }

  /** How many tasks wait and run in this process (the bench reads it). */
  get load(): { queued: number; running: number } {
    return this.queue.size;
  }

  /**
   * Checks, resolves and charges the request exactly as the synchronous route would, then records the
   * task and queues its run. Bad input, a refused charge and a full queue fail here, with nothing kept.
   * A dry run is checked and resolved the same way and answered the quote of the charge: no place in
   * the queue, no task (docs/tenancy-and-billing.md "Quotes before work").
   */
  submit(from: UseCaseRequest, call: ImageTaskSubmit): Promise<Outcome<SubmittedImageTask | Quoted>> {
    const usage = usageFor(call.model);
    const { options } = this.deps;
    const { dryRun } = from;
    return settle(usage, async () => {
      if (!options.storage && asksBase64(responseFormatOf(call))) {
        throw GatewayError.invalidRequest(
          "response_format 'b64_json' needs result storage for an asynchronous task: the gateway keeps no image bytes with a task. Ask for 'url', or configure the `storage` option.",
          'response_format',
        );
      }
      const callbackUrl = await checkCallbackTarget(options, call.callbackUrl, call.callerKey);
      const ready = await prepareImage(this.deps, from, call);
      // a quote holds no place: how full the queue is now says nothing of when the real submit comes
      const admission = dryRun ? 'ok' : this.queue.admit(from.caller.id);
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
      return withCharge(this.deps.quotas, from.caller, cost, usage, (charge) => this.create(from, call, ready, callbackUrl, charge, usage), 'by-work', dryRun).then((created) => {
        // refused or not written: the place admit held in the queue is given back (queued by create otherwise)
        if (!created.ok && !dryRun) this.queue.release(from.caller.id);
        return created;
      });
    });
  }

  private async create(from: UseCaseRequest, call: ImageTaskSubmit, ready: PreparedImage, callbackUrl: string | undefined, charge: QuotaCharge, usage: Usage): Promise<SubmittedImageTask> {
    const { options } = this.deps;
    const { caller } = from;
    const now = Date.now();
    const images = imagesAskedOf(ready);
    const snapshot = snapshotCaller(caller, call.callerKey);
    const trace = options.telemetry.currentTaskTrace();
    const first = firstUpstreamOf(ready);
    const state: ImageTaskState = {
      route: call.route,
      images,
      deadline: now + options.imageTasks.maxQueueMs,
      ...(charge.taken.length > 0
        ? {
            quota: {
              images: charge.taken.includes('images') ? images : 0,
              ...(charge.windowEnds.images !== undefined ? { imagesWindowEnd: charge.windowEnds.images } : {}),
              ...(charge.budget !== undefined ? { budget: charge.budget, ...(charge.windowEnds.budget !== undefined ? { budgetWindowEnd: charge.windowEnds.budget } : {}) } : {}),
            },
          }
        : {}),
      ...(usage.imageQuality !== undefined ? { quality: usage.imageQuality } : {}),
      ...(options.storage ? { durable: true } : {}),
    };
    const record: TaskRecord = {
      id: `imgtask_${randomBytes(16).toString('base64url')}`,
      owner: caller.id,
      ...(snapshot.ok ? { caller: snapshot.caller } : {}),
      model: call.model,
      upstream: { provider: first?.provider ?? 'openai', baseURL: first?.baseURL ?? '', taskId: '' },
      createdAt: now,
      status: 'queued',
      version: 1,
      ...(options.storage ? { resultBase: from.resultBase } : {}),
      ...(callbackUrl ? { callback: { url: callbackUrl, polls: 0, done: false } } : {}),
      ...(trace ? { trace } : {}),
      image: state,
    };
    // the watch runs on whichever instance the scheduler picks; if this one stops, it ends the task. It
    // is armed before the record is written: a scheduler that is down leaves no task nothing would end,
    // and a watch whose record was never written finds nothing to do
    await this.watchAt(record.id, state.deadline);
    // no record, nothing to settle later: a failure here is refunded by withCharge
    await options.store.createTask(record);
    options.telemetry.recordTaskTransition('queued');
    let settleRun!: (outcome: Outcome<WholeAnswer>) => void;
    const finished = new Promise<Outcome<WholeAnswer>>((resolve) => (settleRun = resolve));
    const controller = new AbortController();
    // the run is made for the task, not the request: the request (its sockets, its body) can go
    const taskFrom = runRequest(caller, controller, from.resultBase);
    this.local.set(record.id, { ready: rebasePrepared(ready, taskFrom), caller, controller, settle: settleRun, charge });
    this.queue.push(caller.id, record.id, () => options.telemetry.detached(() => options.telemetry.taskRun(record.model, record.trace, () => this.run(record.id))));
    return { task: viewOf(record, record.status), finished };
  }

  /** `GET /v1/images/tasks/{id}`: the caller's task, or the same 404 for another's, an unknown or an old one. */
  query(caller: Caller, id: string): Promise<Outcome<ImageTaskView>> {
    const usage = usageFor('');
    return settle(usage, async () => {
      const record = await this.owned(caller, id);
      usage.model = record.model;
      return this.present(record);
    });
  }

  /**
   * `POST /v1/images/tasks/{id}/cancel`: a task not yet terminal becomes `cancelled`. A queued task's
   * charge comes back whole; a running one's upstream call is aborted, but what it may have started is
   * paid work, so its images stay charged (docs/image-tasks.md "Cancelling").
   */
  cancel(caller: Caller, id: string): Promise<Outcome<ImageTaskView>> {
    const usage = usageFor('');
    return settle(usage, async () => {
      for (let round = 0; round < 8; round += 1) {
        const record = await this.owned(caller, id);
        usage.model = record.model;
        if (record.status === 'cancelled') return this.present(record);
        if (isTerminalStatus(record.status)) {
          throw new GatewayError({
            status: 409,
            code: ERROR_CODES.taskNotCancellable,
            message: `Task '${id}' has already ended (${this.present(record).status}); only a queued or running task can be cancelled.`,
          });
        }
        // a run of this process knows whether its upstream call was made; another instance's is assumed made
        const local = this.local.get(record.id);
        const started = record.image?.startedAt !== undefined && (local === undefined || local.usage?.attempted === true);
        const view = viewOf(record, 'cancelled');
        const updated = await this.deps.options.store.updateTask(record.id, record.version, { status: 'cancelled', result: { ...view }, usageReported: true });
        if (!updated) continue;
        const run = this.local.get(record.id);
        // aborted before its call is made, the call is never sent: nothing was made, everything comes back
        run?.controller.abort(GatewayError.invalidRequest('the task was cancelled'));
        await this.ended(updated, view, { paid: started, error: undefined, usage: undefined, caller: run?.caller });
        this.dropWaiting(record);
        return view;
      }
      throw new Error(`task ${id} kept changing while it was cancelled`);
    });
  }

  /**
   * The scheduler's watch of an image task (task-jobs.ts): nothing to do once it is terminal; past its
   * deadline, it is ended `failed` (task_interrupted) and refunded, whichever instance ran it.
   */
  async watch(taskId: string): Promise<NextPoll | undefined> {
    for (let round = 0; round < 8; round += 1) {
      const record = await this.deps.options.store.getTask(taskId);
      if (!record?.image || isTerminalStatus(record.status)) return undefined;
      if (record.image.onUpstream && record.upstream.taskId) return await this.follow(record);
      const left = record.image.deadline - Date.now();
      if (left > 0) return { delayMs: left + WATCH_MARGIN_MS, key: watchKey(taskId, record.image.deadline) };
      if (await this.interrupt(record)) return undefined;
    }
    throw new Error(`task ${taskId} kept changing while it was watched`);
  }

  /**
   * Ends an unfinished task `failed` (task_interrupted) and refunds it: its watch found it past its
   * deadline, or this process closed while it waited. False when the record changed meanwhile.
   */
  private async interrupt(record: TaskRecord): Promise<boolean> {
    const error = new GatewayError({
      status: 502,
      code: ERROR_CODES.taskInterrupted,
      message:
        record.image?.startedAt === undefined
          ? 'The task waited too long for an upstream slot, or the gateway instance holding it stopped; nothing was generated and its charge was given back.'
          : 'The gateway instance running the task stopped before the upstream answered; its outcome is unknown, and its charge was given back.',
    });
    const view = viewOf(record, 'failed', { error: error.toJSON().error });
    const updated = await this.deps.options.store.updateTask(record.id, record.version, { status: 'failed', result: { ...view }, usageReported: true });
    if (!updated) return false;
    // the interruption is the gateway's fault, not the caller's: everything comes back
    await this.ended(updated, view, { paid: false, error, usage: undefined, caller: undefined });
    // still waiting in this process's queue: its place (and the caller's share) is free at once;
    // still running here past its budget: its call is cut, so the slot frees too
    this.dropWaiting(record);
    this.local.get(record.id)?.controller.abort(error);
    return true;
  }

  /**
   * The gateway closes (docs/image-tasks.md "Restarts and several instances"): the tasks still waiting
   * in this process would never start, so each ends now, `task_interrupted` and refunded, its callback
   * queued, rather than when its watch fires. Tasks already running keep their call until the sockets close.
   */
  async close(): Promise<void> {
    this.closing = true;
    const waiting = [...this.local.entries()].filter(([, run]) => run.usage === undefined).map(([id]) => id);
    await Promise.all(
      waiting.map(async (id) => {
        for (let round = 0; round < 8; round += 1) {
          const record = await this.deps.options.store.getTask(id).catch(() => undefined);
          if (!record?.image || record.status !== 'queued') return;
          if (await this.interrupt(record).catch(() => true)) return;
        }
      }),
    );
  }

  /** A task ended by a cancel or its watch while it waited here: its run will never start, so this process lets go of it now. */
  private dropWaiting(record: TaskRecord): void {
    const run = this.local.get(record.id);
    if (!run || !this.queue.remove(record.owner, record.id)) return;
    this.local.delete(record.id);
    run.settle({ ok: false, error: new TaskNotRun(record.id), usage: usageFor(record.model) });
  }

  /** The run of one task in this process: marked running, the use case, the terminal state recorded. */
  private async run(taskId: string): Promise<void> {
    const local = this.local.get(taskId);
    if (!local) return;
    const { options } = this.deps;
    const usage = usageFor('');
    local.usage = usage;
    let record = this.closing ? undefined : await options.store.getTask(taskId).catch(() => undefined);
    if (!record?.image || record.status !== 'queued') {
      // cancelled while it waited, or ended by the watch: nothing to run
      this.local.delete(taskId);
      local.settle({ ok: false, error: new TaskNotRun(taskId), usage });
      return;
    }
    usage.model = record.model;
    const startedAt = Date.now();
    const image: ImageTaskState = { ...record.image, startedAt, deadline: startedAt + runBudgetOf(this.deps, local.ready) };
    const running = await options.store.updateTask(record.id, record.version, { status: 'running', image }).catch(() => undefined);
    if (!running) {
      this.local.delete(taskId);
      local.settle({ ok: false, error: new TaskNotRun(taskId), usage });
      return;
    }
    record = running;
    options.telemetry.recordTaskTransition('running');
    await this.watchAt(record.id, image.deadline).catch((error: unknown) => options.logger.warn({ taskId, error: messageOf(error) }, 'image task watch not scheduled'));
    this.deliver(record, viewOf(record, 'running'));
    const native = singleNativeCall(local.ready);
    const upstreamTasks = native ? capabilityOf(native.upstream, 'imageTasks') : undefined;
    if (native && upstreamTasks?.offers(native.upstream.model ?? record.model, native.request)) {
      await this.submitUpstream(record, local, native, upstreamTasks, usage);
      return;
    }
    const outcome = await settle(usage, () => runPreparedImage(this.deps, usage, local.ready));
    this.local.delete(taskId);
    let recorded: Outcome<WholeAnswer> | undefined;
    try {
      recorded = await this.finish(record, outcome, local);
    } catch (error) {
      options.logger.error({ taskId, error: messageOf(error) }, 'image task result not recorded');
    }
    // only the outcome the task records is answered to a waiting caller: a run that lost to a cancel or
    // to the watch (which refunded it), or whose answer could not be kept, must not hand out images
    // the task and its usage event do not show
    local.settle(recorded ?? { ok: false, error: new TaskNotRun(taskId), usage });
  }

  /**
   * Hands the work to the upstream's own task (DashScope's asynchronous synthesis): once it has an
   * upstream id, the task leaves this process's queue, and the watch jobs follow it from any instance.
   */
  private async submitUpstream(record: TaskRecord, local: LocalRun, native: NativeCall, tasks: UpstreamImageTasks, usage: Usage): Promise<void> {
    const { options } = this.deps;
    const { upstream, request, call } = native;
    attempting(usage, upstream.provider);
    const submitted = await settle(usage, () => tasks.submit(call, request, upstream));
    this.local.delete(record.id);
    if (!submitted.ok) {
      await this.finish(record, { ok: false, error: submitted.error, usage }, local).catch((error: unknown) =>
        options.logger.error({ taskId: record.id, error: messageOf(error) }, 'image task result not recorded'),
      );
      local.settle({ ok: false, error: submitted.error, usage });
      return;
    }
    const image: ImageTaskState = { ...record.image!, onUpstream: true, deadline: Date.now() + UPSTREAM_TASK_LIFETIME_MS };
    const updated = await options.store.updateTask(record.id, record.version, { image, upstream: { provider: upstream.provider, baseURL: upstream.baseURL, taskId: submitted.answer } });
    // cancelled while it was submitted: the upstream task runs on unobserved (logged), the task stays cancelled
    if (!updated) options.logger.warn({ taskId: record.id }, 'image task ended while its upstream task was submitted; the upstream task is not followed');
    else await this.followAt(record.id, options.imageTasks.pollMs).catch((error: unknown) => options.logger.error({ taskId: record.id, error: messageOf(error) }, 'image task poll not scheduled'));
    local.settle({ ok: false, error: new TaskNotRun(record.id), usage });
  }

  /** One poll of a task running on the upstream's own task: its end recorded, or when to look again. */
  private async follow(record: TaskRecord): Promise<NextPoll | undefined> {
    const { options } = this.deps;
    const upstream = await this.upstreamOf(record);
    const tasks = capabilityOf(upstream, 'imageTasks');
    if (!tasks) throw new Error(`provider ${upstream.provider} has no image tasks`);
    const call: CallContext = { http: this.deps.http, signal: NEVER_ABORTED, limits: options.limits };
    const state = await tasks.read(call, upstream, record.upstream.taskId);
    if (state.status === 'running') {
      if (Date.now() < record.image!.deadline) return this.nextFollow(record.id);
      return this.endFollowed(record, { ok: false, error: GatewayError.noImage(upstream.provider, '; the upstream task did not end within its lifetime'), usage: followedUsage(record, upstream) });
    }
    const usage = followedUsage(record, upstream);
    if (state.status === 'failed') return this.endFollowed(record, { ok: false, error: state.error, usage });
    const { response } = state;
    usage.upstreamRequestId = response.extra.request_id || undefined;
    usage.upstreamImages = response.data.length;
    response.data = response.data.slice(0, record.image!.images);
    usage.images = response.data.length;
    // durable results, as the synchronous route stores them; a storage failure throws, and the
    // scheduler polls again later (the upstream keeps the task for a day)
    const from: UseCaseRequest = { caller: callerOfTask(record), hostRequest: undefined, resultBase: record.resultBase ?? '', cancel: { clientGone: NEVER_ABORTED, signal: NEVER_ABORTED } };
    await rehostImageAnswer(this.deps, usage, from, response, undefined);
    return this.endFollowed(record, { ok: true, answer: { kind: 'image', response }, usage });
  }

  private async endFollowed(record: TaskRecord, outcome: Outcome<WholeAnswer>): Promise<undefined> {
    // DashScope bills the images it made only: a failed upstream task is given back whole
    const paid = outcome.ok;
    let view: ImageTaskView;
    try {
      view = outcome.ok ? viewOf(record, 'succeeded', { result: keptResultOf(outcome.answer, record.upstream.provider) }) : viewOf(record, 'failed', { error: errorObjectOf(outcome.error) });
    } catch (thrown) {
      view = viewOf(record, 'failed', { error: errorObjectOf(thrown) });
    }
    const updated = await this.deps.options.store.updateTask(record.id, record.version, {
      status: view.status,
      result: { ...view },
      usageReported: true,
      image: { ...record.image!, finishedAt: Date.now() },
    });
    if (updated) await this.ended(updated, view, { paid, error: outcome.ok ? undefined : outcome.error, usage: outcome.usage, caller: undefined });
    return undefined;
  }

  /** The resolver asked again with the task's caller (keys are never stored), for the provider and base the task runs on. */
  private async upstreamOf(record: TaskRecord): Promise<Upstream> {
    const upstreams = await resolveUpstreams(this.deps.options, { model: record.model, route: record.image!.route, caller: callerOfTask(record), req: undefined });
    const upstream = taskUpstreamAmong(upstreams, record);
    if (!upstream) throw new Error(`resolveUpstream no longer names a ${record.upstream.provider} upstream for image task ${record.id}`);
    return upstream;
  }

  private nextFollow(taskId: string): NextPoll {
    const every = this.deps.options.imageTasks.pollMs;
    // the same key on every instance that polls in the same interval: the next poll is queued once
    return { delayMs: every, key: `${taskId}:follow:${Math.floor(Date.now() / every)}` };
  }

  private followAt(taskId: string, delayMs: number): Promise<void> {
    return this.deps.options.scheduler.schedulePoll(taskId, delayMs, `${taskId}:follow:start`);
  }

  /**
   * Records the run's outcome as the terminal state, unless a cancel or the watch got there first;
   * returns the outcome recorded (a failure when the answer could not be kept), undefined when another
   * writer ended the task.
   */
  private async finish(record: TaskRecord, outcome: Outcome<WholeAnswer>, local: LocalRun): Promise<Outcome<WholeAnswer> | undefined> {
    const { options } = this.deps;
    let view: ImageTaskView;
    let error: unknown;
    if (outcome.ok) {
      try {
        view = viewOf(record, 'succeeded', { result: keptResultOf(outcome.answer, outcome.usage.provider ?? 'upstream') });
      } catch (thrown) {
        error = thrown;
        view = viewOf(record, 'failed', { error: errorObjectOf(thrown) });
      }
    } else {
      error = outcome.error;
      view = viewOf(record, 'failed', { error: errorObjectOf(outcome.error) });
    }
    const changes: TaskChanges = { status: view.status, result: { ...view }, usageReported: true, image: { ...record.image!, finishedAt: Date.now() } };
    const updated = await options.store.updateTask(record.id, record.version, changes);
    // another writer ended it first (a cancel, or the watch past the deadline): its state stands
    if (!updated) return undefined;
    // an answer that came back was paid for, whatever became of it here
    const paid = outcome.ok || mayHaveBeenPaid(outcome.usage, error);
    await this.ended(updated, view, { paid, error, usage: outcome.usage, caller: local.caller });
    return view.status === 'succeeded' ? outcome : { ok: false, error, usage: outcome.usage };
  }

  /**
   * Everything a terminal state is worth, once per task (the writer whose compare-and-set ended it):
   * the charge settled, the one terminal usage event, the metric and the callback.
   */
  private async ended(record: TaskRecord, view: ImageTaskView, how: { paid: boolean; error: unknown; usage: Usage | undefined; caller: Caller | undefined }): Promise<void> {
    const { options } = this.deps;
    const image = record.image!;
    const produced = how.usage && view.status === 'succeeded' ? how.usage.images : 0;
    // a task that made nothing upstream gets everything back; one that succeeded, what it did not
    // produce; one whose call may have made images (and been billed for them) keeps them charged
    const back = !how.paid ? image.images : view.status === 'succeeded' ? image.images - produced : 0;
    if (back > 0) await this.refundImages(record, back);
    await this.settleBudget(record, view, how);
    options.telemetry.recordTaskTransition(view.status);
    this.report(record, view, how, produced);
    this.deliver(record, view);
  }

  private async refundImages(record: TaskRecord, images: number): Promise<void> {
    const quota = record.image?.quota;
    if (!quota) return;
    const local = this.local.get(record.id);
    // the charge object of this process knows the window; another instance gives back by the record
    if (local) return local.charge.refund(['images'], { images: Math.min(images, quota.images) });
    await this.deps.quotas.refundImages(record.owner, Math.min(images, quota.images), quota.imagesWindowEnd);
  }

  /**
   * A money budget reserved at submit, settled to what the task cost: what it produced when it
   * succeeded, nothing when nothing could have been made, the reservation kept when its upstream may
   * have made (and billed) images it did not deliver (docs/tenancy-and-billing.md "Cost in money").
   */
  private async settleBudget(record: TaskRecord, view: ImageTaskView, how: { paid: boolean; usage: Usage | undefined }): Promise<void> {
    const reserved = record.image?.quota?.budget;
    if (reserved === undefined || (how.paid && view.status !== 'succeeded')) return;
    const actual = view.status === 'succeeded' ? (Pricing.micros(this.costOf(record, view, how.usage)) ?? 0) : 0;
    await this.deps.quotas.settleBudget(record.owner, reserved, actual, record.image?.quota?.budgetWindowEnd);
  }

  /** What the task cost by the `pricing` option: its images when it succeeded; nothing it did not deliver. */
  private costOf(record: TaskRecord, view: ImageTaskView, usage: Usage | undefined): Cost | undefined {
    const pricing = this.deps.options.pricing;
    if (!pricing) return undefined;
    const work = usage ?? usageFor(record.model);
    if (record.image?.quality !== undefined) work.imageQuality = record.image.quality;
    return pricing.costOf(pricedWork({ ...work, model: record.model, images: view.status === 'succeeded' ? work.images : 0 }, 200));
  }

  /** The task's one terminal usage event (docs/tenancy-and-billing.md "Billing from usage events"). */
  private report(record: TaskRecord, view: ImageTaskView, how: { paid: boolean; error: unknown; usage: Usage | undefined; caller: Caller | undefined }, produced: number): void {
    const { onUsage } = this.deps.options;
    if (!onUsage) return;
    const usage = how.usage;
    const errorCode = view.error && typeof view.error.code === 'string' ? view.error.code : undefined;
    try {
      onUsage({
        caller: how.caller ?? callerOfTask(record),
        route: record.image!.route,
        model: record.model,
        provider: usage?.provider ?? record.upstream.provider,
        images: produced,
        ...(usage?.upstreamImages !== undefined ? { upstreamImages: usage.upstreamImages } : {}),
        status: view.status === 'succeeded' || view.status === 'cancelled' ? 200 : GatewayError.is(how.error) ? how.error.status : 500,
        latencyMs: Date.now() - record.createdAt,
        ...(usage?.upstreamRequestId !== undefined ? { upstreamRequestId: usage.upstreamRequestId } : {}),
        ...(errorCode !== undefined ? { errorCode } : {}),
        ...(usage?.storedBytes !== undefined ? { storedBytes: usage.storedBytes } : {}),
        ...(usage?.imageSizes !== undefined ? { imageSizes: usage.imageSizes } : {}),
        ...(usage?.upstreamUsage !== undefined ? { upstreamUsage: usage.upstreamUsage } : {}),
        // paid work the caller did not get: the images the upstream answered, or, when its outcome is unknown, the most it may have made
        ...(view.status !== 'succeeded' && how.paid ? { undeliveredImages: usage && usage.images > 0 ? usage.images : record.image!.images } : {}),
        ...(record.image?.quality !== undefined ? { imageQuality: record.image.quality } : {}),
        ...costField(this.costOf(record, view, usage)),
        task: { id: record.id, status: view.status },
      });
    } catch (thrown) {
      this.deps.options.logger.error({ error: messageOf(thrown) }, 'onUsage threw');
    }
  }

  /** Hands a state to callback delivery (at least once, signed: delivery-jobs.ts), when the task has a callback. */
  private deliver(record: TaskRecord, view: ImageTaskView): void {
    const callback = record.callback;
    if (!callback) return;
    const { options } = this.deps;
    options.scheduler
      .scheduleDelivery(callbackJob(record, callback.url, view.status, view))
      .catch((error: unknown) => options.logger.error({ taskId: record.id, error: messageOf(error) }, 'image task callback not queued'));
  }

  private watchAt(taskId: string, deadline: number): Promise<void> {
    return this.deps.options.scheduler.schedulePoll(taskId, Math.max(0, deadline - Date.now()) + WATCH_MARGIN_MS, watchKey(taskId, deadline));
  }

  /** The caller's own image task, kept for `imageTasks.keepSeconds`; anything else is the one 404. */
  private async owned(caller: Caller, id: string): Promise<TaskRecord> {
    const record = IMAGE_TASK_ID.test(id) ? await this.deps.options.store.getTask(id) : undefined;
    if (!record?.image || record.owner !== caller.id || Date.now() - record.createdAt > this.deps.options.imageTasks.keepMs) {
      throw GatewayError.notFound(`Image task '${id.slice(0, 64)}' was not found.`);
    }
    return record;
  }

  /** A terminal task as recorded; a succeeded one whose upstream URLs have outlived their lifetime reads `expired`. */
  private present(record: TaskRecord): ImageTaskView {
    const recorded = record.result as ImageTaskView | undefined;
    if (!recorded) return viewOf(record, record.status);
    const image = record.image;
    if (recorded.status === 'succeeded' && !image?.durable && image?.finishedAt !== undefined && Date.now() - image.finishedAt > this.deps.options.imageTasks.upstreamUrlMs) {
      return viewOf(record, 'expired');
    }
    return recorded;
  }
}

/** The task's fields every answer has, with its status and, when terminal, its result or error. */
function viewOf(record: TaskRecord, status: string, extra: { result?: Record<string, unknown>; error?: Record<string, unknown> } = {}): ImageTaskView {
  return { id: record.id, object: 'image.task', status, created: Math.floor(record.createdAt / 1000), model: record.model, ...extra };
}

function costField(cost: Cost | undefined): { cost?: Cost } {
  return cost ? { cost } : {};
}

/** What a followed upstream task did, for its terminal usage event. */
function followedUsage(record: TaskRecord, upstream: Upstream): Usage {
  const usage = usageFor(record.model);
  usage.provider = upstream.provider;
  usage.attempted = true;
  usage.imagesAsked = record.image!.images;
  return usage;
}

function watchKey(taskId: string, deadline: number): string {
  return `${taskId}:watch:${deadline}`;
}

/** The request a task's run is made for: the submit's caller, the task's own cancellation, the result base seen at submit. */
function runRequest(caller: Caller, controller: AbortController, resultBase: string): UseCaseRequest {
  const cancel: Cancellation = { clientGone: controller.signal, signal: controller.signal };
  return { caller, hostRequest: undefined, resultBase, cancel };
}

/** `b64_json` asked, in a JSON field or in any of a form's repeated fields. */
function asksBase64(format: unknown): boolean {
  return Array.isArray(format) ? format.includes('b64_json') : format === 'b64_json';
}

function responseFormatOf(call: ImageCall): unknown {
  return call.input.kind === 'json' ? call.input.body.response_format : call.input.form.fields.response_format;
}

/**
 * The answer as a task keeps it: the contract §2.4 body with every `b64_json` left out (no image
 * bytes in the task store). Each image must then have a URL: durable with `storage`, the upstream's
 * own without it. An upstream that answered bytes only (no URL) cannot be kept without storage.
 */
function keptResultOf(answer: WholeAnswer, provider: string): Record<string, unknown> {
  const body: unknown = answer.kind === 'passthrough' ? parseJsonBody(answer.response.body) : answer.response;
  if (!isObject(body) || !Array.isArray(body.data)) throw GatewayError.badUpstreamResponse(provider, 'the image answer is not JSON with a data list');
  const data = (body.data as unknown[]).map((entry) => {
    if (!isObject(entry)) return entry;
    const { b64_json: bytes, ...rest } = entry;
    if (typeof rest.url !== 'string' && bytes !== undefined) {
      throw new GatewayError({
        status: 502,
        code: ERROR_CODES.resultNotKept,
        message: 'The upstream answered image bytes without a URL, which an asynchronous task keeps only with the `storage` option (the task store holds no image bytes).',
      });
    }
    return rest;
  });
  return { ...(body as ImageGenerationResponse & Record<string, unknown>), data };
}

/** The error object a failed task carries: the gateway's own, or the generic 500 one. */
function errorObjectOf(error: unknown): Record<string, unknown> {
  const known = GatewayError.is(error) ? error : GatewayError.internal();
  return { ...known.toJSON().error };
}

function queueRefusal(admission: 'full' | 'caller-full'): GatewayError {
  return admission === 'caller-full'
    ? new GatewayError({
        status: 429,
        code: ERROR_CODES.taskQueueFull,
        message: 'You have the most image tasks waiting that one caller may have; submit more once some have started.',
        retryAfterSeconds: 10,
      })
    : new GatewayError({
        status: 503,
        code: ERROR_CODES.taskQueueFull,
        message: 'The gateway has the most image tasks waiting that it takes; retry shortly.',
        retryAfterSeconds: 10,
        type: 'server_error',
      });
}
