// Asynchronous image tasks (docs/image-tasks.md): a submit is checked, resolved and charged like the
// synchronous request, then answered at once with a task; the work runs here, in this process's fair
// queue (fair-queue.ts), through the same image use case (image-pipeline.ts), and its terminal state is
// recorded in the TaskStore with the compare-and-set every task write uses. A watch job on the
// configured scheduler ends a task that nobody finishes as `failed`, on whichever instance runs it:
// the instance holding a task renews a lease on its record, and a watch that finds the lease lapsed
// (the instance stopped) ends it about one lease later, booking the upstream call it may have made as
// possibly paid (ledger/lost-work.ts); so no task stays `running` for ever. The store never holds image bytes.
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
import { withCharge } from '../tenancy/with-charge.js';
import { lostWorkUsage } from '../ledger/lost-work.js';
import { hasLapsed, leaseEnd, nextLookAt } from '../leases/lease-terms.js';
import { LeaseRenewer } from '../leases/lease-renewer.js';
import type { Quoted } from '../tenancy/quote.js';
import { Pricing } from '../ledger/pricing.js';
import { type Reckoning, type WorkEnd, bookFields, costOfBooks, reckon } from '../ledger/reckoning.js';
import { type Cancellation, type Outcome, type Usage, type UseCaseRequest, attempting, settle, usageFor } from '../use-case.js';
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
  /** Renews the lease of every task this process holds, queued or running (docs/image-tasks.md "Restarts and several instances"). */
  private readonly leases: LeaseRenewer;

  constructor(private readonly deps: GatewayDeps) {
    const config = deps.options.imageTasks;
    this.queue = new FairQueue({ concurrency: config.concurrency, perCaller: config.perCallerConcurrency, maxQueued: config.maxQueued, maxQueuedPerCaller: config.maxQueuedPerCaller });
    this.leases = new LeaseRenewer(config.lease.renewMs, (id) => this.renewLease(id), deps.options.logger);
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
      ...(usage.sizeAsked !== undefined ? { size: usage.sizeAsked } : {}),
      ...(options.storage ? { durable: true } : {}),
      leaseUntil: leaseEnd(options.imageTasks.lease, now),
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
    await this.watchAt(record.id, nextLookAt(state.leaseUntil, state.deadline));
    // no record, nothing to settle later: a failure here is refunded by withCharge
    await options.store.createTask(record);
    options.telemetry.recordTaskTransition('queued');
    let settleRun!: (outcome: Outcome<WholeAnswer>) => void;
    const finished = new Promise<Outcome<WholeAnswer>>((resolve) => (settleRun = resolve));
    const controller = new AbortController();
    // the run is made for the task, not the request: the request (its sockets, its body) can go
    const taskFrom = runRequest(caller, controller, from.resultBase);
    this.local.set(record.id, { ready: rebasePrepared(ready, taskFrom), caller, controller, settle: settleRun, charge });
    this.leases.hold(record.id);
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
        // work handed to the upstream's own task goes on there: what it made is known when it ends, and
        // charged then (follow); the task is cancelled for its caller now
        const followed = started && record.image?.onUpstream === true && record.upstream.taskId !== '';
        const view = viewOf(record, 'cancelled');
        const updated = await this.deps.options.store.updateTask(record.id, record.version, { status: 'cancelled', result: { ...view }, usageReported: !followed });
        if (!updated) continue;
        const run = this.local.get(record.id);
        // aborted before its call is made, the call is never sent: nothing was made, everything comes back
        const cancelled = GatewayError.invalidRequest('the task was cancelled');
        run?.controller.abort(cancelled);
        if (followed) {
          this.deps.options.telemetry.recordTaskTransition('cancelled');
          this.deliver(updated, view);
        } else await this.ended(updated, view, { usage: cancelledUsage(record, started, run?.usage ?? local?.usage), end: { error: cancelled }, caller: run?.caller });
        this.dropWaiting(record);
        return view;
      }
      throw new Error(`task ${id} kept changing while it was cancelled`);
    });
  }

  /**
   * The scheduler's watch of an image task (task-jobs.ts): nothing to do once it is terminal; once the
   * lease of the instance holding it lapsed (that instance stopped), or past its deadline, it is ended
   * `failed` (task_interrupted), whichever instance ran it; else it looks again when the lease ends.
   */
  async watch(taskId: string): Promise<NextPoll | undefined> {
    for (let round = 0; round < 8; round += 1) {
      const record = await this.deps.options.store.getTask(taskId);
      // a task cancelled while its upstream task ran is followed to that task's end, for its books
      if (record?.image && record.status === 'cancelled' && !record.usageReported && record.image.onUpstream && record.upstream.taskId) return await this.follow(record);
      if (!record?.image || isTerminalStatus(record.status)) return undefined;
      if (record.image.onUpstream && record.upstream.taskId) return await this.follow(record);
      const now = Date.now();
      const lapsed = hasLapsed(record.image.leaseUntil, now);
      const next = nextLookAt(record.image.leaseUntil, record.image.deadline);
      if (!lapsed && next > now) return { delayMs: next - now + WATCH_MARGIN_MS, key: watchKey(taskId, next) };
      if (await this.interrupt(record, lapsed ? 'lapsed' : 'deadline')) return undefined;
    }
    throw new Error(`task ${taskId} kept changing while it was watched`);
  }

  /**
   * Ends an unfinished task `failed` (task_interrupted): its watch found the lease of the instance
   * holding it lapsed or its deadline passed, or this process closed while it waited. A task whose
   * upstream call had started is booked as possibly paid, the gateway's loss (ledger/lost-work.ts);
   * one that never reached its upstream costs nothing. False when the record changed meanwhile.
   */
  private async interrupt(record: TaskRecord, why: 'lapsed' | 'deadline' | 'closing'): Promise<boolean> {
    const { options } = this.deps;
    const image = record.image!;
    const local = this.local.get(record.id);
    // a run of this process knows whether its call was made; another instance's is assumed made once running
    const started = image.startedAt !== undefined && (local === undefined || local.usage?.attempted === true);
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
    const updated = await options.store.updateTask(record.id, record.version, { status: 'failed', result: { ...view }, usageReported: true });
    if (!updated) return false;
    await this.ended(updated, view, { usage, end: { error }, caller: undefined });
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
          if (await this.interrupt(record, 'closing').catch(() => true)) return;
        }
      }),
    );
  }

  /** This process no longer holds the task: its lease is not renewed any more. */
  private letGo(taskId: string): void {
    this.local.delete(taskId);
    this.leases.release(taskId);
  }

  /**
   * Writes `changes` of this process's own run while the task is still `status`: a renewal of its
   * lease (which bumps the version) is read over; another writer's end (a cancel, the watch) stands,
   * and undefined is returned.
   */
  private async updateOwn(taskId: string, status: string, changes: (current: TaskRecord) => TaskChanges): Promise<TaskRecord | undefined> {
    const { store } = this.deps.options;
    for (let round = 0; round < 8; round += 1) {
      const current = await store.getTask(taskId);
      if (!current?.image || current.status !== status || current.image.onUpstream) return undefined;
      const updated = await store.updateTask(taskId, current.version, changes(current));
      if (updated) return updated;
    }
    throw new Error(`task ${taskId} kept changing while its run wrote it`);
  }

  /**
   * One renewal of the lease this process holds on a task (docs/image-tasks.md "Restarts and several
   * instances"). A task another instance ended meanwhile (a cancel, or a watch that found the lease
   * lapsed while this process could not reach the store) is let go: its run here is stopped.
   */
  private async renewLease(taskId: string): Promise<void> {
    const { store, imageTasks } = this.deps.options;
    const record = await store.getTask(taskId);
    if (!this.local.has(taskId)) return;
    if (!record?.image || isTerminalStatus(record.status)) {
      this.local.get(taskId)?.controller.abort(GatewayError.invalidRequest('the task was ended by another instance'));
      if (record) this.dropWaiting(record);
      this.leases.release(taskId);
      return;
    }
    if (record.image.onUpstream) return this.leases.release(taskId);
    // a lost race (a run's own write) is fine: the lease is renewed again at the next tick
    await store.updateTask(taskId, record.version, { image: { ...record.image, leaseUntil: leaseEnd(imageTasks.lease, Date.now()) } });
  }

  /** A task ended by a cancel or its watch while it waited here: its run will never start, so this process lets go of it now. */
  private dropWaiting(record: TaskRecord): void {
    const run = this.local.get(record.id);
    if (!run || !this.queue.remove(record.owner, record.id)) return;
    this.letGo(record.id);
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
      this.letGo(taskId);
      local.settle({ ok: false, error: new TaskNotRun(taskId), usage });
      return;
    }
    usage.model = record.model;
    const startedAt = Date.now();
    const deadline = startedAt + runBudgetOf(this.deps, local.ready);
    // the lease renewed meanwhile is a change of this process's own: written over, while the task is still queued
    const running = await this.updateOwn(taskId, 'queued', (current) => ({
      status: 'running',
      image: { ...current.image!, startedAt, deadline, leaseUntil: leaseEnd(options.imageTasks.lease, startedAt) },
    })).catch(() => undefined);
    if (!running) {
      this.letGo(taskId);
      local.settle({ ok: false, error: new TaskNotRun(taskId), usage });
      return;
    }
    record = running;
    options.telemetry.recordTaskTransition('running');
    await this.watchAt(record.id, nextLookAt(running.image!.leaseUntil, deadline)).catch((error: unknown) =>
      options.logger.warn({ taskId, error: messageOf(error) }, 'image task watch not scheduled'),
    );
    this.deliver(record, viewOf(record, 'running'));
    const native = singleNativeCall(local.ready);
    const upstreamTasks = native ? capabilityOf(native.upstream, 'imageTasks') : undefined;
    if (native && upstreamTasks?.offers(native.upstream.model ?? record.model, native.request)) {
      await this.submitUpstream(record, local, native, upstreamTasks, usage);
      return;
    }
    const outcome = await settle(usage, () => runPreparedImage(this.deps, usage, local.ready));
    this.letGo(taskId);
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
    if (!submitted.ok) {
      this.letGo(record.id);
      await this.finish(record, { ok: false, error: submitted.error, usage }, local).catch((error: unknown) =>
        options.logger.error({ taskId: record.id, error: messageOf(error) }, 'image task result not recorded'),
      );
      local.settle({ ok: false, error: submitted.error, usage });
      return;
    }
    // from here any instance follows the upstream's task: no lease is held on it any more
    const updated = await this.updateOwn(record.id, 'running', (current) => {
      const { leaseUntil: _held, ...image } = current.image!;
      return {
        image: { ...image, onUpstream: true, deadline: Date.now() + UPSTREAM_TASK_LIFETIME_MS } satisfies ImageTaskState,
        upstream: { provider: upstream.provider, baseURL: upstream.baseURL, taskId: submitted.answer },
      };
    });
    // cancelled while it was submitted: the upstream task runs on unobserved (logged), the task stays cancelled
    this.letGo(record.id);
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
    // DashScope and Replicate bill what their task made: a failed upstream task made nothing
    const attempt = outcome.usage.attempts?.at(-1);
    if (attempt) {
      attempt.outcome = outcome.ok ? 'made' : 'failed';
      attempt.images = outcome.ok ? (outcome.usage.upstreamImages ?? outcome.usage.images) : 0;
    }
    if (record.status === 'cancelled') {
      // cancelled while the upstream worked: the caller lost what it made by its own act
      outcome.usage.lostBy = 'cancelled';
      const updated = await this.deps.options.store.updateTask(record.id, record.version, { usageReported: true, image: { ...record.image!, finishedAt: Date.now() } });
      if (updated)
        await this.ended(updated, viewOf(record, 'cancelled'), { usage: outcome.usage, end: { error: GatewayError.invalidRequest('the task was cancelled') }, caller: undefined }, { told: true });
      return undefined;
    }
    let view: ImageTaskView;
    let error: unknown = outcome.ok ? undefined : outcome.error;
    try {
      view = outcome.ok ? viewOf(record, 'succeeded', { result: keptResultOf(outcome.answer, record.upstream.provider) }) : viewOf(record, 'failed', { error: errorObjectOf(outcome.error) });
    } catch (thrown) {
      error = thrown;
      view = viewOf(record, 'failed', { error: errorObjectOf(thrown) });
    }
    const updated = await this.deps.options.store.updateTask(record.id, record.version, {
      status: view.status,
      result: { ...view },
      usageReported: true,
      image: { ...record.image!, finishedAt: Date.now() },
    });
    if (updated) await this.ended(updated, view, { usage: outcome.usage, end: error === undefined ? {} : { error }, caller: undefined });
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
    const finishedAt = Date.now();
    const updated = await this.updateOwn(record.id, 'running', (current): TaskChanges => ({ status: view.status, result: { ...view }, usageReported: true, image: { ...current.image!, finishedAt } }));
    // another writer ended it first (a cancel, or the watch past the deadline): its state stands
    if (!updated) return undefined;
    await this.ended(updated, view, { usage: outcome.usage, end: error === undefined ? {} : { error }, caller: local.caller });
    return view.status === 'succeeded' ? outcome : { ok: false, error, usage: outcome.usage };
  }

  /**
   * Everything a terminal state is worth, once per task (the writer whose compare-and-set ended it):
   * the books of its work (ledger/reckoning.ts) settle the charge and make the one terminal usage
   * event; then the metric and the callback (unless the caller was already told: a cancel whose
   * upstream task is followed to its end).
   */
  private async ended(record: TaskRecord, view: ImageTaskView, how: TaskEnd, told: { told?: boolean } = {}): Promise<void> {
    const { options } = this.deps;
    const image = record.image!;
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

  private async refundImages(record: TaskRecord, images: number): Promise<void> {
    const quota = record.image?.quota;
    if (!quota) return;
    const local = this.local.get(record.id);
    // the charge object of this process knows the window; another instance gives back by the record
    if (local) return local.charge.refund(['images'], { images: Math.min(images, quota.images) });
    await this.deps.quotas.refundImages(record.owner, Math.min(images, quota.images), quota.imagesWindowEnd);
  }

  /**
   * A money budget reserved at submit (its fee and the most its images may cost), settled to what the
   * task cost: the fee, and the images the books charge the tenant (docs/tenancy-and-billing.md "The books").
   */
  private async settleBudget(record: TaskRecord, usage: Usage, books: Reckoning): Promise<void> {
    const reserved = record.image?.quota?.budget;
    if (reserved === undefined) return;
    const cost = costOfBooks(usage, { ...books, billable: true }, {}, this.deps.options.pricing);
    await this.deps.quotas.settleBudget(record.owner, reserved, Pricing.micros(cost) ?? 0, record.image?.quota?.budgetWindowEnd);
  }

  /** The task's one terminal usage event (docs/tenancy-and-billing.md "The books"). */
  private report(record: TaskRecord, view: ImageTaskView, how: TaskEnd, usage: Usage, end: WorkEnd): void {
    const { onUsage } = this.deps.options;
    if (!onUsage) return;
    const errorCode = view.error && typeof view.error.code === 'string' ? view.error.code : undefined;
    const failure = how.end.error;
    try {
      onUsage({
        caller: how.caller ?? callerOfTask(record),
        route: record.image!.route,
        model: record.model,
        provider: usage.provider ?? record.upstream.provider,
        ...(usage.upstreamImages !== undefined ? { upstreamImages: usage.upstreamImages } : {}),
        status: view.status === 'succeeded' || view.status === 'cancelled' ? 200 : GatewayError.is(failure) ? failure.status : 500,
        latencyMs: Date.now() - record.createdAt,
        ...(usage.upstreamRequestId !== undefined ? { upstreamRequestId: usage.upstreamRequestId } : {}),
        ...(errorCode !== undefined ? { errorCode } : {}),
        ...(usage.storedBytes !== undefined ? { storedBytes: usage.storedBytes } : {}),
        ...(usage.imageSizes !== undefined ? { imageSizes: usage.imageSizes } : {}),
        ...(usage.upstreamUsage !== undefined ? { upstreamUsage: usage.upstreamUsage } : {}),
        ...(record.image?.quality !== undefined ? { imageQuality: record.image.quality } : {}),
        ...bookFields(usage, end, this.deps.options.ledger),
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

/**
 * What an interrupted task says: why it ended, and what may have been made. A started call's outcome
 * is unknown: the upstream may have generated (and billed) the images, which never arrived.
 */
function interruptionMessage(why: 'lapsed' | 'deadline' | 'closing', started: boolean, charged: boolean): string {
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

/** The task's fields every answer has, with its status and, when terminal, its result or error. */
function viewOf(record: TaskRecord, status: string, extra: { result?: Record<string, unknown>; error?: Record<string, unknown> } = {}): ImageTaskView {
  return { id: record.id, object: 'image.task', status, created: Math.floor(record.createdAt / 1000), model: record.model, ...extra };
}

/** How a task's work ended: its usage (the upstream attempts) and the ledger's end. */
interface TaskEnd {
  usage: Usage | undefined;
  end: WorkEnd;
  caller: Caller | undefined;
}

/** The run's usage as the task's books read it: the task's model, the images it was charged, the size and quality asked. */
function terminalUsage(record: TaskRecord, usage: Usage | undefined): Usage {
  const image = record.image!;
  const terminal = usage ?? usageFor(record.model);
  terminal.model = record.model;
  terminal.imagesAsked = image.images;
  if (image.size !== undefined) terminal.sizeAsked = image.size;
  if (image.quality !== undefined) terminal.imageQuality = image.quality;
  return terminal;
}

/** The work of a task whose call may have been under way when it was ended: one attempt, outcome unknown. */
function unknownAttempt(record: TaskRecord, usage: Usage | undefined): Usage {
  const work = usage ?? usageFor(record.model);
  if (!work.attempts?.length) attempting(work, record.upstream.provider);
  const last = work.attempts!.at(-1)!;
  if (!last.outcome && work.upstreamImages === undefined) {
    last.outcome = 'unknown';
    last.images = record.image!.images;
  }
  return work;
}

/** A cancelled task's work: nothing when it had not started; else what its call may have made, lost by the caller's act. */
function cancelledUsage(record: TaskRecord, started: boolean, run: Usage | undefined): Usage | undefined {
  if (!started) return undefined;
  const work = unknownAttempt(record, run);
  work.lostBy = 'cancelled';
  return work;
}

/** What a followed upstream task did, for its terminal usage event. */
function followedUsage(record: TaskRecord, upstream: Upstream): Usage {
  const usage = usageFor(record.model);
  // the one vendor call of the task, by its id: what a host joins with the vendor's usage export
  attempting(usage, upstream.provider).id = record.upstream.taskId;
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
