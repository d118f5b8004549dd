// Idempotency-Key requests whose instance stopped (docs/tenancy-and-billing.md "Retries"): a running
// key holds a lease its request's instance renews (idempotency.ts). When the lease lapses, the first
// instance to find it (the key's watch job on the scheduler, or a retry that meets the key) claims it
// atomically in the store, so exactly one instance acts on it:
// - a request that runs on an upstream task of its own (DashScope's asynchronous synthesis, a
//   Replicate prediction, fal's queue) and whose task id its lease recorded is taken over and
//   followed, from the scheduler, to that task's end (the upstream resolved again with the stored
//   caller, as image tasks do: keys are never stored). Meanwhile a retry is told the key is in use.
//   Succeeded: the answer (stored as the route would, with `storage`; downloaded for `b64_json`)
//   becomes the key's `done` record, replayed to the retry, and its one usage event books the images
//   as delivered with the vendor's attempt `made` under its id. Failed: nothing was made or billed;
//   the key is left `interrupted` as below.
// - any other is booked as lost: its one usage event through the ledger (the upstream call, when it
//   had started, is an attempt of unknown outcome, lost by the gateway: ledger/lost-work.ts) and its
//   quota given back as the books say. The key is left `interrupted`: the next request with it is told
//   so (409 `idempotency_key_interrupted`) and frees it.
import { randomBytes } from 'node:crypto';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { encodeImageResponse } from '../../images/image-response-body.js';
import type { CallContext } from '../../providers/call-context.js';
import { upstreamTasksOf } from '../../providers/registry.js';
import type { NextPoll } from '../../stores/scheduling/job-scheduler.js';
import { type IdempotencyRecord, type LeasedWork, type RunningLease, type UpstreamTaskRef, doneRecord, keepsLeases } from '../../stores/idempotency/idempotency-store.js';
import type { Caller, RouteName, Upstream } from '../../types.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { WorkEnd } from '../ledger/work-end.js';
import { lostWorkUsage } from '../ledger/lost-work.js';
import { hasLapsed } from '../leases/lease-terms.js';
import { rehostImageAnswer } from '../results/rehost-images.js';
import { checkFollowedOutput } from '../moderation/task-moderation.js';
import { resolveUpstreams } from '../routing/resolve-upstreams.js';
import { downloadImages } from '../results/result-images.js';
import { NEVER_ABORTED } from '../tasks/background-work.js';
import type { TaskWatches } from '../tasks/task-jobs.js';
import { taskUpstreamAmong } from '../tasks/task-upstream.js';
import { recordedSettlement } from '../tenancy/recorded-charges.js';
import { leasedWorkOf, trackedWork } from './leased-work.js';
import { type Usage, type UseCaseRequest, attempting, settle, usageFor } from '../use-case.js';

// scheduler job ids of key watches; the rest is the scoped key (base64url)
const PREFIX = 'idemkey_';
// a watch looks just after the lease's end
const WATCH_MARGIN_MS = 1_000;
// a followed key's record outlives the end of following by this much, so its watch still finds it
const FOLLOW_RECORD_MARGIN_MS = 60_000;

type Running = Extract<IdempotencyRecord, { state: 'running' }> & { lease: RunningLease };

export class LapsedKeys implements TaskWatches {
  constructor(private readonly deps: GatewayDeps) {}

  /** Leases are kept: the store can renew and claim them atomically. */
  get enabled(): boolean {
    const store = this.deps.options.idempotency?.store;
    return store !== undefined && keepsLeases(store);
  }

  /** Upstream task ids are worth recording: the store can also hand a lapsed key over to one follower. */
  get follows(): boolean {
    return this.enabled && typeof this.deps.options.idempotency?.store.swap === 'function';
  }

  owns(id: string): boolean {
    return id.startsWith(PREFIX);
  }

  /** What a new key's lease says of its work, for the instance that books it if this one stops (leased-work.ts). */
  workOf(caller: Caller, bearerKey: string, route: RouteName, model: string): LeasedWork {
    return leasedWorkOf(caller, bearerKey, route, model);
  }

  /** The lease's work brought up to date with the use case's usage: what it charged, whether its call started. */
  tracked(work: LeasedWork, usage: Usage): LeasedWork {
    return trackedWork(work, usage);
  }

  /** Arms the key's watch for the end of its lease, on whichever instance runs the scheduler's job. */
  arm(key: string, leaseUntil: number): Promise<void> {
    return this.deps.options.scheduler.schedulePoll(PREFIX + key, Math.max(0, leaseUntil - Date.now()) + WATCH_MARGIN_MS, watchKey(key, leaseUntil));
  }

  /**
   * The scheduler's watch of a running key: nothing once it ended; a followed upstream task read once
   * more; its lease lapsed: claimed (followed, or booked); else looks again at the lease's end.
   */
  async watch(id: string): Promise<NextPoll | undefined> {
    const key = id.slice(PREFIX.length);
    const record = await this.deps.options.idempotency?.store.peek?.(key);
    if (record?.state !== 'running' || !record.lease) return undefined;
    const now = Date.now();
    const running = record as Running;
    if (!hasLapsed(record.lease.leaseUntil, now)) {
      if (record.lease.work.followedUntil !== undefined && record.lease.work.upstreamTask) return this.follow(key, running);
      return { delayMs: record.lease.leaseUntil - now + WATCH_MARGIN_MS, key: watchKey(key, record.lease.leaseUntil) };
    }
    await this.claim(key, now);
    return undefined;
  }

  /**
   * Claims a key whose lease lapsed by `now`: `following` when its upstream task is taken over (the key
   * stays running, followed from the scheduler), `booked` when its request was booked as lost (the key
   * is then `interrupted`), false when it was not lapsed or another instance claimed it first.
   */
  async claim(key: string, now: number): Promise<'following' | 'booked' | false> {
    const config = this.deps.options.idempotency;
    if (!config?.store.claimLapsed) return false;
    if (this.follows) {
      const held = await config.store.peek?.(key);
      if (held?.state === 'running' && held.lease && hasLapsed(held.lease.leaseUntil, now) && held.lease.work.upstreamTask && held.lease.work.followedUntil === undefined) {
        return (await this.takeOver(key, held as Running, now)) ? 'following' : false;
      }
    }
    const claimed = await config.store.claimLapsed(key, now, config.runningTtlMs);
    if (claimed?.state !== 'running' || !claimed.lease) return false;
    await this.bookLost(claimed.lease);
    return 'booked';
  }

  /**
   * Takes a lapsed key over to follow its upstream task: one compare-and-set, so exactly one instance
   * wins; the lease then runs to the end of following (its watch books it as lost past that), and the
   * first poll is scheduled at once.
   */
  private async takeOver(key: string, held: Running, now: number): Promise<boolean> {
    const config = this.deps.options.idempotency!;
    const until = now + config.runningTtlMs;
    const lease: RunningLease = { holder: randomBytes(12).toString('base64url'), leaseUntil: until, work: { ...held.lease.work, followedUntil: until } };
    if (!(await config.store.swap!(key, held, { ...held, lease }, config.runningTtlMs + FOLLOW_RECORD_MARGIN_MS))) return false;
    await this.deps.options.scheduler.schedulePoll(PREFIX + key, 0, `${PREFIX}${key}:follow:start`);
    return true;
  }

  /** One poll of a followed upstream task: its end made the key's record and booked, or when to look again. */
  private async follow(key: string, record: Running): Promise<NextPoll | undefined> {
    const { options } = this.deps;
    const { work } = record.lease;
    const task = work.upstreamTask!;
    const upstream = await this.upstreamOf(work, task);
    const tasks = upstreamTasksOf(upstream, 'image');
    if (!tasks) throw new Error(`provider ${upstream.provider} has no upstream image tasks`);
    const call: CallContext = { http: this.deps.http, signal: NEVER_ABORTED, limits: options.limits };
    const state = await tasks.read(call, upstream, task.id);
    if (state.status === 'running') return this.nextFollow(key);
    const usage = followedUsage(work, task, upstream.model);
    const attempt = usage.attempts!.at(-1)!;
    if (state.status === 'failed') {
      // the vendors bill what their task made: a failed task made nothing
      attempt.outcome = 'failed';
      attempt.images = 0;
      await this.end(key, record, { state: 'interrupted', fingerprint: record.fingerprint }, usage, { error: state.error });
      return undefined;
    }
    const { response } = state;
    usage.upstreamRequestId = response.extra.request_id || undefined;
    usage.upstreamImages = response.data.length;
    attempt.outcome = 'made';
    attempt.images = response.data.length;
    // the route's cap: the upstream does not decide how many images the caller gets
    response.data = response.data.slice(0, work.imagesAsked ?? response.data.length);
    usage.images = response.data.length;
    if (response.sizes) usage.imageSizes = response.sizes.slice(0, usage.images);
    if (response.usage) usage.upstreamUsage = response.usage;
    delete response.sizes;
    delete response.usage;
    // as the route completes an answer (image-pipeline.ts completeAnswer): bytes for b64_json, durable
    // URLs with `storage`; a download or a store that fails throws, and the scheduler polls again
    const from: UseCaseRequest = { caller: work.caller, hostRequest: undefined, resultBase: task.resultBase ?? '', cancel: { clientGone: NEVER_ABORTED, signal: NEVER_ABORTED }, requestId: key };
    // the caller's output checks before anything is downloaded for it or stored (docs/content-safety.md); a
    // refusal is the answer the retry gets
    const checked = await settle(usage, () => checkFollowedOutput(this.deps, call, from, work, usage, response));
    if (!checked.ok) {
      if (!GatewayError.is(checked.error)) throw checked.error;
      const refusal = Buffer.from(JSON.stringify(checked.error.toJSON()));
      await this.end(key, record, doneRecord(record.fingerprint, checked.error.status, 'application/json; charset=utf-8', refusal), usage, { error: checked.error });
      return undefined;
    }
    const images = task.base64 ? (checked.answer ?? (await downloadImages(response, call, upstream.provider, { allowPrivate: options.allowPrivateResultUrls }))) : undefined;
    await rehostImageAnswer(this.deps, usage, from, response, images ?? checked.answer);
    if (!task.base64) for (const item of response.data) if (item.url !== '' && item.b64_json !== '') item.b64_json = '';
    const body = images ? encodeImageResponse(response, images) : Buffer.from(JSON.stringify(response));
    const config = options.idempotency!;
    const done: IdempotencyRecord =
      body.length > config.maxAnswerBytes ? { state: 'too-large', fingerprint: record.fingerprint, bytes: body.length } : doneRecord(record.fingerprint, 200, 'application/json; charset=utf-8', body);
    await this.end(key, record, done, usage, {});
    return undefined;
  }

  /** Ends a followed key once (compare-and-set against the record the poll read): the record written, its books made. */
  private async end(key: string, record: Running, next: IdempotencyRecord, usage: Usage, end: WorkEnd): Promise<void> {
    const config = this.deps.options.idempotency!;
    if (!(await config.store.swap!(key, record, next, next.state === 'interrupted' ? config.runningTtlMs : config.ttlMs))) return;
    const error = GatewayError.is(end.error) ? end.error : undefined;
    await this.book(record.lease.work, usage, end, error ? { status: error.status, errorCode: error.code } : { status: 200 });
  }

  /** The resolver asked again with the stored caller (keys are never stored), for the upstream the task runs on. */
  private async upstreamOf(work: LeasedWork, task: UpstreamTaskRef): Promise<Upstream> {
    const upstreams = await resolveUpstreams(this.deps.options, { model: work.model, route: work.route, caller: work.caller, req: undefined });
    const upstream = taskUpstreamAmong(upstreams, { upstream: { provider: task.provider, baseURL: task.baseURL, taskId: task.id } });
    if (!upstream) throw new Error(`resolveUpstream no longer names a ${task.provider} upstream for an Idempotency-Key request's upstream task`);
    return upstream;
  }

  private nextFollow(key: string): NextPoll {
    // followed once its request's lease lapsed: the image schedule's steady pace (its last delay)
    const every = this.deps.options.callbacks.pollIntervalsMs.image.at(-1)!;
    // the same key on every instance that polls in the same interval: the next poll is queued once
    return { delayMs: every, key: `${PREFIX}${key}:follow:${Math.floor(Date.now() / every)}` };
  }

  /** The lost request's one usage event and the settlement of its charge (never throws: the key is claimed once). */
  private async bookLost(lease: RunningLease): Promise<void> {
    const { work } = lease;
    const started = work.attempted === true && work.provider !== undefined;
    const usage = lostWorkUsage({
      model: work.model,
      ...(work.provider !== undefined ? { provider: work.provider } : {}),
      ...(work.upstreamModel !== undefined ? { upstreamModel: work.upstreamModel } : {}),
      imagesAsked: work.imagesAsked ?? 0,
      started,
      ...(work.sizeAsked !== undefined ? { sizeAsked: work.sizeAsked } : {}),
      ...(work.quality !== undefined ? { quality: work.quality } : {}),
      ...(work.upstreamTask ? { id: work.upstreamTask.id } : {}),
    });
    const error = new GatewayError({
      status: 502,
      code: ERROR_CODES.idempotencyKeyInterrupted,
      message: 'The gateway instance running this request stopped before it answered; its outcome is unknown.',
    });
    await this.book(work, usage, { error }, { status: error.status, errorCode: error.code });
  }

  /**
   * A key's request ended on this instance by the books (ledger/work-books.ts), as its own instance
   * would have ended it: the charge its lease recorded settled by the books of its end, then its one
   * usage event. Never throws: the key is claimed once.
   */
  private book(work: LeasedWork, usage: Usage, end: WorkEnd, how: { status: number; errorCode?: string }): Promise<void> {
    usage.settleLater = recordedSettlement(this.deps.quotas, work.caller.id, work.charged, usage);
    return this.deps.options.books.close({
      caller: work.caller,
      route: work.route,
      status: how.status,
      latencyMs: Date.now() - work.startedAt,
      errorCode: how.errorCode,
      usage,
      end,
      reports: true,
    });
  }
}

/** What a followed upstream task did, for its usage event: the one vendor call of the request, by its id. */
function followedUsage(work: LeasedWork, task: UpstreamTaskRef, upstreamModel: string | undefined): Usage {
  const usage = usageFor(work.model);
  attempting(usage, task.provider, upstreamModel).id = task.id;
  usage.imagesAsked = work.imagesAsked ?? 1;
  if (work.sizeAsked !== undefined) usage.sizeAsked = work.sizeAsked;
  if (work.quality !== undefined) usage.imageQuality = work.quality;
  return usage;
}

function watchKey(key: string, leaseUntil: number): string {
  return `${PREFIX}${key}:lease:${leaseUntil}`;
}
