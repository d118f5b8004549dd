// Video tasks (spec §2.6, §3, §6): create, query, and follow-and-notify for tasks with a callback.
// The routes and the scheduler's jobs both come here. Every status transition is written with the
// store's compare-and-set, event ids and poll keys are derived from the task and its state, so when
// two instances see the same transition only one acts and a repeated job changes nothing.
import { createHash, randomBytes } from 'node:crypto';
import type { Request } from 'express';
import { GatewayError } from '../errors/gateway-error.js';
import type { UpstreamHttp } from '../http/upstream-http.js';
import type { ResolvedOptions } from '../options.js';
import { checkCallbackUrl, resolvePublicTarget } from '../security/callback-url.js';
import { isNonPublicHost } from '../security/public-host.js';
import type { Caller } from '../types.js';
import { createArkTask, getArkTask, isTerminalStatus, toCallerTask } from '../upstreams/ark.js';
import type { CallContext } from '../upstreams/call-context.js';
import { requireProvider, resolveUpstreams, secretsOf, withFallback } from '../upstreams/resolve-upstreams.js';
import { CallbackDeliveryError, type CallbackDeliverer, createCallbackDeliverer } from './callback-delivery.js';
import type { NextPoll } from './job-scheduler.js';
import type { TaskRecord } from './task-store.js';

const TASK_ID = /^task_[A-Za-z0-9_-]{22}$/;
// compare-and-set losers re-read and decide again; a handful of rounds settles any real contention
const CAS_ROUNDS = 5;
// background calls are never aborted by a client; the deadline of each call still applies
const NEVER = new AbortController().signal;

export interface CreateTaskInput {
  caller: Caller;
  /** The bearer key of the request: a callback URL must not contain it (spec §5.5). */
  callerKey: string;
  body: Record<string, unknown>;
  req: Request;
  signal: AbortSignal;
}

export class TaskService {
  private readonly deliverer: CallbackDeliverer;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly http: UpstreamHttp,
  ) {
    this.deliverer = createCallbackDeliverer({
      http,
      policy: { allowLocal: options.callbacks.allowLocal },
      signingSecret: options.callbacks.signingSecret,
      timeoutMs: options.callbacks.timeoutMs,
    });
  }

  /** Starts the scheduler's work (polls and deliveries) with this service's handlers. */
  async start(): Promise<void> {
    const { callbacks, logger } = this.options;
    await this.options.scheduler.start(
      {
        poll: (taskId) => this.poll(taskId),
        deliver: (job) => this.deliverer.deliver(job),
        isRetryable: (error) => !(error instanceof CallbackDeliveryError) || error.retryable,
        deliveryFailed: (job, error, attempts) =>
          logger.error('callback delivery given up', { taskId: job.taskId, eventId: job.eventId, attempts, error: error instanceof Error ? error.message : String(error) }),
      },
      {
        maxAttempts: callbacks.maxAttempts,
        // exponential backoff with "equal jitter": half fixed, half random, so retries spread out
        delayMs: (retry) => {
          const ceiling = Math.min(callbacks.retryMaxMs, callbacks.retryBaseMs * 2 ** (retry - 1));
          return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
        },
      },
    );
  }

  async create(input: CreateTaskInput): Promise<{ id: string }> {
    const { caller, body } = input;
    const model = body.model as string;
    const callbackUrl = await this.checkCallback(body.callback_url, input.callerKey);
    const content = await this.mapReferences(body.content as Array<Record<string, unknown>>, caller);
    const upstreams = await resolveUpstreams(this.options, { model, route: 'video.tasks', caller, req: input.req });
    const call = this.call(input.signal);
    const created = await withFallback(upstreams, this.options, async (upstream) => {
      requireProvider(upstream, 'ark', 'video.tasks', this.options);
      return { upstream, taskId: await createArkTask(call, { ...body, content }, upstream, upstream.model ?? model) };
    });
    const record: TaskRecord = {
      id: `task_${randomBytes(16).toString('base64url')}`,
      owner: caller.id,
      model,
      upstream: { provider: 'ark', baseURL: created.upstream.baseURL, taskId: created.taskId },
      createdAt: Date.now(),
      status: 'queued',
      version: 1,
      ...(callbackUrl ? { callback: { url: callbackUrl, polls: 0, done: false } } : {}),
    };
    await this.options.store.createTask(record);
    if (callbackUrl) await this.options.scheduler.schedulePoll(record.id, this.pollDelay(0), pollKey(record.id, 0));
    return { id: record.id };
  }

  /** spec §4.2: the task by the id from creation, as Ark reports it, with the caller's id and model. */
  async query(caller: Caller, id: string, req: Request, signal: AbortSignal): Promise<Record<string, unknown>> {
    const record = TASK_ID.test(id) ? await this.options.store.getTask(id) : undefined;
    // another tenant's task gets exactly the answer of one that never existed
    if (!record || record.owner !== caller.id) throw GatewayError.notFound(`Task '${id.slice(0, 64)}' was not found.`);
    if (record.result) return record.result;
    const state = await this.fetchState(record, caller, req, signal);
    const status = String(state.status);
    if (status !== record.status || isTerminalStatus(status)) {
      // a lost compare-and-set only means another writer recorded the same upstream state
      await this.options.store.updateTask(record.id, record.version, { status, ...(isTerminalStatus(status) ? { result: state } : {}) });
    }
    return state;
  }

  /** A scheduled poll of a task with a callback: deliver a changed state, say when to poll next. */
  async poll(taskId: string): Promise<NextPoll | undefined> {
    for (let round = 0; round < CAS_ROUNDS; round += 1) {
      const record = await this.options.store.getTask(taskId);
      if (!record?.callback || record.callback.done) return undefined;
      let state: Record<string, unknown>;
      try {
        state = record.result ?? (await this.fetchState(record, { id: record.owner }, undefined, NEVER));
      } catch (error) {
        this.options.logger.warn('task poll failed; polling again later', { taskId, error: error instanceof Error ? error.message : String(error) });
        if (error instanceof GatewayError && error.status === 404) return this.stopFollowing(record);
        // nothing was recorded, so the key must differ from the poll that just ran
        return { delayMs: this.pollDelay(record.callback.polls + 1), key: `${pollKey(record.id, record.callback.polls)}:retry:${Date.now()}` };
      }
      const status = String(state.status);
      const terminal = isTerminalStatus(status);
      const changed = status !== record.callback.notifiedStatus;
      const polls = record.callback.polls + 1;
      const expired = !terminal && Date.now() - record.createdAt > this.options.callbacks.maxFollowMs;
      const updated = await this.options.store.updateTask(record.id, record.version, {
        status,
        ...(terminal ? { result: state } : {}),
        callback: { ...record.callback, polls, notifiedStatus: status, done: terminal || expired },
      });
      if (!updated) continue;
      if (changed) {
        // spec §6.2: the body a query returns; the event id is the same for every attempt at this state
        await this.options.scheduler.scheduleDelivery({ eventId: eventIdFor(record.id, status), taskId: record.id, url: record.callback.url, body: JSON.stringify(state) });
      }
      if (terminal || expired) return undefined;
      return { delayMs: this.pollDelay(polls), key: pollKey(record.id, polls) };
    }
    return undefined;
  }

  private async stopFollowing(record: TaskRecord): Promise<undefined> {
    if (record.callback) await this.options.store.updateTask(record.id, record.version, { callback: { ...record.callback, done: true } });
    return undefined;
  }

  private async fetchState(record: TaskRecord, caller: Caller, req: Request | undefined, signal: AbortSignal): Promise<Record<string, unknown>> {
    // keys are never stored: the resolver is asked again, so they can rotate
    const upstreams = await resolveUpstreams(this.options, { model: record.model, route: 'video.tasks', caller, req });
    const arks = upstreams.filter((upstream) => upstream.provider === 'ark');
    const upstream = arks.find((candidate) => sameBase(candidate.baseURL, record.upstream.baseURL)) ?? arks[0];
    if (!upstream) {
      this.options.logger.error('resolveUpstream no longer names an ark upstream for a stored task', { model: record.model });
      throw GatewayError.internal();
    }
    try {
      return toCallerTask(await getArkTask(this.call(signal), upstream, record.upstream.taskId), record.id, record.model);
    } catch (error) {
      throw error instanceof GatewayError ? error.withoutSecrets(secretsOf(upstream)) : error;
    }
  }

  private async checkCallback(value: unknown, callerKey: string): Promise<string | undefined> {
    if (value === undefined) return undefined;
    const policy = { allowLocal: this.options.callbacks.allowLocal };
    const check = checkCallbackUrl(value, policy, callerKey);
    if (!check.ok) throw GatewayError.invalidRequest(`callback_url ${check.reason}`, 'callback_url');
    if (!policy.allowLocal) {
      try {
        await resolvePublicTarget(check.url.hostname, policy);
      } catch (error) {
        const inside = error instanceof Error && /non-public/.test(error.message);
        throw GatewayError.invalidRequest(
          inside ? 'callback_url resolves to a non-public address' : 'callback_url names a host that does not resolve',
          'callback_url',
        );
      }
    }
    return check.url.href;
  }

  /**
   * `asset://<id>` only for the caller's own assets (or the operator's, when allowed); `draft_task`
   * ids are gateway task ids of the caller, swapped for Ark's. Media URLs get the image URL rules.
   */
  private async mapReferences(content: Array<Record<string, unknown>>, caller: Caller): Promise<Array<Record<string, unknown>>> {
    return Promise.all(
      content.map(async (item, index) => {
        for (const kind of ['image_url', 'video_url', 'audio_url'] as const) {
          const media = item[kind] as { url?: unknown } | undefined;
          if (item.type === kind && media && typeof media.url === 'string') await this.checkMediaUrl(media.url, `content[${index}].${kind}.url`, caller);
        }
        if (item.type === 'draft_task') {
          const draft = item.draft_task as { id: string };
          const record = TASK_ID.test(draft.id) ? await this.options.store.getTask(draft.id) : undefined;
          if (!record || record.owner !== caller.id) {
            throw GatewayError.invalidRequest(`content[${index}].draft_task.id '${draft.id.slice(0, 64)}' is not one of your tasks`, `content[${index}].draft_task.id`);
          }
          return { ...item, draft_task: { ...draft, id: record.upstream.taskId } };
        }
        return item;
      }),
    );
  }

  private async checkMediaUrl(url: string, path: string, caller: Caller): Promise<void> {
    if (url.startsWith('asset://')) {
      const id = url.slice('asset://'.length);
      const asset = id ? await this.options.store.getAsset(id) : undefined;
      const allowed = asset ? asset.owner === caller.id : this.options.allowOperatorAssets && id !== '';
      // the same answer whether the asset is another tenant's or does not exist
      if (!allowed) throw GatewayError.invalidRequest(`${path} references '${url.slice(0, 100)}', which is not one of your assets`, path);
      return;
    }
    if (/^data:/i.test(url)) return;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw GatewayError.invalidRequest(`${path} must be an http(s) URL, a Data URL or asset://<id>`, path);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw GatewayError.invalidRequest(`${path} must be an http(s) URL, a Data URL or asset://<id>`, path);
    if (!this.options.allowPrivateImageUrls && isNonPublicHost(parsed.hostname)) {
      throw GatewayError.invalidRequest(`${path} names a loopback, private or link-local host; the URL must be publicly reachable`, path);
    }
  }

  private call(signal: AbortSignal): CallContext {
    return { http: this.http, signal, limits: this.options.limits };
  }

  private pollDelay(polls: number): number {
    const intervals = this.options.callbacks.pollIntervalsMs;
    return intervals[Math.min(polls, intervals.length - 1)]!;
  }
}

function sameBase(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

/** Same for every attempt at one state of one task: receivers deduplicate on it (spec §6.4). */
export function eventIdFor(taskId: string, status: string): string {
  return `evt_${createHash('sha256').update(`${taskId}\n${status}`).digest('base64url').slice(0, 27)}`;
}

function pollKey(taskId: string, polls: number): string {
  return `poll:${taskId}:${polls}`;
}
