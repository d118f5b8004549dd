// What the vendors may bill the operator for a request (docs/tenancy-and-billing.md "The books"): each
// upstream call that may start paid work is an attempt, recorded when it is made, and given its outcome
// once it is known. `made`: the vendor answered with its work (the images it returned, before the
// gateway's cap); `unknown`: the vendor may have made it (a 5xx, a timeout or a reset after the request
// was written, an unreadable answer, a client or an instance that went away mid-call), so the most it
// could have made counts; `refused`: the vendor answered before doing anything (a 4xx, a 429, a 503, a
// connection never made), so nothing counts. Every attempt whose request was written is listed, whatever
// its outcome, under the id the vendor answered it with when it sent one (a request id in a header or
// the body, a task id): a failure carries it as an answer does, so each line of a vendor's bill finds its
// attempt.
import { GatewayError } from '../../errors/gateway-error.js';
import type { ProviderName, VendorAttempt, VendorOutcome } from '../../types.js';

export type { VendorAttempt, VendorOutcome, VendorWork } from '../../types.js';
export { outcomeOfFailure } from '../../errors/vendor-outcome.js';

/**
 * An attempt while it runs: its outcome is settled when the call ends, or read from the request's end
 * (reckoning.ts) when nobody settled it. A call that fans out (n concurrent vendor calls for n images)
 * records each of its calls in `calls` instead.
 */
export interface AttemptRecord {
  provider: ProviderName;
  id?: string;
  images?: number;
  seconds?: number;
  outcome?: VendorOutcome;
  calls?: VendorAttempt[];
}

/** Starts an attempt in `attempts` (made when a call that may start paid work is sent). */
export function startAttempt(attempts: AttemptRecord[], provider: ProviderName): AttemptRecord {
  const record: AttemptRecord = { provider };
  attempts.push(record);
  return record;
}

/**
 * How the attempts of one unit of work are booked by the runner of its upstream calls (the fallback rule,
 * routing/fallback.ts): where the calls record them, and the vendor's id in an answer.
 */
export interface AttemptBooks<T> {
  /** The work's usage: each call records its attempt there (use-case.ts `attempting`). */
  usage: { attempts?: AttemptRecord[] };
  /** The id the vendor answered a successful call with (its request id, task id or response id). */
  idOf?: (answer: T) => string | undefined;
}

/** Where the next attempt of `books` will be recorded: the call about to be made records it at this index. */
export function nextAttemptAt<T>(books: AttemptBooks<T>): number {
  return books.usage.attempts?.length ?? 0;
}

/**
 * The call recorded at `at` ended: its attempt keeps the id the vendor answered, read from the answer,
 * or from the failure (a 5xx, a refusal, an unreadable answer: the vendor named its request all the
 * same). An id recorded before (a task id taken at the submit) stays; a call that recorded no attempt
 * (refused by the gateway before any request) books nothing.
 */
export function attemptEnded<T>(books: AttemptBooks<T>, at: number, ended: { answer: T } | { error: unknown }): void {
  const record = books.usage.attempts?.[at];
  if (record) answeredWith(record, 'answer' in ended ? books.idOf?.(ended.answer) : idOfFailure(ended.error));
}

/** Keeps on an attempt the id the vendor answered its call with; an id recorded before (a task id taken at the submit) stays. */
export function answeredWith(record: AttemptRecord, id: string | undefined): void {
  if (id && record.id === undefined) record.id = id;
}

/** The id a failed call's vendor answered it with, when it sent one. */
export function idOfFailure(error: unknown): string | undefined {
  return GatewayError.is(error) ? error.upstreamRequestId || undefined : undefined;
}
