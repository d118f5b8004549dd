// The delivery log (docs/video-tasks-and-callbacks.md "Delivery log"): every callback delivery (one
// state of one task to one URL, under its webhook-id) and each of its attempts, kept in the task store
// for `deliveries.retentionDays`, read and replayed by the operator (the router's `deliveries`) and by
// each tenant for its own (routes/deliveries.ts). The task core tells it three things: a state was
// handed over (`opened`), an attempt was made (`attempt`), a job ended without one (`superseded`,
// `failed`). Recording never stands in a delivery's way: a store that fails is logged, and the
// delivery goes on. A replay is a delivery job of its own through the scheduler, so any number of
// them queue instead of running at once. The endpoints the log's deliveries go to are endpoints.ts's.
import { clock } from '../../clock.js';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Logger } from '../../options/host-hooks.js';
import type { DeliveryJob, JobScheduler } from '../../stores/scheduling/job-scheduler.js';
import type { DeliveryAttempt, DeliveryLogStore, DeliveryQuery, DeliveryRecord, DeliveryState } from '../../stores/tasks/delivery-records.js';
import type { TaskStore } from '../../stores/tasks/task-store.js';
import { DEFAULT_PER_ENDPOINT_IN_FLIGHT, type ResolvedDeliveries } from '../options/delivery-options.js';
import { type DeliveryDetail, type DeliverySummary, MAX_RESPONSE_BYTES, deliveryDetail, deliverySummary, withoutQuery } from './delivery-view.js';
import { type EndpointDisabledHook, type EndpointEnabled, Endpoints, recordedJob } from './endpoints.js';

export const DELIVERY_STATES: readonly DeliveryState[] = Object.freeze(['pending', 'delivered', 'failed', 'paused', 'superseded']);

/** What `gateway.deliveries.list` takes. Times are ms since the epoch or Dates. */
export interface DeliveryListQuery {
  tenant?: string;
  taskId?: string;
  state?: DeliveryState;
  since?: number | Date;
  until?: number | Date;
  /** 1-100. Default 20. */
  limit?: number;
  /** `nextCursor` of the page before. */
  cursor?: string;
}

/** A page of deliveries, newest first. */
export interface DeliveryList {
  data: DeliverySummary[];
  hasMore: boolean;
  /** Where the next page starts (opaque); null on the last page. */
  nextCursor: string | null;
}

/** What `gateway.deliveries.replayAll` (and a tenant's bulk replay) resends. */
export interface DeliveryReplayFilter {
  tenant?: string;
  state: DeliveryState;
  since?: number | Date;
  until?: number | Date;
}

/** The operator's side of the log, on the router as `gateway.deliveries`. */
export interface DeliveriesApi {
  /** A page of deliveries, newest first. @example await gateway.deliveries.list({ tenant: 'tenant-a', state: 'failed' }) */
  list(query?: DeliveryListQuery): Promise<DeliveryList>;
  /** One delivery with its body and every attempt; undefined when it is not (or no longer) recorded. */
  get(id: string): Promise<DeliveryDetail | undefined>;
  /** Sends the recorded body again under the same webhook-id; undefined when it is not recorded. */
  replay(id: string): Promise<DeliveryDetail | undefined>;
  /** Replays every delivery that matches, queued through the scheduler; resolves with how many. */
  replayAll(filter: DeliveryReplayFilter): Promise<{ queued: number }>;
  /**
   * Enables a disabled endpoint (the callback URL's origin and path; a query is ignored) of `tenant`, or
   * of every tenant when none is named, and sends what was paused, oldest first, one after another.
   * @example await gateway.deliveries.enable('https://hooks.example.com/video', { tenant: 'tenant-a' })
   */
  enable(url: string, options?: { tenant?: string }): Promise<EndpointEnabled>;
}

const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;
/** Deliveries read and queued per step of a bulk replay, between which the event loop turns. */
const REPLAY_BATCH = 100;

export class DeliveryLog implements DeliveriesApi {
  private readonly store?: DeliveryLogStore;
  /** The endpoints of the recorded deliveries; undefined while the log is off (nothing paused could be kept). */
  readonly endpoints?: Endpoints;

  constructor(
    private readonly settings: ResolvedDeliveries | undefined,
    store: TaskStore,
    private readonly scheduler: JobScheduler,
    private readonly logger: Logger,
    onEndpointDisabled?: EndpointDisabledHook,
  ) {
    if (!settings) return;
    const { createDelivery, getDelivery, updateDelivery, listDeliveries } = store;
    if (createDelivery && getDelivery && updateDelivery && listDeliveries) {
      this.store = {
        createDelivery: createDelivery.bind(store),
        getDelivery: getDelivery.bind(store),
        updateDelivery: updateDelivery.bind(store),
        listDeliveries: listDeliveries.bind(store),
      };
      this.endpoints = new Endpoints(settings, store, this.store, scheduler, onEndpointDisabled, logger);
    } else {
      logger.warn({}, 'the task store has no delivery methods (createDelivery, getDelivery, updateDelivery, listDeliveries): the delivery log is off');
    }
  }

  /** Most attempts to one endpoint at once (`deliveries.perEndpointInFlight`), the log on or off. */
  get perEndpointInFlight(): number {
    return this.settings?.perEndpointInFlight ?? DEFAULT_PER_ENDPOINT_IN_FLIGHT;
  }

  /** True when deliveries are recorded. */
  get enabled(): boolean {
    return this.store !== undefined;
  }

  /**
   * A state of `owner`'s task was handed to delivery: recorded `pending`, once per webhook-id, or
   * `paused` when its endpoint is disabled (true: not to be queued).
   */
  async opened(job: DeliveryJob, owner: string): Promise<boolean> {
    if (!this.store || !this.settings || job.replay !== undefined) return false;
    let paused = false;
    try {
      paused = await this.endpoints!.disabled(this.endpoints!.of({ url: job.url, owner }));
    } catch (error) {
      // a store that cannot say pauses nothing: the delivery goes on
      this.logger.warn({ taskId: job.taskId, eventId: job.eventId, error: error instanceof Error ? error.message : String(error) }, 'the health of a callback endpoint could not be read');
    }
    const createdAt = clock().now();
    const record: DeliveryRecord = {
      id: job.eventId,
      taskId: job.taskId,
      owner,
      event: job.status ?? '',
      url: job.url,
      body: job.body,
      state: paused ? 'paused' : 'pending',
      createdAt,
      expiresAt: createdAt + this.settings.retentionMs,
      attempts: [],
    };
    await this.guard(job, () => this.store!.createDelivery(record, { maxEntries: this.settings!.maxEntries }));
    return paused;
  }

  /** The job's endpoint is disabled: it is kept `paused`, not attempted, until the endpoint is enabled. */
  async paused(job: DeliveryJob): Promise<void> {
    if (this.store) await this.guard(job, () => this.store!.updateDelivery(job.eventId, { state: 'paused' }));
  }

  /** The tenant of a job queued before jobs carried it: its delivery's. */
  async ownerOf(job: DeliveryJob): Promise<string | undefined> {
    if (job.owner !== undefined || !this.store) return job.owner;
    try {
      return (await this.store.getDelivery(job.eventId))?.owner;
    } catch {
      return undefined;
    }
  }

  async enable(url: string, options: { tenant?: string } = {}): Promise<EndpointEnabled> {
    this.required();
    if (options.tenant !== undefined && typeof options.tenant !== 'string') throw GatewayError.invalidRequest('tenant must be a string', 'tenant');
    return this.endpoints!.enable(url, options.tenant);
  }

  /** Runs one attempt (`send`) and records it: when, how long, the receiver's status or the error, the answer's first 1 KB. */
  async attempt<T extends { status: number; body: Buffer }>(job: DeliveryJob, send: () => Promise<T>): Promise<T> {
    if (!this.store) return send();
    const at = clock().now();
    const started = performance.now();
    try {
      const answer = await send();
      await this.record(job, { at, durationMs: elapsed(started), statusCode: answer.status, ...responseOf(answer.body) }, 'delivered');
      return answer;
    } catch (error) {
      const answer = answerOf(error);
      const attempt: DeliveryAttempt = answer
        ? { at, durationMs: elapsed(started), statusCode: answer.status, ...responseOf(answer.body) }
        : { at, durationMs: elapsed(started), error: withoutQuery(error instanceof Error ? error.message : String(error), job.url).slice(0, MAX_RESPONSE_BYTES) };
      await this.record(job, attempt);
      throw error;
    }
  }

  /** The job was dropped: the task had moved past its state. */
  async superseded(job: DeliveryJob): Promise<void> {
    if (this.store) await this.guard(job, () => this.store!.updateDelivery(job.eventId, { state: 'superseded' }));
  }

  /** The job ran out of attempts (or its URL is refused for good): a dead letter. */
  async failed(job: DeliveryJob): Promise<void> {
    if (this.store) await this.guard(job, () => this.store!.updateDelivery(job.eventId, { state: 'failed' }));
  }

  // the operator's side (DeliveriesApi), and the tenant's through `owner`

  async list(query: DeliveryListQuery = {}): Promise<DeliveryList> {
    const store = this.required();
    const limit = query.limit ?? DEFAULT_PAGE;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw GatewayError.invalidRequest(`limit must be a whole number from 1 to ${MAX_PAGE}`, 'limit');
    if (query.state !== undefined) checkState(query.state);
    const page = await store.listDeliveries({
      ...(query.tenant !== undefined ? { owner: query.tenant } : {}),
      ...(query.taskId !== undefined ? { taskId: query.taskId } : {}),
      ...(query.state !== undefined ? { state: query.state } : {}),
      ...timeRange(query),
      ...(query.cursor !== undefined ? { after: decodeCursor(query.cursor) } : {}),
      limit,
    });
    const last = page.deliveries.at(-1);
    return { data: page.deliveries.map(deliverySummary), hasMore: page.hasMore, nextCursor: page.hasMore && last ? encodeCursor(last) : null };
  }

  /** A page for `owner` after one of its own deliveries (`after`, an id): OpenAI's list shape. */
  async listOwn(owner: string, query: { taskId?: string; state?: DeliveryState; after?: string; limit: number }): Promise<{ data: DeliverySummary[]; hasMore: boolean }> {
    const store = this.required();
    let after: DeliveryQuery['after'];
    if (query.after !== undefined) {
      const record = await store.getDelivery(query.after);
      if (!record || record.owner !== owner) throw GatewayError.invalidRequest('after must be the id of one of your deliveries', 'after');
      after = { createdAt: record.createdAt, id: record.id };
    }
    const page = await store.listDeliveries({
      owner,
      ...(query.taskId !== undefined ? { taskId: query.taskId } : {}),
      ...(query.state !== undefined ? { state: query.state } : {}),
      ...(after ? { after } : {}),
      limit: query.limit,
    });
    return { data: page.deliveries.map(deliverySummary), hasMore: page.hasMore };
  }

  async get(id: string, owner?: string): Promise<DeliveryDetail | undefined> {
    const record = await this.own(id, owner);
    return record ? deliveryDetail(record) : undefined;
  }

  async replay(id: string, owner?: string): Promise<DeliveryDetail | undefined> {
    const record = await this.own(id, owner);
    if (!record) return undefined;
    return deliveryDetail(await this.requeue(record));
  }

  async replayAll(filter: DeliveryReplayFilter): Promise<{ queued: number }> {
    const store = this.required();
    checkState(filter?.state);
    // a pending delivery is queued already: replaying it again would only multiply what is sent
    if (filter.state === 'pending') throw GatewayError.invalidRequest('pending deliveries are queued already; replay those failed, delivered or superseded', 'state');
    let queued = 0;
    let after: DeliveryQuery['after'];
    for (;;) {
      const page = await store.listDeliveries({
        ...(filter.tenant !== undefined ? { owner: filter.tenant } : {}),
        state: filter.state,
        ...timeRange(filter),
        ...(after ? { after } : {}),
        limit: REPLAY_BATCH,
      });
      const requeued = await Promise.all(page.deliveries.map((record) => this.requeue(record)));
      queued += requeued.filter((record) => record.state === 'pending').length;
      const last = page.deliveries.at(-1);
      if (!page.hasMore || !last) return { queued };
      after = { createdAt: last.createdAt, id: last.id };
      // a bulk replay of thousands lets the requests and deliveries of everyone else through between its steps
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Marks the delivery pending and queues a replay job: the recorded body, the same webhook-id, sent
   * whatever the task's state. The mark is a claim from the state it was read in, so a delivery is
   * queued once however many replays ask for it at the same time, and one pending already (queued, or
   * being sent) is left as it is.
   */
  private async requeue(record: DeliveryRecord): Promise<DeliveryRecord> {
    if (record.state === 'pending') return record;
    const updated = await this.store!.updateDelivery(record.id, { state: 'pending', from: record.state });
    if (!updated) return (await this.store!.getDelivery(record.id)) ?? record;
    await this.scheduler.scheduleDelivery(recordedJob(record, 'replay'));
    return updated;
  }

  private async own(id: string, owner: string | undefined): Promise<DeliveryRecord | undefined> {
    const record = await this.required().getDelivery(id);
    // another tenant's delivery is one that does not exist
    return record && (owner === undefined || record.owner === owner) ? record : undefined;
  }

  private required(): DeliveryLogStore {
    if (this.store) return this.store;
    // as for a store without listTasks (openai-videos.ts): the operator's configuration, not the caller's fault
    throw new GatewayError({
      status: 500,
      code: ERROR_CODES.internalError,
      message: this.settings
        ? 'The delivery log needs a task store with the delivery methods; the configured store has none. Ask the operator.'
        : 'The delivery log is off (deliveries: false). Ask the operator.',
    });
  }

  private async record(job: DeliveryJob, attempt: DeliveryAttempt, state?: DeliveryState): Promise<void> {
    const full = job.replay !== undefined ? { ...attempt, replay: true } : attempt;
    await this.guard(job, () => this.store!.updateDelivery(job.eventId, { attempt: full, ...(state ? { state } : {}) }));
  }

  private async guard(job: DeliveryJob, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      this.logger.warn({ taskId: job.taskId, eventId: job.eventId, error: error instanceof Error ? error.message : String(error) }, 'the delivery log could not record a delivery');
    }
  }
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}

function responseOf(body: Buffer): { response?: string } {
  return body.length > 0 ? { response: body.subarray(0, MAX_RESPONSE_BYTES).toString('utf8') } : {};
}

function answerOf(error: unknown): { status: number; body: Buffer } | undefined {
  const answer = (error as { answer?: unknown } | null)?.answer as { status?: unknown; body?: unknown } | undefined;
  return answer && typeof answer.status === 'number' && Buffer.isBuffer(answer.body) ? { status: answer.status, body: answer.body } : undefined;
}

function checkState(state: unknown): asserts state is DeliveryState {
  if (typeof state !== 'string' || !DELIVERY_STATES.includes(state as DeliveryState)) {
    throw GatewayError.invalidRequest(`state must be one of ${DELIVERY_STATES.join(', ')}`, 'state');
  }
}

function timeRange(given: { since?: number | Date; until?: number | Date }): { since?: number; until?: number } {
  const ms = (value: number | Date | undefined, name: string): number | undefined => {
    if (value === undefined) return undefined;
    const time = value instanceof Date ? value.getTime() : value;
    if (typeof time !== 'number' || !Number.isFinite(time)) throw GatewayError.invalidRequest(`${name} must be a time`, name);
    return time;
  };
  const since = ms(given.since, 'since');
  const until = ms(given.until, 'until');
  return { ...(since !== undefined ? { since } : {}), ...(until !== undefined ? { until } : {}) };
}

// opaque to the reader: where the page ended, as base64url of its creation time and id
function encodeCursor(record: Pick<DeliveryRecord, 'createdAt' | 'id'>): string {
  return Buffer.from(JSON.stringify([record.createdAt, record.id])).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: number; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'number' && typeof id === 'string') return { createdAt, id };
  } catch {
    // fall through to the refusal
  }
  throw GatewayError.invalidRequest('cursor is not one a page of deliveries gave', 'cursor');
}
