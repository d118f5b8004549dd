// The TaskStore interface: what the gateway keeps about tasks and assets (docs/architecture.md): enough to
// find a task again (provider, baseURL, upstream id, model) and whose it is, never a key. Every record
// says its kind (`kind`), so whoever reads one knows how it runs without guessing from its id or fields.
// Updates are compare-and-set on `version`, so two gateway instances never both act on one status transition.
import type { Caller, ProviderName, ProvenanceReport } from '../../types.js';
import type { TaskTraceContext } from '../../telemetry/task-links.js';
import type { DeliveryLogStore } from './delivery-records.js';
import type { EndpointHealthStore } from './endpoint-records.js';

export interface TaskCallbackState {
  /** The caller's callback_url (checked at create time and again at every delivery). */
  url: string;
  /** The last status handed to delivery; a poll that sees another status delivers it. */
  notifiedStatus?: string;
  /** Polls made so far (the schedule's position). */
  polls: number;
  /** True once the task is terminal and its state was handed to delivery, or following timed out. */
  done: boolean;
}

/**
 * The kinds of task (docs/architecture.md "One task lifecycle, a kind per executor"): `image`, run by
 * this process or handed to a vendor's own task API; `video`, run by the vendor from its create on. A
 * record carries its kind.
 */
export type TaskKind = TaskRecord['kind'];

/** What every task record holds, whatever its kind. */
export interface TaskRecordBase {
  /** The gateway's own id: opaque and unguessable. The upstream id never reaches the caller. */
  id: string;
  /** `Caller.id` of the creator. Any other caller is told 404. */
  owner: string;
  /**
   * A JSON snapshot of the creator's Caller (as verifyKey returned it, minus any string holding the
   * bearer key), handed to resolveUpstream on background polls so a resolver that authorizes by
   * plan sees the same caller as the create request. Its `id` is always `owner`. Absent on records
   * written before snapshots existed (and for callers that could not be copied): polls then use `{ id: owner }`.
   */
  caller?: Caller;
  /** The model name the caller used. */
  model: string;
  /**
   * `model`: the upstream's own name for the model, when the resolver named one (the price a name the
   * pricing table lacks follows). `callsBack`: the vendor was asked to call the gateway's vendor webhook
   * route when the task ends (`vendorWebhooks`), so polls run at the slower fallback cadence.
   */
  upstream: { provider: ProviderName; baseURL: string; taskId: string; model?: string; callsBack?: boolean };
  /** ms since the epoch. */
  createdAt: number;
  /** The last status seen upstream (contract §3: the set is open). */
  status: string;
  /** The query body once the task is terminal: later queries need no upstream call. */
  result?: Record<string, unknown>;
  callback?: TaskCallbackState;
  /**
   * Durable results (`storage` option): the storage KEYS of the re-hosted video and last frame, by
   * the `content` field they replace, and the bytes stored. Never a URL: URLs are signed again on
   * every read. Recorded (compare-and-set) before the terminal state, so the results are stored once.
   */
  stored?: TaskStoredResults;
  /** The gateway's base URL seen at creation, for stores that sign URLs to the router itself (localResultStorage). */
  resultBase?: string;
  /**
   * True once the usage event of the task's terminal state was emitted: set in the same
   * compare-and-set that records (or first sees) the terminal state, so exactly one instance emits it.
   */
  usageReported?: boolean;
  /**
   * What the create or submit charged to the owner's quotas and budget, settled at the terminal state
   * (docs/tenancy-and-billing.md "The books"), in one shape for every kind of task. Absent when nothing
   * was charged.
   */
  charge?: TaskCharge;
  /** Starts at 1, +1 on every applied update. */
  version: number;
  /**
   * The create request's span context (docs/observability.md): polls link to it and callback
   * deliveries continue its trace. Absent when nothing was traced, and on older records.
   */
  trace?: TaskTraceContext;
}

/** An image task (docs/image-tasks.md): its run's state besides the common fields. */
export interface ImageTaskRecord extends TaskRecordBase {
  kind: 'image';
  image: ImageTaskState;
}

/** A video task (docs/video-tasks-and-callbacks.md), created at its vendor. */
export interface VideoTaskRecord extends TaskRecordBase {
  kind: 'video';
  /** What a video create in OpenAI's shape asked (docs/openai-videos.md): the `Video` object shows it. */
  asked?: VideoAsked;
}

/** A task record of any kind; `kind` tells them apart. */
export type TaskRecord = ImageTaskRecord | VideoTaskRecord;

/** The record of a task of kind `K`. */
export type TaskRecordOf<K extends TaskKind> = Extract<TaskRecord, { kind: K }>;

/** Whether `record` is a task of kind `kind` (false for no record). */
export function isTaskOfKind<K extends TaskKind>(record: TaskRecord | undefined, kind: K): record is TaskRecordOf<K> {
  return record?.kind === kind;
}

/** What a task's create or submit charged (docs/tenancy-and-billing.md "The books"). */
export interface TaskCharge {
  /** The images charged: the most an image task may produce. */
  images?: number;
  /** The video-seconds charged by a video task's create. */
  videoSeconds?: number;
  /** A video task holds one of the owner's concurrent-task slots. */
  slot?: boolean;
  /** The money reserved, in millionths of the pricing currency, when the owner has a budget. */
  budget?: number;
  /** When the quota windows the charge counted in end (ms since the epoch): nothing is given back after (quotas.ts `reward`). */
  windowEnds?: { images?: number; videoSeconds?: number; videoTasks?: number; budget?: number };
}

/** The fields of OpenAI's `Video` object that its create sets, as the caller sent them. */
export interface VideoAsked {
  prompt?: string;
  /** Whole seconds as a string, such as `'8'`. */
  seconds?: string;
  /** `WxH`, such as `'1280x720'`. */
  size?: string;
  /**
   * No `seconds` asked: the whole seconds the task was charged for (`quotas.defaultVideoSeconds`, or
   * the model's longest for `-1`), the Video object's `seconds` while the upstream reports no length.
   */
  chargedSeconds?: string;
}

/** A page of an owner's video tasks (`listTasks`): OpenAI's cursor list (docs/openai-videos.md). */
export interface TaskPage {
  /** The id of the last task of the previous page: the page starts after it. */
  after?: string;
  /** Most tasks on the page (1-100). */
  limit: number;
  /** `desc` (newest first) or `asc`. */
  order: 'asc' | 'desc';
}

/**
 * What an image task keeps besides the common fields (docs/image-tasks.md): never an image byte, only
 * what any instance needs to report it, end it, settle its charge and deliver its callback.
 */
export interface ImageTaskState {
  route: 'images.generations' | 'images.edits';
  /** The images charged at submit: the most the task may produce. */
  images: number;
  /** When the task started running (ms since the epoch); absent while it is queued. */
  startedAt?: number;
  /** When the run ended (ms since the epoch): an upstream's own result URLs age from here. */
  finishedAt?: number;
  /** The time (ms since the epoch) by which the task is terminal, or the watch ends it `failed` (task_interrupted). */
  deadline: number;
  /** The `quality` the request asked for, for its price. */
  quality?: string;
  /** The size asked (`WxH`): the price of images whose size the upstream did not say, and of those not delivered. */
  size?: string;
  /** True when the results were stored durably (`storage`): their URLs outlive the upstream's. */
  durable?: boolean;
  /** True once the work runs on the upstream's own task (`upstream.taskId`): any instance follows it. */
  onUpstream?: boolean;
  /**
   * The end of the lease (ms since the epoch) of the instance that queued or runs the task, renewed
   * while it holds it: past it, that instance stopped, and the watch ends the task (`task_interrupted`).
   * Absent on records written before leases, and once the task runs on the upstream's own task.
   */
  leaseUntil?: number;
}

export interface TaskStoredResults {
  /** e.g. `{ video_url: '<tenant>/<name>.mp4', last_frame_url: '<tenant>/<name>.png' }` */
  keys: Record<string, string>;
  bytes: number;
  /** With the `provenance` option: the stored video's Content Credentials, read once when it was stored. */
  provenance?: ProvenanceReport;
}

/** What an update may change: the common fields, and the state of its own kind (a record never changes kind). */
export type TaskChanges = Partial<Pick<TaskRecordBase, 'status' | 'result' | 'callback' | 'stored' | 'usageReported' | 'upstream'>> & { image?: ImageTaskState };

export interface AssetRecord {
  /** The upstream asset id (`Result.Id`), as used in `asset://<id>`. */
  id: string;
  owner: string;
  createdAt: number;
}

/**
 * Records are plain JSON (strings, numbers, booleans, null, arrays, objects): a store may serialize
 * them. An `undefined` field in `changes` leaves that field absent. The delivery log's methods
 * (delivery-records.ts: `createDelivery`, `getDelivery`, `updateDelivery`, `listDeliveries`) are
 * optional, all or none: a store without them runs the gateway with the log off. So are the endpoint
 * methods (endpoint-records.ts: `recordEndpointAttempt`, `getEndpoint`, `enableEndpoint`,
 * `listDisabledEndpoints`): without them no endpoint is ever disabled. Both shipped stores have them all.
 */
export interface TaskStore extends Partial<DeliveryLogStore>, Partial<EndpointHealthStore> {
  /** Stores a new task (version 1). Rejects if the id exists. */
  createTask(record: TaskRecord): Promise<void>;
  getTask(id: string): Promise<TaskRecord | undefined>;
  /**
   * Applies `changes` only when the stored version is `expectedVersion`, then bumps the version.
   * Returns the updated record, or undefined when another writer got there first (or no such task).
   */
  updateTask(id: string, expectedVersion: number, changes: TaskChanges): Promise<TaskRecord | undefined>;
  /**
   * Records an asset for `record.owner`. An id already recorded for another owner is left as it is
   * (ownership never moves; check-and-set atomically across instances); the same owner's record is
   * replaced. Callers read the record back with getAsset to learn whose it is.
   */
  putAsset(record: AssetRecord): Promise<void>;
  getAsset(id: string): Promise<AssetRecord | undefined>;
  /**
   * Optional: rejects with an AssetCapacityError when putAsset would refuse a new asset of `owner`
   * now. CreateAsset asks it before calling the upstream, so a full store costs no upstream asset
   * that nobody could use. A store without caps leaves it out; a store with caps should offer it.
   */
  checkAssetCapacity?(owner: string): Promise<void>;
  /**
   * Optional: one page of `owner`'s video tasks (`kind: 'video'`, never image tasks) in creation order, plus whether
   * more follow. An `after` id that is not among them gives an empty page. Without it, `GET /v1/videos`
   * answers 500 (a configuration error). Both shipped stores have it.
   */
  listTasks?(owner: string, page: TaskPage): Promise<{ tasks: TaskRecord[]; hasMore: boolean }>;
  /** Optional: forgets a task (and its place in its owner's list). Without it, `DELETE /v1/videos/{id}` answers 500 (a configuration error). */
  deleteTask?(id: string): Promise<void>;
}

/**
 * Thrown (rejected) by putAsset or checkAssetCapacity when a store with caps cannot record one more
 * asset. An asset record is ownership, not a cache: a store never forgets one to make room, because
 * an unrecorded id would pass as the operator's under allow.operatorAssets. `scope` says which cap:
 * `'owner'` (this caller has recorded `limit` assets) or `'store'` (the store holds `limit` in total).
 */
export class AssetCapacityError extends Error {
  readonly scope: 'owner' | 'store';
  readonly limit: number;

  constructor(scope: 'owner' | 'store', limit: number) {
    super(scope === 'owner' ? `the owner has recorded the most assets allowed: ${limit}` : `the store holds the most assets allowed: ${limit}`);
    this.name = 'AssetCapacityError';
    this.scope = scope;
    this.limit = limit;
  }
}
