// Paid work is not thrown away (docs/tenancy-and-billing.md "Retries"). Image work is paid when the
// upstream starts it, and every official SDK retries a timeout or a 5xx: a client that gives up and
// tries again would pay twice. So on the image routes:
// - while the work runs, the request is held (request-lifetime.ts): a client that leaves does not
//   cancel the upstream call, and its answer is kept in the Idempotency-Key store for a short time,
//   under the caller, the route and the body's fingerprint;
// - a retry of the same request (same caller, route and body) finds it, for idempotency.keptAnswerSeconds: a kept answer is handed out
//   once (then it is gone), and work still running is joined (the retry waits for its answer, at most
//   the answer deadline its first try had: then it too is answered 504, and the work goes on for the next);
// - two requests whose clients stay connected are two requests: nothing is kept for an answer its
//   client received. A request with an Idempotency-Key is kept by its key instead (idempotency.ts).
// The books (docs/tenancy-and-billing.md "The books"): the first request's usage event reports the
// vendor work and `keptImages`, not charged yet; the retry that receives the answer has an event that
// charges it (`images`, `kept`); a kept answer nobody takes is settled by its expiry, on whichever
// instance the scheduler runs it (gateway/kept-work-expiry.ts). A retry that leaves before the kept
// answer reached it puts it back, so the next retry still finds it.
import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ResolvedOptions } from '../../gateway/resolve-options.js';
import type { IdempotencyRecord, IdempotencyStore } from '../../stores/idempotency/idempotency-store.js';
import type { RouteName } from '../../types.js';
import { callerOf } from '../authenticate.js';
import { bodyFingerprint } from '../body/body-fingerprint.js';
import { type RequestContext, withContext } from '../request-context.js';
import { sendBody } from '../answers/send-body.js';
import { preferenceOf } from '../prefer-header.js';
import { backgroundWrites, doneRecord } from './kept-answers.js';
import { type StreamFields, asksStream } from '../../images/image-stream-ask.js';
import type { KeptWorkRecord } from '../../stores/idempotency/idempotency-store.js';
import { keptWorkJobId } from '../../gateway/kept-work/kept-work-expiry.js';
import { snapshotCaller } from '../../gateway/tasks/caller-snapshot.js';
import { bearerKeyOf } from '../authenticate.js';

/** The work kept for the retry: for whom, on which route, and its books (ledger/request-books.ts). */
function keptRecordOf(context: RequestContext, lostBy: KeptWorkRecord['lostBy'], options: ResolvedOptions): KeptWorkRecord {
  return {
    caller: snapshotCaller(callerOf(context), bearerKeyOf(context.req) ?? '').caller,
    route: context.route!,
    ...options.books.keptWork(context.usage, lostBy),
  };
}

// the response header that marks an answer a retry received from its abandoned first try
const KEPT_HEADER = 'x-kept-answer';
// how often a retry that joined running work looks for its answer
const JOIN_POLL_MS = 250;

type KeepingStore = IdempotencyStore & Required<Pick<IdempotencyStore, 'peek' | 'take'>>;

/** The guard of a paid image route; a no-op without an Idempotency-Key store that can peek and take. */
export function createKeptWork(route: RouteName, options: ResolvedOptions): RequestHandler {
  const config = options.idempotency;
  const store = config?.store;
  if (!config?.keptAnswerMs || !store?.peek || !store.take) return withContext('keptWorkOff', (_context, next) => next());
  const keeping = store as KeepingStore;
  return withContext('keptWork', (context, next) => {
    const { req } = context;
    // an Idempotency-Key request is kept by its key; a stream cannot be replayed
    // an image task (Prefer: respond-async) answers at once: there is no held answer to keep; a quote
    // (Prefer: dry-run) makes no work to keep, and never receives work kept for another request
    if (context.dryRun || req.headers['idempotency-key'] !== undefined || asksStream(req.body as StreamFields | undefined) || preferenceOf(req.headers).respondAsync) return next();
    const caller = callerOf(context);
    const key = createHash('sha256')
      .update(`kept\0${caller.id}\0${route}\0${bodyFingerprint(context)}`)
      .digest('base64url');
    const run = (): void => {
      keep(context, keeping, key, options);
      next();
    };
    keeping.peek(key).then(
      (record) => {
        if (!record) return run();
        // an answer delivered before goes out again to a retry of the request only: anything else is new work
        if (record.state === 'done' && record.delivered && !isRetry(context)) return run();
        if (record.state === 'done') return void deliver(context, keeping, key, run, options);
        return void join(context, keeping, key, { waitMs: config.runningTtlMs, run, fail: next }, options);
      },
      (error: unknown) => {
        // the store is down: the request runs as if nothing were kept
        options.logger.warn({ caller: caller.id, route, error: error instanceof Error ? error.message : String(error) }, 'kept-work store unreachable; running the request');
        next();
      },
    );
  });
}

/**
 * Hands out a kept answer (once: `take` removes it); when another retry took it first, runs. The
 * request's usage event charges what it delivers. A client that leaves before the answer reached it
 * puts it back; one that vanished unseen (its close unread while the answer was written) is covered by
 * the delivered record kept behind: its client's next retry receives it again, billed once.
 */
async function deliver(context: RequestContext, store: KeepingStore, key: string, run: () => void, options: ResolvedOptions): Promise<void> {
  let taken: IdempotencyRecord | undefined;
  try {
    taken = await store.take(key);
  } catch {
    taken = undefined;
  }
  if (taken?.state !== 'done') return run();
  const record = taken;
  const config = options.idempotency!;
  const write = backgroundWrites(options.logger, 'kept-work');
  const putBack = (): void => {
    // the answer did not reach this client: it goes back for the next retry, and is billed there
    context.keptDelivery = undefined;
    context.replayed = true;
    write(() => store.finish(key, record, keptRecordMs(config.keptAnswerMs!)).then(() => scheduleExpiry(options, key, config.keptAnswerMs!)));
  };
  // the client may have left while the answer was taken: one turn of the event loop reads a close that
  // is already on the socket (store calls resolve without one), and then nothing is sent
  await new Promise((resolve) => setImmediate(resolve));
  if (clientGone(context)) return putBack();
  // an answer already billed to a retry goes out again, to a later retry of the same request only, unbilled
  if (record.kept && !record.delivered) context.keptDelivery = record.kept;
  else context.replayed = true;
  context.lifetime.whenResponseCloses(() => {
    if (!context.res.writableFinished) return putBack();
    // written, but perhaps to a client that is gone: kept behind, for its own next retry
    // (a kept refusal, without books, too: it is never delivered before its first retry)
    if (record.kept || !record.delivered) write(() => store.finish(key, { ...record, delivered: true }, config.keptAnswerMs!));
  });
  context.res.setHeader(KEPT_HEADER, 'true');
  sendBody(context, record.answer.status, record.answer.contentType, Buffer.from(record.answer.body, 'base64'));
}

/**
 * A client's retry of a request it did not receive the answer of: the official SDKs count their own
 * retries in `x-stainless-retry-count` (1 and up). A delivered answer goes out again to such a retry only.
 */
function isRetry(context: RequestContext): boolean {
  const count = context.req.headers['x-stainless-retry-count'];
  return typeof count === 'string' && /^[1-9]\d{0,2}$/.test(count);
}

/** The client is gone, or has closed its side (it reads no answer). */
function clientGone(context: RequestContext): boolean {
  const socket = context.req.socket as { destroyed?: boolean; readableEnded?: boolean } | undefined;
  return context.res.destroyed || socket?.destroyed === true || socket?.readableEnded === true;
}

// a kept record outlives its answer time by this much: its expiry job, not the store's ttl, settles it
const EXPIRY_GRACE_MS = 60_000;

function keptRecordMs(keptAnswerMs: number): number {
  return keptAnswerMs + EXPIRY_GRACE_MS;
}

/** The expiry of a kept answer, on the scheduler (any instance runs it): gateway/kept-work-expiry.ts. */
function scheduleExpiry(options: ResolvedOptions, key: string, delayMs: number): Promise<void> {
  const id = keptWorkJobId(key);
  return options.scheduler.schedulePoll(id, delayMs, `${id}:expiry:${Date.now()}`);
}

/** How a joining retry ends when the work gives it nothing: it runs, or it is answered an error. */
interface JoinEnds {
  /** The longest the retry waits when the work names no answer deadline. */
  waitMs: number;
  run: () => void;
  fail: (error: unknown) => void;
}

/**
 * Waits for the running work's answer. Work that missed its first try's answer deadline names it
 * (`answerMs`): the retry waits at most that long from its own arrival, then is answered 504 as its
 * first try was, saying to retry (the work goes on, kept for the next retry). When the work ends
 * without an answer, or the wait runs out otherwise, the retry runs.
 */
async function join(context: RequestContext, store: KeepingStore, key: string, ends: JoinEnds, options: ResolvedOptions): Promise<void> {
  const joinedAt = Date.now();
  let until = joinedAt + ends.waitMs;
  let deadline: number | undefined;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(JOIN_POLL_MS, until - Date.now()))).unref());
    if (context.res.destroyed) return;
    let record: IdempotencyRecord | undefined;
    try {
      record = await store.peek(key);
    } catch {
      record = undefined;
    }
    if (record?.state === 'done') return deliver(context, store, key, ends.run, options);
    if (record?.state !== 'running') break;
    if (record.answerMs !== undefined && deadline === undefined) {
      deadline = record.answerMs;
      until = Math.min(until, joinedAt + deadline);
    }
  }
  if (deadline !== undefined && Date.now() >= until) {
    // the retry's own deadline passed while the work runs on: it is kept, so say to retry (error-middleware.ts)
    context.workKept = true;
    return ends.fail(joinedWorkTimeout(deadline));
  }
  ends.run();
}

/** The 504 of a retry whose wait for joined work reached its answer deadline: it started nothing itself. */
function joinedWorkTimeout(answerMs: number): GatewayError {
  return new GatewayError({
    status: 504,
    code: ERROR_CODES.upstreamTimeout,
    message: `The upstream did not answer within ${answerMs} ms. The work goes on: retry the same request to receive its answer.`,
    retryable: true,
    notStarted: true,
  });
}

/**
 * Holds the request while its work runs; when its client leaves first, the work goes on and its
 * answer is kept under `key` for the retry (the Idempotency-Key store's ttl, bounded in bytes).
 */
function keep(context: RequestContext, store: KeepingStore, key: string, options: ResolvedOptions): void {
  const config = options.idempotency!;
  const hold = context.lifetime.hold();
  const fingerprint = key;
  let abandoned = false;
  let settled = false;
  const write = backgroundWrites(options.logger, 'kept-work');
  context.lifetime.whenResponseCloses(() => {
    if (settled || context.res.writableFinished) return;
    // the client left while the work runs: a retry of the same request will find it here
    abandoned = true;
    write(() => store.finish(key, { state: 'running', fingerprint }, config.runningTtlMs));
  });
  // the work runs at most its running time once abandoned: then the caller's slot is given back
  const safety = setTimeout(hold.freeSlot, config.runningTtlMs);
  safety.unref();
  let late = false;
  const settle = (record: IdempotencyRecord | undefined, fromLateWork = false, refusal = false): void => {
    // once the caller was answered for a missed deadline, only the late work's own outcome settles
    if (settled || (late && !fromLateWork)) return;
    settled = true;
    clearTimeout(safety);
    if (abandoned && record?.state === 'done' && refusal) {
      // an output refusal (made, paid, flagged) is booked on this request's own event: kept without
      // books, so the retry gets it replayed and unbilled, and neither makes nor checks the images again
      // (docs/content-safety.md "What a flagged image costs")
      write(() => store.finish(key, record, keptRecordMs(config.keptAnswerMs!)));
    } else if (abandoned && record?.state === 'done') {
      // kept for the retry: charged when delivered or when it expires, not on this request's event
      const kept: IdempotencyRecord = { ...record, kept: keptRecordOf(context, late ? 'upstream' : 'client_left', options) };
      context.keptForRetry = true;
      write(() => store.finish(key, kept, keptRecordMs(config.keptAnswerMs!)).then(() => scheduleExpiry(options, key, config.keptAnswerMs!)));
    } else if (abandoned) write(() => store.release(key));
    hold.release();
  };
  context.keepLate = (answer, answerMs) => {
    late = true;
    abandoned = true;
    context.workKept = true;
    // the deadline this request was answered at: a retry that joins the work waits no longer
    write(() => store.finish(key, { state: 'running', fingerprint, ...(answerMs !== undefined ? { answerMs } : {}) }, config.runningTtlMs));
    answer.then(
      (kept) => {
        settle(kept && kept.body.length <= config.maxAnswerBytes ? doneRecord(fingerprint, kept.status, kept.contentType, kept.body) : undefined, true);
      },
      () => settle(undefined, true),
    );
  };
  context.recorder = {
    maxBytes: config.maxAnswerBytes,
    record(status, contentType, body) {
      if (status < 200 || status >= 300 || body === undefined) return settle(undefined);
      // no kept status: the client that left did not receive it; its usage event says so (undeliveredImages)
      settle(doneRecord(fingerprint, status, contentType, body));
    },
    fail: () => settle(undefined),
    keepRefusal: (status, contentType, body) => {
      // booked as the refusal its retry receives, as under an Idempotency-Key (idempotency.ts)
      if (context.res.destroyed) context.keptStatus = status;
      settle(doneRecord(fingerprint, status, contentType, body), false, true);
    },
  };
}
