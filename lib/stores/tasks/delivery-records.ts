// The delivery log's records (docs/video-tasks-and-callbacks.md "Delivery log"): one record per
// delivery (one state of one task to one URL, under its webhook-id) with every attempt, and the
// optional TaskStore methods that keep them. A store without them runs the gateway with the log off.
// The full callback URL is kept here, for replays; what a tenant or operator reads leaves its query
// string out (gateway/deliveries/delivery-view.ts).

/**
 * `pending` (queued or being retried), `delivered` (a 2xx), `failed` (out of attempts: a dead letter),
 * `paused` (its endpoint is disabled), `superseded` (dropped because the task had moved past that state).
 */
export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'paused' | 'superseded';

/** One POST of a delivery to its URL. */
export interface DeliveryAttempt {
  /** When the attempt started, ms since the epoch. */
  at: number;
  /** The receiver's HTTP status; absent when no answer came (see `error`). */
  statusCode?: number;
  /** Why no answer came (connection refused, timeout, a refused host); absent when one came. */
  error?: string;
  durationMs: number;
  /** At most 1 KB of the answer's body, as text. */
  response?: string;
  /** True for an attempt a replay made. */
  replay?: boolean;
}

export interface DeliveryRecord {
  /** The delivery's `webhook-id`: the same on every attempt and replay. */
  id: string;
  taskId: string;
  /** `Caller.id` of the task's owner. */
  owner: string;
  /** The task state delivered (`running`, `succeeded`, …). */
  event: string;
  /** The whole callback URL, query included: replays send to it. Never shown. */
  url: string;
  /** The JSON body sent, byte for byte. */
  body: string;
  state: DeliveryState;
  /** ms since the epoch. */
  createdAt: number;
  /** When the store may forget the record, ms since the epoch (`deliveries.retentionDays`). */
  expiresAt: number;
  /** Oldest first. */
  attempts: DeliveryAttempt[];
}

/** A change to a delivery: its new state, one more attempt, or both, applied together. */
export interface DeliveryUpdate {
  state?: DeliveryState;
  attempt?: DeliveryAttempt;
  /**
   * Applied only while the delivery is in this state: a claim (one of two instances resuming the same
   * paused delivery wins). Nothing changes, and undefined is answered, when it is in another.
   */
  from?: DeliveryState;
}

/** Which deliveries a page holds, newest first. */
export interface DeliveryQuery {
  owner?: string;
  taskId?: string;
  state?: DeliveryState;
  /** Created at or after, ms since the epoch. */
  since?: number;
  /** Created before, ms since the epoch. */
  until?: number;
  /** The page starts after this delivery (newest-first order): its creation time and id. */
  after?: { createdAt: number; id: string };
  /** Most deliveries on the page. */
  limit: number;
}

/** What the memory store keeps at most (`deliveries.maxEntries`); other stores may ignore it. */
export interface DeliveryRoom {
  maxEntries: number;
}

/**
 * The optional delivery methods of a TaskStore: all four, or none (the log is then off, with one
 * warning when the router is created). Records round-trip exactly, as task records do.
 */
export interface DeliveryLogStore {
  /** Records a new delivery; false (and nothing changed) when its id is already recorded. */
  createDelivery(record: DeliveryRecord, room: DeliveryRoom): Promise<boolean>;
  getDelivery(id: string): Promise<DeliveryRecord | undefined>;
  /** Applies `update` atomically (an attempt is appended, never lost to a concurrent one); undefined for an unknown id, or one not in `update.from`. */
  updateDelivery(id: string, update: DeliveryUpdate): Promise<DeliveryRecord | undefined>;
  /** One page of deliveries, newest first (creation time, then id), and whether more follow. */
  listDeliveries(query: DeliveryQuery): Promise<{ deliveries: DeliveryRecord[]; hasMore: boolean }>;
}

/** Newest first: later creation first, then the greater id (a total order, so cursors never skip or repeat). */
export function newerFirst(a: Pick<DeliveryRecord, 'createdAt' | 'id'>, b: Pick<DeliveryRecord, 'createdAt' | 'id'>): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
