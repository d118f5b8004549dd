// What the operator and a tenant read of a delivery (docs/video-tasks-and-callbacks.md "Delivery log"):
// the callback URL's origin and path only (its query may carry the receiver's own token, so it is
// never shown), the body sent, and each attempt with at most 1 KB of the receiver's answer. Nothing
// of the signing secret is ever recorded, so nothing of it can be shown.
import type { DeliveryAttempt, DeliveryRecord, DeliveryState } from '../../stores/tasks/delivery-records.js';

/** One attempt as shown. */
export interface DeliveryAttemptView {
  /** When it started, Unix seconds. */
  attempted_at: number;
  /** The receiver's HTTP status; null when no answer came. */
  status_code: number | null;
  /** Why no answer came; null when one came. */
  error: string | null;
  duration_ms: number;
  /** At most 1 KB of the answer's body, as text; null when there was none. */
  response: string | null;
  /** True for an attempt a replay made. */
  replay: boolean;
}

/** A delivery as a list shows it. */
export interface DeliverySummary {
  object: 'delivery';
  /** Its `webhook-id`. */
  id: string;
  task_id: string;
  /** The tenant (`Caller.id`) whose task it is. */
  tenant: string;
  /** The task state delivered. */
  event: string;
  /** The callback URL's origin and path, its query left out. */
  url: string;
  state: DeliveryState;
  /** Unix seconds. */
  created_at: number;
  attempt_count: number;
  last_attempt: DeliveryAttemptView | null;
}

/** A delivery with the body sent and every attempt, oldest first. */
export interface DeliveryDetail extends DeliverySummary {
  /** The JSON body sent (what a query of the task answered at that state). */
  body: unknown;
  attempts: DeliveryAttemptView[];
}

/** The most of a receiver's answer the log keeps, in bytes. */
export const MAX_RESPONSE_BYTES = 1024;

/** The URL as shown: origin and path, no query, no fragment, no credentials. */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '';
  }
}

/** `text` with the URL's query taken out, wherever it appears (an error message may quote the URL). */
export function withoutQuery(text: string, url: string): string {
  const query = URL.canParse(url) ? new URL(url).search : '';
  return query.length > 1 ? text.split(query).join('') : text;
}

function attemptView(attempt: DeliveryAttempt): DeliveryAttemptView {
  return {
    attempted_at: Math.floor(attempt.at / 1000),
    status_code: attempt.statusCode ?? null,
    error: attempt.error ?? null,
    duration_ms: attempt.durationMs,
    response: attempt.response ?? null,
    replay: attempt.replay === true,
  };
}

export function deliverySummary(record: DeliveryRecord): DeliverySummary {
  const last = record.attempts.at(-1);
  return {
    object: 'delivery',
    id: record.id,
    task_id: record.taskId,
    tenant: record.owner,
    event: record.event,
    url: shownUrl(record.url),
    state: record.state,
    created_at: Math.floor(record.createdAt / 1000),
    attempt_count: record.attempts.length,
    last_attempt: last ? attemptView(last) : null,
  };
}

export function deliveryDetail(record: DeliveryRecord): DeliveryDetail {
  return { ...deliverySummary(record), body: parsedBody(record.body), attempts: record.attempts.map(attemptView) };
}

function parsedBody(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}
