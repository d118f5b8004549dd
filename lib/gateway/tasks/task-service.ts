// Video tasks (contract §2.6, §3, §6): create, query, and follow-and-notify for tasks with a callback.
// The routes and the scheduler's jobs both come here. Every status transition is written with the
// store's compare-and-set, event ids and poll keys are derived from the task and its state, so when
// two instances see the same transition only one acts and a repeated job changes nothing.
import { createHash, randomBytes } from 'node:crypto';
import type { Request } from 'express';
import { GatewayError } from '../../errors/gateway-error.js';
import type { UpstreamHttp } from '../../transport/upstream-http.js';
import type { ResolvedOptions } from '../options.js';
import { checkCallbackUrl } from '../../security/callback-url.js';
import { NonPublicAddressError, requirePublicUrl, resolvePublicAddress } from '../../security/public-url.js';
import type { VideoContentItem, VideoTaskBody } from '../../schemas/video-task-schema.js';
import type { Caller, Upstream } from '../../types.js';
import type { CallContext } from '../../providers/call-context.js';
import { requireCapability } from '../../providers/registry.js';
import { secretsOf, withFallback } from '../fallback.js';
import { resolveUpstreams } from '../resolve-upstreams.js';
import { CallbackDeliveryError, type CallbackDeliverer, createCallbackDeliverer } from './callback-delivery.js';
import { callerOfTask, snapshotCaller } from './caller-snapshot.js';
import { WELL_FORMED_ASSET_ID, assetIdOf, assetReferencesIn, isAssetReference, isMediaUrlCandidate, stringsOf } from './content-references.js';
import type { DeliveryJob, NextPoll } from '../../stores/scheduling/job-scheduler.js';
import { isPassedStatus, isTerminalStatus } from './task-state-order.js';
import type { TaskRecord } from '../../stores/tasks/task-store.js';
import type { CallRecord } from '../call-record.js';
import { isObject } from '../../json/json-values.js';
import { NotMediaResult, type RehostContext, StorageFailure, requestBaseOf, storageFallback, storeFromUrl, urlOf } from '../durable-results.js';
import type { Quotas } from '../tenancy/quotas.js';
import { usageOf } from '../tenancy/usage-fields.js';
import { videoSecondsOf } from '../tenancy/request-costs.js';

const TASK_ID = /^task_[A-Za-z0-9_-]{22}$/;
// each distinct asset reference costs a store read: a body cannot make one request into thousands
const MAX_ASSET_REFERENCES = 64;
// longer than any asset id; a longer one is refused before it becomes a store key
const MAX_ASSET_ID_LENGTH = 256;
// compare-and-set losers re-read and decide again; a handful of rounds settles any real contention
const CAS_ROUNDS = 5;
// background calls are never aborted by a client; the deadline of each call still applies
const NEVER = new AbortController().signal;

export interface CreateTaskInput {
  caller: Caller;
  /** The bearer key of the request: a callback URL must not contain it (contract §5.5). */
  callerKey: string;
  /** Validated by the route (videoTaskSchema). */
  body: VideoTaskBody;
  req: Request;
  signal: AbortSignal;
  /** Where the quotas left after this create's charge are reported (the route's call record). */
  record?: Pick<CallRecord, 'rateLimit'>;
}

export class TaskService {
  private readonly deliverer: CallbackDeliverer;
  /** Re-hostings in progress on this instance, by task id: a query polling meanwhile joins it. */
  private readonly storing = new Map<string, Promise<{ record: TaskRecord; bytes?: number }>>();

  constructor(
    private readonly options: ResolvedOptions,
    private readonly http: UpstreamHttp,
    private readonly quotas: Quotas,
  ) {
    this.deliverer = createCallbackDeliverer({
      http,
      policy: options.callbacks, // allowLocal and the proxy host lists (contract §6.3)
      signingSecret: options.callbacks.signingSecret,
      timeoutMs: options.callbacks.timeoutMs,
    });
  }

  /** Starts the scheduler's work (polls and deliveries) with this service's handlers. */
  async start(): Promise<void> {
    const { callbacks, logger, telemetry } = this.options;
    await this.options.scheduler.start(
      {
        // background work: not in the context of whichever request armed the scheduler's timer
        poll: (taskId) => telemetry.detached(() => this.poll(taskId)),
        pollFailed: (taskId, error, attempts) => logger.error({ taskId, attempts, error: messageOf(error) }, 'task poll given up'),
        deliver: (job) => telemetry.detached(() => this.deliver(job)),
        isRetryable: (error) => !(error instanceof CallbackDeliveryError) || error.retryable,
        deliveryFailed: (job, error, attempts) => logger.error({ taskId: job.taskId, eventId: job.eventId, attempts, error: messageOf(error) }, 'callback delivery given up'),
        logger,
      },
      {
        maxAttempts: callbacks.maxAttempts,
        // a poll that cannot be made (store, resolver or Ark down) is retried for about as long as a
        // task is followed at all (maxFollowMs at the longest backoff): an outage shorter than that
        // only delays the callbacks; a longer one ends following with an error in the log
        pollAttempts: Math.max(callbacks.maxAttempts, Math.ceil(callbacks.maxFollowMs / callbacks.retryMaxMs)),
        // exponential backoff with "equal jitter": half fixed, half random, so retries spread out
        delayMs: (retry) => {
          const ceiling = Math.min(callbacks.retryMaxMs, callbacks.retryBaseMs * 2 ** (retry - 1));
          return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
        },
      },
    );
    // the operator's sign that polls and callback deliveries run (a failure to start is logged by the router)
    logger.info({}, 'task scheduler started');
  }

  async create(input: CreateTaskInput): Promise<{ id: string }> {
    const { caller, body } = input;
    const { model } = body;
    const callbackUrl = await this.checkCallback(body.callback_url, input.callerKey);
    const content = await this.mapReferences(body.content, caller);
    const upstreams = await resolveUpstreams(this.options, { model, route: 'video.tasks', caller, req: input.req });
    const call = this.call(input.signal);
    // quotas after validation and the resolver, before the upstream call (README "Tenant controls")
    const videoSeconds = videoSecondsOf(body, this.options.quotas?.defaultVideoSeconds ?? 5);
    const charge = await this.quotas.charge(caller, { requests: 1, videoSeconds, videoTasks: 1 });
    if (input.record) input.record.rateLimit = charge.rateLimit;
    const attempt = { route: 'video.tasks' as const, model, prompt: () => videoPromptOf(content) };
    let created;
    try {
      created = await withFallback(upstreams, this.options, attempt, async (upstream) => {
        const tasks = requireCapability(upstream, 'tasks', 'video.tasks', this.options.logger);
        return { upstream, taskId: await tasks.create(call, { ...body, content }, upstream, upstream.model ?? model) };
      });
    } catch (error) {
      await charge.refund(['videoSeconds', 'videoTasks']);
      throw error;
    }
    // background polls ask the resolver with this caller, not a bare { id } (caller-snapshot.ts)
    const snapshot = snapshotCaller(caller, input.callerKey);
    if (!snapshot.ok) this.options.logger.warn({ owner: caller.id, reason: snapshot.reason }, 'the caller is not stored with the task; background polls see { id } only');
    const trace = this.options.telemetry.currentTaskTrace();
    const record: TaskRecord = {
      id: `task_${randomBytes(16).toString('base64url')}`,
      owner: caller.id,
      ...(snapshot.ok ? { caller: snapshot.caller } : {}),
      model,
      upstream: { provider: created.upstream.provider, baseURL: created.upstream.baseURL, taskId: created.taskId },
      createdAt: Date.now(),
      status: 'queued',
      version: 1,
      // localResultStorage signs URLs to this router: callbacks (no request) use the base seen now
      ...(this.options.storage ? { resultBase: requestBaseOf(input.req) } : {}),
      ...(callbackUrl ? { callback: { url: callbackUrl, polls: 0, done: false } } : {}),
      ...(trace ? { trace } : {}),
      ...(charge.taken.length > 0
        ? {
            quota: {
              videoSeconds: charge.taken.includes('videoSeconds') ? videoSeconds : 0,
              slot: charge.taken.includes('videoTasks'),
              windowEnds: { videoSeconds: charge.windowEnds.videoSeconds, videoTasks: charge.windowEnds.videoTasks },
            },
          }
        : {}),
    };
    try {
      await this.options.store.createTask(record);
    } catch (error) {
      // no record, so no terminal state will ever free what the create took: given back now
      await charge.refund(['videoSeconds', 'videoTasks']);
      throw error;
    }
    this.options.telemetry.recordTaskTransition(record.status);
    if (callbackUrl) await this.options.scheduler.schedulePoll(record.id, this.pollDelay(0), pollKey(record.id, 0));
    return { id: record.id };
  }

  /** contract §4.2: the task by the id from creation, as Ark reports it, with the caller's id and model. */
  async query(caller: Caller, id: string, req: Request, signal: AbortSignal): Promise<Record<string, unknown>> {
    let record = TASK_ID.test(id) ? await this.options.store.getTask(id) : undefined;
    // another tenant's task gets exactly the answer of one that never existed
    if (!record || record.owner !== caller.id) throw GatewayError.notFound(`Task '${id.slice(0, 64)}' was not found.`);
    if (record.result) {
      // a terminal state recorded before its usage event was (an older record): reported now, once
      if (!record.usageReported) await this.reportTerminal(record, record.result);
      return this.present(record, record.result, req);
    }
    // the request's own caller (same id as the owner, fresh from verifyKey) is more current than the snapshot
    const state = await this.fetchState(record, caller, req, signal);
    const status = String(state.status);
    // states only go forward (task-state-order.ts): a lagging answer (a replica behind) never moves
    // the record back, and the caller is shown the state the task has reached, not the older one
    if (isPassedStatus(status, record.status)) return { ...state, status: record.status };
    if (this.needsStoring(record, state)) {
      try {
        const stored = await this.storeResultsOnce(record, state);
        record = stored.record;
      } catch (error) {
        // answered with the upstream's URLs and not recorded as terminal, so the next query tries again
        return { ...state, storage_error: this.storageProblem(record, error) };
      }
    }
    if (status !== record.status || isTerminalStatus(status)) {
      // a lost compare-and-set only means another writer recorded the same upstream state; the winner
      // of the write that makes the task terminal is the one instance that reports its usage
      const terminal = isTerminalStatus(status);
      const updated = await this.options.store.updateTask(record.id, record.version, { status, ...(terminal ? { result: state, usageReported: true } : {}) });
      if (updated && status !== record.status) this.recordTransition(record, state);
      if (updated && terminal) this.terminalReached(updated, state);
    }
    return this.present(record, state, req);
  }

  /**
   * A scheduled poll of a task with a callback: deliver a state change, say when to poll next.
   * Throws (logged here) when the poll could not be made: the scheduler retries it with backoff.
   */
  async poll(taskId: string): Promise<NextPoll | undefined> {
    try {
      return await this.follow(taskId);
    } catch (error) {
      this.options.logger.warn({ taskId, error: messageOf(error) }, 'task poll failed; retrying with backoff');
      throw error;
    }
  }

  private async follow(taskId: string): Promise<NextPoll | undefined> {
    // one hand-over per state per run, however many compare-and-set rounds it takes
    const scheduled = new Set<string>();
    for (let round = 0; round < CAS_ROUNDS; round += 1) {
      const record = await this.options.store.getTask(taskId);
      if (!record?.callback || record.callback.done) return undefined;
      let state = record.result;
      if (!state) {
        const upstream = await this.pollUpstream(record);
        try {
          state = await this.fetchFrom(upstream, record, NEVER);
        } catch (error) {
          // Ark no longer knows the task (deleted or expired): nothing more will happen to it
          if (error instanceof GatewayError && error.status === 404) {
            this.options.logger.warn({ taskId }, 'task no longer exists upstream; following stopped');
            return this.stopFollowing(record);
          }
          throw error;
        }
      }
      if (this.needsStoring(record, state)) {
        // recorded (compare-and-set) before anything is delivered; a failure throws, so the
        // scheduler retries this poll, and the re-hosting with it, with backoff
        try {
          await this.storeResultsOnce(record, state);
          continue;
        } catch (error) {
          // a result that is not media will not store on any retry: retrying would end in "poll
          // given up" and the callback would never say `succeeded`; it carries the upstream URL and
          // the note a query answers instead (recorded as the result, so it is not downloaded again)
          if (!(error instanceof NotMediaResult)) throw error;
          state = { ...state, storage_error: this.storageProblem(record, error) };
        }
      }
      const { callback } = record;
      const status = String(state.status);
      // contract §3, task-state-order.ts: a state the task has passed is neither recorded nor delivered
      const passed = isPassedStatus(status, record.status) || isPassedStatus(status, callback.notifiedStatus);
      const terminal = !passed && isTerminalStatus(status);
      const changed = !passed && status !== callback.notifiedStatus;
      const polls = callback.polls + 1;
      const expired = !terminal && Date.now() - record.createdAt > this.options.callbacks.maxFollowMs;
      const eventId = eventIdFor(record.id, status);
      if (changed && !scheduled.has(eventId)) {
        // handed to delivery BEFORE it is recorded as notified: a failure in between leaves it
        // unrecorded, so the retried poll hands it over again (same event id, queued once); the
        // other order would record a state that no job will ever deliver
        // contract §6.2: the body a query returns
        await this.options.scheduler.scheduleDelivery({
          eventId,
          taskId: record.id,
          url: callback.url,
          body: JSON.stringify(await this.present(record, state)),
          status,
          ...(record.trace ? { trace: record.trace } : {}),
        });
        scheduled.add(eventId);
      }
      const reports = terminal && !record.usageReported;
      const updated = await this.options.store.updateTask(record.id, record.version, {
        ...(passed ? {} : { status, ...(terminal ? { result: state } : {}) }),
        ...(reports ? { usageReported: true } : {}),
        callback: { ...callback, polls, ...(changed ? { notifiedStatus: status } : {}), done: terminal || expired },
      });
      if (!updated) continue;
      if (!passed && status !== record.status) this.recordTransition(record, state);
      if (reports) this.terminalReached(updated, state);
      if (terminal || expired) return undefined;
      return { delayMs: this.pollDelay(polls), key: pollKey(record.id, polls) };
    }
    // thrown, not returned: giving up here would end following with nothing in the log
    throw new Error(`task record kept changing during ${CAS_ROUNDS} compare-and-set rounds`);
  }

  /**
   * One delivery attempt, unless the task has already passed the job's state (a slow or retried
   * delivery of a non-terminal state that a later one overtook): such a job is dropped, whichever
   * scheduler runs it. A terminal state is never passed, so its delivery never waits on the store.
   */
  private async deliver(job: DeliveryJob): Promise<void> {
    const status = job.status ?? statusInBody(job.body);
    if (status !== undefined && !isTerminalStatus(status)) {
      const record = await this.options.store.getTask(job.taskId);
      if (record && isPassedStatus(status, record.status)) {
        this.options.logger.info({ taskId: job.taskId, eventId: job.eventId, status, current: record.status }, 'callback dropped: the task has moved past this state');
        this.options.telemetry.recordCallbackDelivery('dropped');
        return;
      }
    }
    await this.options.telemetry.callbackDelivery(job.trace, status, () => this.deliverer.deliver(job));
  }

  /** The metrics of a recorded state change: the transition, and a finished video's seconds. */
  private recordTransition(record: TaskRecord, state: Record<string, unknown>): void {
    const status = String(state.status);
    this.options.telemetry.recordTaskTransition(status);
    if (status === 'succeeded' && typeof state.duration === 'number' && state.duration > 0) {
      this.options.telemetry.recordVideoSeconds(state.duration, record.upstream.provider, record.model);
    }
  }

  /** Marks a terminal record as reported; the one writer that wins the compare-and-set reports it. */
  private async reportTerminal(record: TaskRecord, result: Record<string, unknown>): Promise<void> {
    const updated = await this.options.store.updateTask(record.id, record.version, { usageReported: true });
    if (updated) this.terminalReached(updated, result);
  }

  /**
   * Called exactly once per task, by the instance whose compare-and-set recorded `usageReported`:
   * frees the owner's concurrent-task slot, gives back the video-seconds of a task that did not
   * succeed (nothing was generated), and emits the task's one terminal usage event with what Ark
   * reported (duration, resolution, usage tokens), not what was asked.
   */
  private terminalReached(record: TaskRecord, result: Record<string, unknown>): void {
    const status = String(result.status);
    const failed = (error: unknown): void => this.options.logger.warn({ taskId: record.id, error: messageOf(error) }, 'quota release failed');
    const ends = record.quota?.windowEnds;
    if (record.quota?.slot) this.quotas.releaseVideoTask(record.owner, ends?.videoTasks).catch(failed);
    if (record.quota && record.quota.videoSeconds > 0 && status !== 'succeeded') this.quotas.refundVideoSeconds(record.owner, record.quota.videoSeconds, ends?.videoSeconds).catch(failed);
    const { onUsage } = this.options;
    if (!onUsage) return;
    const error = result.error as { code?: unknown } | null | undefined;
    const seconds = typeof result.duration === 'number' ? result.duration : undefined;
    try {
      onUsage({
        caller: callerOfTask(record),
        route: 'video.tasks',
        model: record.model,
        provider: record.upstream.provider,
        images: 0,
        status: 200,
        latencyMs: Date.now() - record.createdAt,
        task: { id: record.id, status },
        ...(status === 'succeeded' ? { video: { ...(seconds !== undefined ? { seconds } : {}), ...(typeof result.resolution === 'string' ? { resolution: result.resolution } : {}) } } : {}),
        ...(usageOf(result).usage ? { upstreamUsage: usageOf(result).usage } : {}),
        ...(error && typeof error.code === 'string' ? { errorCode: error.code } : {}),
        // the task's durable copies, counted once with the task whichever request or poll stored them
        ...(record.stored ? { storedBytes: record.stored.bytes } : {}),
      });
    } catch (thrown) {
      this.options.logger.error({ error: messageOf(thrown) }, 'onUsage threw');
    }
  }

  private async stopFollowing(record: TaskRecord): Promise<undefined> {
    if (record.callback) await this.options.store.updateTask(record.id, record.version, { callback: { ...record.callback, done: true } });
    return undefined;
  }

  /**
   * The upstream for a background poll, asked with the creator's caller (caller-snapshot.ts). A
   * refusal (null, or a throw) fails this poll, to be retried, and never ends following: a plan
   * lookup can fail for a while, and the task keeps running at Ark either way.
   */
  private async pollUpstream(record: TaskRecord): Promise<Upstream> {
    try {
      return await this.taskUpstream(record, callerOfTask(record), undefined);
    } catch (error) {
      throw new Error(`resolveUpstream gave no ${record.upstream.provider} upstream for the task's caller: ${messageOf(error)}`, { cause: error });
    }
  }

  private async fetchState(record: TaskRecord, caller: Caller, req: Request | undefined, signal: AbortSignal): Promise<Record<string, unknown>> {
    return this.fetchFrom(await this.taskUpstream(record, caller, req), record, signal);
  }

  private async taskUpstream(record: TaskRecord, caller: Caller, req: Request | undefined): Promise<Upstream> {
    // keys are never stored: the resolver is asked again, so they can rotate
    const upstreams = await resolveUpstreams(this.options, { model: record.model, route: 'video.tasks', caller, req });
    // the provider that created the task is the one that knows it
    const same = upstreams.filter((upstream) => upstream.provider === record.upstream.provider);
    const upstream = same.find((candidate) => sameBase(candidate.baseURL, record.upstream.baseURL)) ?? same[0];
    if (!upstream) {
      this.options.logger.error({ model: record.model }, `resolveUpstream no longer names a ${record.upstream.provider} upstream for a stored task`);
      throw GatewayError.internal();
    }
    return upstream;
  }

  private async fetchFrom(upstream: Upstream, record: TaskRecord, signal: AbortSignal): Promise<Record<string, unknown>> {
    try {
      const tasks = requireCapability(upstream, 'tasks', 'video.tasks', this.options.logger);
      const state = await this.options.telemetry.taskPoll(upstream, record.model, record.trace, () => tasks.get(this.call(signal), upstream, record.upstream.taskId));
      return tasks.toCallerTask(state, record.id, record.model);
    } catch (error) {
      throw error instanceof GatewayError ? error.withoutSecrets(secretsOf(upstream)) : error;
    }
  }

  private async checkCallback(value: unknown, callerKey: string): Promise<string | undefined> {
    if (value === undefined) return undefined;
    const policy = this.options.callbacks;
    const check = checkCallbackUrl(value, policy, callerKey);
    if (!check.ok) throw GatewayError.invalidRequest(`callback_url ${check.reason}`, 'callback_url');
    if (!policy.allowLocal) {
      try {
        await resolvePublicAddress(check.url.hostname, { allowPrivate: policy.allowLocal });
      } catch (error) {
        const inside = error instanceof NonPublicAddressError && error.inside;
        throw GatewayError.invalidRequest(inside ? 'callback_url resolves to a non-public address' : 'callback_url names a host that does not resolve', 'callback_url');
      }
    }
    return check.url.href;
  }

  /**
   * `asset://<id>` only for the caller's own assets (or the operator's, when allowed), and media URLs
   * get the image URL rules, in every string of every item at any depth: Ark reads fields the item's
   * `type` does not name, and new Ark versions add fields. `draft_task` ids, wherever an item carries
   * one, are gateway task ids of the caller, swapped for Ark's.
   */
  private async mapReferences(content: VideoContentItem[], caller: Caller): Promise<Array<Record<string, unknown>>> {
    const assets = new Map<string, string>();
    for (const [index, item] of content.entries()) {
      for (const entry of stringsOf(item, `content[${index}]`)) {
        for (const reference of assetReferencesIn(entry.value)) if (!assets.has(reference)) assets.set(reference, entry.path);
        // a string that is a reference is judged as one only, never also as a URL
        if (isAssetReference(entry.value) || !isMediaUrlCandidate(entry)) continue;
        // what is forwarded is the normalized URL (public-url.ts), written into the parsed body in place
        const normalized = this.checkMediaUrl(entry.value, entry.path);
        if (normalized !== undefined && normalized !== entry.value) entry.replace(normalized);
      }
    }
    if (assets.size > MAX_ASSET_REFERENCES) throw GatewayError.invalidRequest(`content references more than ${MAX_ASSET_REFERENCES} different assets`, 'content');
    // in order, so the first offending field is the one named
    for (const [reference, path] of assets) await this.checkAssetReference(reference, path, caller);

    const mapped: Array<Record<string, unknown>> = [];
    for (const [index, item] of content.entries()) {
      if (item.draft_task === undefined) {
        mapped.push(item);
        continue;
      }
      // the schema holds draft_task, wherever it appears, to { id: non-empty string }
      const draft = item.draft_task;
      const { id } = draft;
      const record = TASK_ID.test(id) ? await this.options.store.getTask(id) : undefined;
      if (!record || record.owner !== caller.id) {
        throw GatewayError.invalidRequest(`content[${index}].draft_task.id '${id.slice(0, 64)}' is not one of your tasks`, `content[${index}].draft_task.id`);
      }
      mapped.push({ ...item, draft_task: { ...draft, id: record.upstream.taskId } });
    }
    return mapped;
  }

  /**
   * Only the exact spelling `asset://<id>` can pass: an id recorded for the caller, or, with
   * allowOperatorAssets, a well-formed Ark id recorded for nobody. Another tenant's asset and one that
   * does not exist get the same answer, so a caller cannot probe for other tenants' ids.
   */
  private async checkAssetReference(reference: string, path: string, caller: Caller): Promise<void> {
    const id = assetIdOf(reference);
    const asset = id && id.length <= MAX_ASSET_ID_LENGTH ? await this.options.store.getAsset(id) : undefined;
    const allowed = asset ? asset.owner === caller.id : this.options.allowOperatorAssets && id !== undefined && WELL_FORMED_ASSET_ID.test(id);
    if (!allowed) throw GatewayError.invalidRequest(`${path} references '${reference.slice(0, 100)}', which is not one of your assets`, path);
  }

  /** The normalized URL to forward, or undefined for a Data URL (kept as it is). Asset references never come here. */
  private checkMediaUrl(url: string, path: string): string | undefined {
    if (/^data:/i.test(url)) return undefined;
    // the one URL check every route shares (public-url.ts)
    return requirePublicUrl(
      url,
      path,
      { allowPrivate: this.options.allowPrivateImageUrls },
      {
        notHttp: () => 'must be an http(s) URL, a Data URL or asset://<id>',
        notPublic: 'names a loopback, private or link-local host; the URL must be publicly reachable',
      },
    );
  }

  /** True when durable results are on and this succeeded task's results are not stored yet. */
  private needsStoring(record: TaskRecord, state: Record<string, unknown>): boolean {
    return this.options.storage !== undefined && record.stored === undefined && state.status === 'succeeded' && mediaUrlsOf(state).length > 0;
  }

  /**
   * storeResults, once per task on this instance at a time: a client polling every few seconds
   * while a large video is copied would otherwise start a full download and upload per query (the
   * compare-and-set keeps one copy, but the others cost the transfer). Joiners report no bytes.
   */
  private storeResultsOnce(record: TaskRecord, state: Record<string, unknown>): Promise<{ record: TaskRecord; bytes?: number }> {
    const running = this.storing.get(record.id);
    if (running) return running.then(({ record: stored }) => ({ record: stored }));
    const started = this.storeResults(record, state).finally(() => this.storing.delete(record.id));
    this.storing.set(record.id, started);
    return started;
  }

  /**
   * Re-hosts the video and last frame once and records their keys with compare-and-set. When
   * another writer recorded keys first, ours are deleted and the record with theirs is returned, so
   * however many instances see `succeeded`, one set of objects is kept and every answer names it.
   */
  private async storeResults(record: TaskRecord, state: Record<string, unknown>): Promise<{ record: TaskRecord; bytes?: number }> {
    const storage = this.options.storage!;
    const context: RehostContext = {
      storage,
      http: this.http,
      limits: this.options.limits,
      logger: this.options.logger,
      telemetry: this.options.telemetry,
      allowPrivate: this.options.allowPrivateResultUrls,
      caller: callerOfTask(record),
      provider: record.upstream.provider,
      signal: NEVER,
    };
    const keys: Record<string, string> = {};
    let bytes = 0;
    try {
      for (const [field, url] of mediaUrlsOf(state)) {
        const stored = await storeFromUrl(context, url, field === 'video_url' ? 'video' : 'image');
        keys[field] = stored.key;
        bytes += stored.bytes;
      }
    } catch (error) {
      for (const key of Object.values(keys)) void storage.store.delete(key).catch(() => undefined);
      throw error;
    }
    let current: TaskRecord | undefined = record;
    try {
      for (let round = 0; round < CAS_ROUNDS && current; round += 1) {
        if (current.stored) break;
        const updated = await this.options.store.updateTask(current.id, current.version, { stored: { keys, bytes } });
        if (updated) return { record: updated, bytes };
        current = await this.options.store.getTask(record.id);
      }
    } catch (error) {
      // the task store failed: copies it does not name would be orphans (a whole video per retried
      // poll), so they go; but a write can land and still fail to answer, so they are deleted only
      // when the record is read back without them (unreadable: kept, an orphan beats a dead URL)
      const now = await this.options.store.getTask(record.id).catch(() => undefined);
      const ours = now?.stored !== undefined && Object.values(now.stored.keys).some((key) => Object.values(keys).includes(key));
      if (now && !ours) for (const key of Object.values(keys)) void storage.store.delete(key).catch(() => undefined);
      throw error;
    }
    for (const key of Object.values(keys)) void storage.store.delete(key).catch(() => undefined);
    if (current?.stored) return { record: current };
    throw new Error(`task record kept changing during ${CAS_ROUNDS} compare-and-set rounds`);
  }

  /**
   * What a query answers and a callback carries: the stored results' freshly signed URLs in place
   * of the upstream's. A query signs for the base URL it came in on; a callback for the creator's.
   */
  private async present(record: TaskRecord, state: Record<string, unknown>, req?: Request): Promise<Record<string, unknown>> {
    const storage = this.options.storage;
    if (!storage || !record.stored || !isObject(state.content)) return state;
    const content: Record<string, unknown> = { ...state.content };
    try {
      for (const [field, key] of Object.entries(record.stored.keys)) content[field] = await urlOf(storage, key, req ? requestBaseOf(req) : record.resultBase);
    } catch (error) {
      // a store that cannot sign now is a storage failure like any other: a query answers as
      // storage.onFailure says (the upstream's URLs with a note, or 502 storage_failed); a callback's
      // poll (no request) throws, so it is retried with backoff like the re-hosting itself
      if (!req) throw error;
      return { ...state, storage_error: this.storageProblem(record, error) };
    }
    return { ...state, content };
  }

  /** A failed re-hosting on a query: logged, then a note for the answer (or a 502 storage_failed). */
  private storageProblem(record: TaskRecord, error: unknown): string {
    const fields = { taskId: record.id, provider: record.upstream.provider };
    if (error instanceof StorageFailure) return storageFallback(this.options.storage!, this.options.logger, error, fields);
    if (!(error instanceof GatewayError)) throw error;
    this.options.logger.warn({ ...fields, error: error.message }, 'task result could not be downloaded for storage');
    return `the result could not be stored: ${error.message}`;
  }

  private call(signal: AbortSignal): CallContext {
    return { http: this.http, signal, limits: this.options.limits };
  }

  private pollDelay(polls: number): number {
    const intervals = this.options.callbacks.pollIntervalsMs;
    return intervals[Math.min(polls, intervals.length - 1)]!;
  }
}

/** The Ark `content` fields that are result media URLs (upstreams §2.3), as [field, url]. */
function mediaUrlsOf(state: Record<string, unknown>): Array<[string, string]> {
  if (!isObject(state.content)) return [];
  const content = state.content;
  return MEDIA_FIELDS.flatMap((field) => (typeof content[field] === 'string' && content[field] !== '' ? [[field, content[field]] as [string, string]] : []));
}

const MEDIA_FIELDS = ['video_url', 'last_frame_url'] as const;

function sameBase(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

/** Same for every attempt at one state of one task: receivers deduplicate on it (contract §6.4). */
export function eventIdFor(taskId: string, status: string): string {
  return `evt_${createHash('sha256').update(`${taskId}\n${status}`).digest('base64url').slice(0, 27)}`;
}

function pollKey(taskId: string, polls: number): string {
  return `poll:${taskId}:${polls}`;
}

/** The text items of a video request, for an opted-in span (never a media URL). */
function videoPromptOf(content: ReadonlyArray<Record<string, unknown>>): string | undefined {
  return content.flatMap((item) => (typeof item.text === 'string' ? [item.text] : [])).join('\n') || undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The status inside a delivery body, for jobs queued before DeliveryJob.status existed. */
function statusInBody(body: string): string | undefined {
  try {
    const status = (JSON.parse(body) as { status?: unknown }).status;
    return typeof status === 'string' ? status : undefined;
  } catch {
    return undefined;
  }
}
