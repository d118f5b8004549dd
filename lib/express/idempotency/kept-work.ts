// Paid work is not thrown away (docs/tenancy-and-billing.md "Retries"). Image work is paid when the
// upstream starts it, and every official SDK retries a timeout or a 5xx: a client that gives up and
// tries again would pay twice. So on the image routes:
// - while the work runs, the request is held (request-lifetime.ts): a client that leaves does not
//   cancel the upstream call, and its answer is kept for a short time, under the caller, the route and
//   the body's fingerprint;
// - a retry of the same request (same caller, route and body) finds it, for idempotency.keptAnswerSeconds: a kept answer is handed out
//   once (then it is gone), and work still running is joined (the retry waits for its answer, at most
//   the answer deadline its first try had: then it too is answered 504, and the work goes on for the next);
// - two requests whose clients stay connected are two requests: nothing is kept for an answer its
//   client received. A request with an Idempotency-Key is kept by its key instead (idempotency.ts).
// This is the HTTP side only: which requests are looked up, holding the request, seeing its client
// leave, writing the kept answer. What is kept, its books and its expiry are the gateway's
// (gateway/kept-work/kept-work-keeper.ts): the first request's usage event reports the vendor work and
// `keptImages`, not charged yet; the retry that receives the answer has an event that charges it; a
// kept answer nobody takes is settled by its expiry. A retry that leaves before the kept answer
// reached it puts it back, so the next retry still finds it.
import type { RequestHandler } from 'express';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ResolvedOptions } from '../../gateway/resolve-options.js';
import type { KeptWorkKeeper, WrittenAnswer } from '../../gateway/kept-work/kept-work-keeper.js';
import type { RouteName } from '../../types.js';
import { bearerKeyOf, callerOf } from '../authenticate.js';
import { bodyFingerprint } from '../body/body-fingerprint.js';
import { type RequestContext, withContext } from '../request-context.js';
import { sendBody } from '../answers/send-body.js';
import { preferenceOf } from '../prefer-header.js';
import { backgroundWrites } from './kept-answers.js';
import { type StreamFields, asksStream } from '../../images/image-stream-ask.js';

// the response header that marks an answer a retry received from its abandoned first try
const KEPT_HEADER = 'x-kept-answer';

/** The guard of a paid image route; a no-op when kept work is off (no keptAnswerSeconds, or a store that cannot peek and take). */
export function createKeptWork(route: RouteName, options: ResolvedOptions, keeper: KeptWorkKeeper): RequestHandler {
  const config = options.idempotency;
  if (!config || !keeper.enabled) return withContext('keptWorkOff', (_context, next) => next());
  return withContext('keptWork', (context, next) => {
    const { req } = context;
    // an Idempotency-Key request is kept by its key; a stream cannot be replayed
    // an image task (Prefer: respond-async) answers at once: there is no held answer to keep; a quote
    // (Prefer: dry-run) makes no work to keep, and never receives work kept for another request
    if (context.dryRun || req.headers['idempotency-key'] !== undefined || asksStream(req.body as StreamFields | undefined) || preferenceOf(req.headers).respondAsync) return next();
    const caller = callerOf(context);
    const key = keeper.keyOf(caller.id, route, bodyFingerprint(context));
    const run = (): void => {
      keep(context, keeper, key, route, options);
      next();
    };
    keeper.peek(key).then(
      (record) => {
        if (!record) return run();
        // an answer delivered before goes out again to a retry of the request only: anything else is new work
        if (record.state === 'done' && record.delivered && !isRetry(context)) return run();
        if (record.state === 'done') return void deliver(context, keeper, key, run, options);
        return void join(context, keeper, key, { waitMs: config.runningTtlMs, run, fail: next }, options);
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
async function deliver(context: RequestContext, keeper: KeptWorkKeeper, key: string, run: () => void, options: ResolvedOptions): Promise<void> {
  const record = await keeper.take(key);
  if (!record) return run();
  const write = backgroundWrites(options.logger, 'kept-work');
  const putBack = (): void => {
    // the answer did not reach this client: it goes back for the next retry, and is billed there
    context.keptDelivery = undefined;
    context.replayed = true;
    write(() => keeper.keep(key, record));
  };
  // the client may have left while the answer was taken: one turn of the event loop reads a close that
  // is already on the socket (store calls resolve without one), and then nothing is sent
  await new Promise((resolve) => setImmediate(resolve));
  if (clientGone(context)) return putBack();
  // an answer already billed to a retry goes out again, to a later retry of the same request only, unbilled
  const charged = keeper.chargedOnDelivery(record);
  if (charged) context.keptDelivery = charged;
  else context.replayed = true;
  context.lifetime.whenResponseCloses(() => {
    if (!context.res.writableFinished) return putBack();
    // written, but perhaps to a client that is gone: kept behind, for its own next retry
    write(() => keeper.delivered(key, record));
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

/** How a joining retry ends when the work gives it nothing: it runs, or it is answered an error. */
interface JoinEnds {
  /** The longest the retry waits when the work names no answer deadline. */
  waitMs: number;
  run: () => void;
  fail: (error: unknown) => void;
}

/**
 * Waits for the running work's answer (the keeper's `join`): delivers it when it comes; answers 504 as
 * the first try was answered when that deadline passes again (the work goes on, kept for the next
 * retry); runs when the work ends without an answer, or the wait runs out otherwise.
 */
async function join(context: RequestContext, keeper: KeptWorkKeeper, key: string, ends: JoinEnds, options: ResolvedOptions): Promise<void> {
  const joined = await keeper.join(key, ends.waitMs, () => context.res.destroyed);
  if (joined.found === 'gone') return;
  if (joined.found === 'answer') return deliver(context, keeper, key, ends.run, options);
  if (joined.found === 'deadline') {
    // the retry's own deadline passed while the work runs on: it is kept, so say to retry (error-middleware.ts)
    context.workKept = true;
    return ends.fail(joinedWorkTimeout(joined.answerMs));
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
 * answer is kept for the retry (the Idempotency-Key store's ttl, bounded in bytes).
 */
function keep(context: RequestContext, keeper: KeptWorkKeeper, key: string, route: RouteName, options: ResolvedOptions): void {
  const config = options.idempotency!;
  const hold = context.lifetime.hold();
  let abandoned = false;
  let settled = false;
  const write = backgroundWrites(options.logger, 'kept-work');
  context.lifetime.whenResponseCloses(() => {
    if (settled || context.res.writableFinished) return;
    // the client left while the work runs: a retry of the same request will find it here
    abandoned = true;
    write(() => keeper.running(key));
  });
  // the work runs at most its running time once abandoned: then the caller's slot is given back
  const safety = setTimeout(hold.freeSlot, config.runningTtlMs);
  safety.unref();
  let late = false;
  const settle = (answer: WrittenAnswer | undefined, fromLateWork = false, refusal = false): void => {
    // once the caller was answered for a missed deadline, only the late work's own outcome settles
    if (settled || (late && !fromLateWork)) return;
    settled = true;
    clearTimeout(safety);
    if (abandoned && answer && refusal) write(() => keeper.keepRefusal(key, answer));
    else if (abandoned && answer) {
      // kept for the retry: charged when delivered or when it expires, not on this request's event
      const kept = keeper.keptAnswer(key, answer, { caller: callerOf(context), bearerKey: bearerKeyOf(context.req), route, usage: context.usage, late });
      context.keptForRetry = true;
      write(() => keeper.keep(key, kept));
    } else if (abandoned) write(() => keeper.release(key));
    hold.release();
  };
  context.keepLate = (answer, answerMs) => {
    late = true;
    abandoned = true;
    context.workKept = true;
    // the deadline this request was answered at: a retry that joins the work waits no longer
    write(() => keeper.running(key, answerMs));
    answer.then(
      (kept) => settle(kept && kept.body.length <= config.maxAnswerBytes ? kept : undefined, true),
      () => settle(undefined, true),
    );
  };
  context.recorder = {
    maxBytes: config.maxAnswerBytes,
    record(status, contentType, body) {
      if (status < 200 || status >= 300 || body === undefined) return settle(undefined);
      // no kept status: the client that left did not receive it; its usage event says so (undeliveredImages)
      settle({ status, contentType, body });
    },
    fail: () => settle(undefined),
    keepRefusal: (status, contentType, body) => {
      // booked as the refusal its retry receives, as under an Idempotency-Key (idempotency.ts)
      if (context.res.destroyed) context.keptStatus = status;
      settle({ status, contentType, body }, false, true);
    },
  };
}
