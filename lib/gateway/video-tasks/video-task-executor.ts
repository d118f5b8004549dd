// The executor of video tasks (contract §2.6, §3, §6), for the one task service (tasks/task-service.ts).
// Why it differs from image's: the VENDOR runs the work, from the create on. The gateway creates the
// task upstream and only reads it back, on a query or, with a callback, on the scheduler's polls; no
// process of its own holds the work, so nothing here needs a lease, and nothing can be cancelled (the
// vendor's task runs on). So its charge is seconds of video and a concurrent-task slot, settled by what
// the vendor reports at the end. Following tasks with a callback (video-task-follower.ts), keeping
// results (video-task-results.ts) and reporting terminal usage (video-task-usage.ts) are its parts;
// delivering callbacks and the scheduler's jobs are the task core's (tasks/delivery-jobs.ts,
// tasks/task-jobs.ts). Every status transition is written with the store's compare-and-set, so when two
// instances see the same transition only one acts.
import { GatewayError } from '../../errors/gateway-error.js';
import type { UpstreamHttp } from '../../transport/upstream-http.js';
import type { ResolvedOptions } from '../resolve-options.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { checkCallbackTarget } from '../tasks/callback-target.js';
import type { VideoTaskBody } from '../../schemas/video-task-schema.js';
import type { Caller, Upstream } from '../../types.js';
import type { ResolveUpstreamInput } from '../../options/host-hooks.js';
import { type Outcome, type Usage, type UseCaseRequest, attempting, settle, usageFor } from '../use-case.js';
import { withCharge } from '../tenancy/with-charge.js';
import type { Quoted } from '../tenancy/quote.js';
import type { CallContext } from '../../providers/call-context.js';
import { providersWithTasks, requireUpstreamTasks } from '../../providers/registry.js';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { withFallback } from '../routing/fallback.js';
import { resolveUpstreams } from '../routing/resolve-upstreams.js';
import { snapshotCaller } from '../tasks/caller-snapshot.js';
import { VIDEO_TASK_PREFIX, mapReferences } from './video-task-content.js';
import { checkVideoInput } from '../moderation/route-moderation.js';
import { VideoTaskFollower } from './video-task-follower.js';
import type { TaskExecutor } from '../tasks/task-executor.js';
import { findOwnTask, newTaskId, updateTaskOf } from '../tasks/task-records.js';
import { taskChargeOf } from '../tasks/task-charge.js';
import { pollDelayOf, pollKey } from '../tasks/task-keys.js';
import { VideoTaskResults, upstreamsKeepingResults } from './video-task-results.js';
import { isPassedStatus, isTerminalStatus } from '../tasks/task-state-order.js';
import type { VideoTaskRecord, VideoAsked } from '../../stores/tasks/task-store.js';
import { VideoTaskUsage } from './video-task-usage.js';
import type { QuotaCharge, Quotas } from '../tenancy/quotas.js';
import { videoSecondsOf } from '../tenancy/request-costs.js';
import { checkDuration, checkRefusedFields, checkVideoShape, mostVideoSeconds, refusesOn } from '../../models/model-rules.js';
import type { ModelEntry } from '../../options/model-catalogue.js';
import { rowFor } from '../routing/catalogue-routing.js';
import { UpstreamTaskState } from './upstream-task-state.js';
import { upstreamModelsOf } from '../ledger/pricing.js';
import type { NextPoll } from '../../stores/scheduling/job-scheduler.js';
import { fallbackPollDelay, vendorWebhookUrl } from '../vendor-webhooks/vendor-webhook-urls.js';

/** The host's request object, handed to resolveUpstream only (absent for background polls). */
type HostRequest = ResolveUpstreamInput['req'];

/**
 * A create in another wire shape (the OpenAI video shape, openai-video-shape.ts): what it asked, kept
 * with the task, and its task body for the row the task follows, which only the service knows (after
 * the resolver, for a name without a caller-facing entry): one resolver call per create either way.
 */
export interface ShapedCreate {
  asked: VideoAsked;
  /** The task body for `entry` (undefined: no row the gateway judges by); throws the shape's 400. */
  bodyFor(entry: ModelEntry | undefined): VideoTaskBody;
}

/** A create, checked and resolved, before it is charged. */
interface PreparedCreate {
  /** The task body as sent upstream: the shape's fields mapped for the row the task follows. */
  body: VideoTaskBody;
  content: Array<Record<string, unknown>>;
  callbackUrl: string | undefined;
  upstreams: readonly Upstream[];
  videoSeconds: number;
  /** The request's bearer key: kept out of the stored caller snapshot. */
  callerKey: string;
  /** What a create in OpenAI's shape asked (openai-video-shape.ts), kept with the task. */
  asked?: VideoAsked;
}

/** What a video create is given: the validated body, the request's bearer key, and the other wire shape it came in, if any. */
export interface VideoTaskCreate {
  /** Validated by the route (videoTaskSchema); a shaped create's fields that no row decides (model, content, callback). */
  body: VideoTaskBody;
  /** The request's bearer key: never stored, and never allowed inside the callback URL (contract §5.5). */
  callerKey: string;
  /** A create in another wire shape (OpenAI's videos). */
  shaped?: ShapedCreate;
}

/** A query's answer: the task's state as the caller sees it, and its record as it was read (OpenAI's shape shows its creation fields). */
export interface VideoTaskRead {
  record: VideoTaskRecord;
  state: Record<string, unknown>;
}

/** What video tasks exchange with their routes (tasks/task-executor.ts). */
export interface VideoTaskTypes {
  create: VideoTaskCreate;
  created: CreatedTask;
  read: VideoTaskRead;
}

/** A created task: its id and when it was created (ms since the epoch). */
export interface CreatedTask {
  id: string;
  createdAt: number;
  /** What the task record keeps of a create in another shape (with the length charged when none was asked). */
  asked?: VideoAsked;
}

// usage events of task routes name the provider that serves tasks, also when a request fails before
// the resolver answered
const TASK_PROVIDER = providersWithTasks('video')[0];
// the catalogue's endpoint of video tasks: a row passthrough on it is the upstream's to judge (model-rules.ts refusesOn)
const TASKS_ENDPOINT = '/api/v3/contents/generations/tasks';

export class VideoTaskExecutor implements TaskExecutor<'video', VideoTaskTypes> {
  readonly kind = 'video';
  readonly idPrefix = VIDEO_TASK_PREFIX;
  private readonly options: ResolvedOptions;
  private readonly http: UpstreamHttp;
  private readonly quotas: Quotas;
  private readonly reader: UpstreamTaskState;
  private readonly results: VideoTaskResults;
  private readonly usage: VideoTaskUsage;
  private readonly follower: VideoTaskFollower;

  constructor({ options, http, quotas }: GatewayDeps) {
    this.options = options;
    this.http = http;
    this.quotas = quotas;
    this.reader = new UpstreamTaskState(options, http);
    this.results = new VideoTaskResults(options, http, this.reader);
    this.usage = new VideoTaskUsage(options, quotas);
    this.follower = new VideoTaskFollower(options, this.reader, this.results, this.usage);
  }

  /** The scheduler's jobs of video tasks (tasks/task-jobs.ts): the polls of a task with a callback. */
  follow(record: VideoTaskRecord): Promise<NextPoll | undefined> {
    return this.follower.poll(record);
  }

  /** Nothing of a video task runs in this process: its work goes on at the vendor, and its polls on the scheduler. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Creates a video task for the caller (contract §4.2): `body` was validated by the route
   * (videoTaskSchema); `callerKey`, the request's bearer key, must not appear in a callback URL
   * (contract §5.5). Charged here; a task that ends without a video gives its seconds back later. A
   * dry run is answered the quote of that charge, with no upstream call and no task. A create in
   * another shape is `shaped`, and `body` its fields that no row decides (model, content, callback).
   */
  create(request: UseCaseRequest, { body, callerKey, shaped }: VideoTaskCreate): Promise<Outcome<CreatedTask | Quoted>> {
    const usage = usageFor(body.model);
    // usage events of task routes name the provider that serves tasks, also when a request fails before the resolver answered
    usage.provider = TASK_PROVIDER;
    return settle(usage, () => this.prepareCreate(request, body, callerKey, shaped)).then((outcome) => {
      if (!outcome.ok) return { ok: false, error: outcome.error, usage };
      // a Video object says how long the video is: with no `seconds` asked, the length it was charged for
      const asked = shaped && shaped.asked.seconds === undefined ? { ...shaped.asked, chargedSeconds: String(outcome.answer.videoSeconds) } : shaped?.asked;
      const prepared = { ...outcome.answer, ...(asked ? { asked } : {}) };
      const { videoSeconds, body } = prepared;
      // quotas after validation and the resolver, before the upstream call (docs/tenancy-and-billing.md)
      // a money budget reserves the most the video may cost: its seconds (`-1`: the model's longest) at the asked resolution
      const priced = { model: body.model, upstreamModels: upstreamModelsOf(prepared.upstreams), videoSeconds, ...(typeof body.resolution === 'string' ? { resolution: body.resolution } : {}) };
      const cost = { requests: 1, videoSeconds, videoTasks: 1, priced };
      return withCharge(this.quotas, request.caller, cost, usage, (charge) => this.createCharged(request, prepared, charge, usage), 'at-answer', request.dryRun);
    });
  }

  /**
   * What a create needs before anything is charged: the callback URL and references checked, the
   * upstreams resolved, the body of a create in another shape mapped for the row.
   */
  private async prepareCreate(request: UseCaseRequest, read: VideoTaskBody, callerKey: string, shaped: ShapedCreate | undefined): Promise<PreparedCreate> {
    const { caller } = request;
    // the rules of the row the task follows (docs/models.md "Which row a request follows"): a
    // caller-facing entry of the name before anything else runs, else the upstream model's row once
    // the resolver chose it. The shape's fields are mapped by that same row.
    const ruled = (entry: ModelEntry | undefined): VideoTaskBody => {
      const judged = entry && refusesOn(entry, TASKS_ENDPOINT) ? entry : undefined;
      const body = shaped ? shaped.bodyFor(judged) : read;
      checkVideoRules(judged, body);
      return body;
    };
    const named = this.options.models.named(read.model);
    let body = named ? ruled(named) : read;
    const callbackUrl = await checkCallbackTarget(this.options, body.callback_url, callerKey);
    const content = await mapReferences(this.options, body.content, caller);
    // the prompt and reference images checked before the resolver and any charge (docs/content-safety.md)
    if (this.options.moderation) await checkVideoInput({ options: this.options, http: this.http }, request, 'video.tasks', body.model, body, content);
    const upstreams = upstreamsKeepingResults(this.options, await resolveUpstreams(this.options, { model: body.model, route: 'video.tasks', caller, req: request.hostRequest }), body.model);
    const entry = named ?? rowFor(this.options.models, body.model, upstreams[0]);
    if (!named) body = ruled(entry);
    // the length the quota is charged for; lengths that disagree are a 400. `duration: -1` (the model
    // picks) is charged the model's longest video
    const videoSeconds = mostVideoSeconds(entry, body.duration) ?? videoSecondsOf(body, this.options.quotas?.defaultVideoSeconds ?? 5);
    return { body, content, callbackUrl, upstreams, videoSeconds, callerKey };
  }

  /**
   * Without `storage`, the upstreams whose results the caller cannot be given as they come (Veo's need
   * the operator's key) are left out, before any paid work; when none is left the create is refused
   * (docs/providers/gemini.md "Video (Veo)"), and the operator is told why.
   */
  private async createCharged(request: UseCaseRequest, prepared: PreparedCreate, charge: QuotaCharge, usage: Usage): Promise<CreatedTask> {
    const { caller } = request;
    const { body, content, callbackUrl, upstreams, videoSeconds } = prepared;
    const { model } = body;
    // the create carries the caller's tenant identifier where the vendor takes one (docs/security.md)
    const call: CallContext = { ...this.call(request.cancel.signal), safety: this.options.safetyIdentifier?.tagOf(caller.id) };
    const attempt = { route: 'video.tasks' as const, model, tenant: caller.id, request: request.hostRequest, prompt: () => videoPromptOf(content) };
    // the id before the submit: a vendor that calls back is given the task's own webhook URL (vendor-webhooks/)
    const id = newTaskId(VIDEO_TASK_PREFIX);
    // the create is booked under the task id the vendor answered
    const created = await withFallback(upstreams, this.options, attempt, { usage, idOf: (answer: { taskId: string }) => answer.taskId }, async (upstream) => {
      const tasks = requireUpstreamTasks(upstream, 'video', 'video.tasks', this.options.logger);
      // the provider that runs the task (Ark or Veo), not the first one that serves tasks
      attempting(usage, upstream.provider, upstream.model);
      // only a task with a callback is followed: only then is a call back of use
      const vendorWebhook = callbackUrl ? vendorWebhookUrl(this.options.vendorWebhooks, upstream.provider, id) : undefined;
      const taskId = await tasks.submit(vendorWebhook ? { ...call, vendorWebhook } : call, { ...body, content }, upstream, upstream.model ?? model);
      return { upstream, taskId, callsBack: vendorWebhook !== undefined };
    });
    // the provider that created it (the task providers are several: Ark, fal)
    usage.provider = created.upstream.provider;
    // background polls ask the resolver with this caller, not a bare { id } (caller-snapshot.ts)
    const snapshot = snapshotCaller(caller, prepared.callerKey);
    if (!snapshot.ok) this.options.logger.warn({ owner: caller.id, reason: snapshot.reason }, 'the caller is not stored with the task; background polls see { id } only');
    const trace = this.options.telemetry.currentTaskTrace();
    const charged = taskChargeOf(charge, { videoSeconds });
    const record: VideoTaskRecord = {
      kind: 'video',
      id,
      owner: caller.id,
      ...(snapshot.ok ? { caller: snapshot.caller } : {}),
      model,
      upstream: {
        provider: created.upstream.provider,
        baseURL: created.upstream.baseURL,
        taskId: created.taskId,
        ...(created.upstream.model !== undefined && created.upstream.model !== model ? { model: created.upstream.model } : {}),
        ...(created.callsBack ? { callsBack: true } : {}),
      },
      createdAt: Date.now(),
      status: 'queued',
      version: 1,
      // localResultStorage signs URLs to this router: callbacks (no request) use the base seen now
      ...(this.options.storage ? { resultBase: request.resultBase } : {}),
      ...(callbackUrl ? { callback: { url: callbackUrl, polls: 0, done: false } } : {}),
      ...(trace ? { trace } : {}),
      ...(prepared.asked ? { asked: prepared.asked } : {}),
      ...(charged ? { charge: charged } : {}),
    };
    // no record, no terminal state to free what the create took: a failure here is refunded by withCharge
    await this.options.store.createTask(record);
    this.options.telemetry.recordTaskTransition(record.status);
    if (callbackUrl) await this.options.scheduler.schedulePoll(record.id, fallbackPollDelay(record, this.pollDelay(0)), pollKey(record.id, 0));
    return { id: record.id, createdAt: record.createdAt, ...(record.asked ? { asked: record.asked } : {}) };
  }

  /**
   * contract §4.2: the task by the id from creation, as its vendor reports it, with the caller's id and
   * model; and its record as it was read (the OpenAI video shape shows its creation fields).
   */
  get(request: UseCaseRequest, id: string): Promise<Outcome<VideoTaskRead>> {
    const usage = usageFor('');
    return settle(usage, () => this.queryTask(request, id, usage)).then((outcome) => {
      if (outcome.ok) {
        usage.model = typeof outcome.answer.state.model === 'string' ? outcome.answer.state.model : '';
        usage.provider ??= TASK_PROVIDER;
      }
      return outcome;
    });
  }

  /**
   * A video task cannot be cancelled: its vendor runs it, and the gateway has no way to stop that work
   * (docs/video-tasks-and-callbacks.md). The caller's own task gets a 409 saying so; any other id the 404.
   */
  cancel(request: UseCaseRequest, id: string): Promise<Outcome<VideoTaskRead>> {
    const usage = usageFor('');
    return settle(usage, async () => {
      const record = await this.owned(request, id);
      usage.model = record.model;
      throw new GatewayError({
        status: 409,
        code: ERROR_CODES.taskNotCancellable,
        message: `Task '${id}' runs at its vendor, which the gateway cannot stop; it ends on its own.`,
      });
    });
  }

  /** The caller's own video task; anything else gets exactly the answer of one that never existed. */
  private async owned(request: UseCaseRequest, id: string): Promise<VideoTaskRecord> {
    const record = await findOwnTask(this.options.store, this, request.caller.id, id);
    if (!record) throw GatewayError.notFound(`Task '${id.slice(0, 64)}' was not found.`);
    return record;
  }

  private async queryTask(request: UseCaseRequest, id: string, usage: Usage): Promise<VideoTaskRead> {
    const { caller } = request;
    const req = request.hostRequest;
    let record = await this.owned(request, id);
    usage.provider = record.upstream.provider;
    if (record.result) {
      // a terminal state recorded before its usage event was (an older record): reported now, once
      if (!record.usageReported) await this.reportTerminal(record, record.result);
      return { record, state: await this.present(record, record.result, request.resultBase) };
    }
    // the request's own caller (same id as the owner, fresh from verifyKey) is more current than the snapshot
    const state = await this.fetchState(record, caller, req, request.cancel.signal);
    const status = String(state.status);
    // states only go forward (task-state-order.ts): a lagging answer (a replica behind) never moves
    // the record back, and the caller is shown the state the task has reached, not the older one
    if (isPassedStatus(status, record.status)) return { record, state: { ...state, status: record.status } };
    if (this.needsStoring(record, state)) {
      try {
        const stored = await this.storeResultsOnce(record, state);
        record = stored.record;
      } catch (error) {
        // answered with the upstream's URLs (where the caller may have them) and not recorded as
        // terminal, so the next query tries again
        return { record, state: this.results.withoutPrivateMedia(record, { ...state, storage_error: this.storageProblem(record, error) }) };
      }
    }
    let seen: VideoTaskRecord | undefined = record;
    if (status !== record.status || isTerminalStatus(status)) {
      // a lost compare-and-set only means another writer recorded the same upstream state; the winner
      // of the write that makes the task terminal is the one instance that reports its usage
      const terminal = isTerminalStatus(status);
      const updated = await updateTaskOf(this.options.store, record, { status, ...(terminal ? { result: this.results.recordable(record, state), usageReported: true } : {}) });
      if (updated && status !== record.status) this.recordTransition(record, state);
      if (updated && terminal) this.terminalReached(updated, state);
      seen = updated;
    }
    // a state a query saw that its callback has not carried yet is sent now, not at the next poll
    // (video-task-follower.ts deliverSeen); the writer that lost the compare-and-set leaves it to the winner
    if (seen?.callback && !seen.callback.done && seen.callback.notifiedStatus !== status) await this.follower.deliverSeen(seen, state);
    return { record: seen ?? record, state: await this.present(record, state, request.resultBase) };
  }

  // the parts create and query call, under the names they call them by

  private present(record: VideoTaskRecord, state: Record<string, unknown>, resultBase?: string): Promise<Record<string, unknown>> {
    return this.results.present(record, state, resultBase);
  }

  private needsStoring(record: VideoTaskRecord, state: Record<string, unknown>): boolean {
    return this.results.needsStoring(record, state);
  }

  private storeResultsOnce(record: VideoTaskRecord, state: Record<string, unknown>): Promise<{ record: VideoTaskRecord; bytes?: number }> {
    return this.results.storeOnce(record, state);
  }

  private storageProblem(record: VideoTaskRecord, error: unknown): string {
    return this.results.storageProblem(record, error);
  }

  private fetchState(record: VideoTaskRecord, caller: Caller, req: HostRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
    return this.reader.fetchState(record, caller, req, signal);
  }

  private recordTransition(record: VideoTaskRecord, state: Record<string, unknown>): void {
    this.usage.recordTransition(record, state);
  }

  private reportTerminal(record: VideoTaskRecord, result: Record<string, unknown>): Promise<void> {
    return this.usage.reportTerminal(record, result);
  }

  private terminalReached(record: VideoTaskRecord, result: Record<string, unknown>): void {
    this.usage.terminalReached(record, result);
  }

  private call(signal: AbortSignal): CallContext {
    return { http: this.http, signal, limits: this.options.limits };
  }

  private pollDelay(polls: number): number {
    return pollDelayOf(this.options.callbacks.pollIntervalsMs.video, polls);
  }
}

/** The text items of a video request, for an opted-in span (never a media URL). */
function videoPromptOf(content: ReadonlyArray<Record<string, unknown>>): string | undefined {
  return content.flatMap((item) => (typeof item.text === 'string' ? [item.text] : [])).join('\n') || undefined;
}

/** The catalogue's refused fields and lengths of a video model, judged by the gateway (not a passthrough row). */
function checkVideoRules(entry: ModelEntry | undefined, body: VideoTaskBody): void {
  if (!entry) return;
  checkRefusedFields(entry, body.model, body);
  checkDuration(entry, body.model, body.duration);
  checkVideoShape(entry, body.model, 'resolution', body.resolution);
  checkVideoShape(entry, body.model, 'ratio', body.ratio);
}
