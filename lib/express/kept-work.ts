// Paid work is not thrown away (docs/tenancy-and-billing.md "Retries"). Image work is paid when the
// upstream starts it, and every official SDK retries a timeout or a 5xx: a client that gives up and
// tries again would pay twice. So on the image routes:
// - while the work runs, the request is held (request-lifetime.ts): a client that leaves does not
//   cancel the upstream call, and its answer is kept in the Idempotency-Key store for a short time,
//   under the caller, the route and the body's fingerprint;
// - a retry of the same request (same caller, route and body) finds it, for idempotency.keptAnswerSeconds: a kept answer is handed out
//   once (then it is gone), and work still running is joined (the retry waits for its answer);
// - two requests whose clients stay connected are two requests: nothing is kept for an answer its
//   client received. A request with an Idempotency-Key is kept by its key instead (idempotency.ts).
// The first request's usage event bills the work once, as made and not delivered (its client left, or
// it was answered 504): `undeliveredImages`. The retry that receives it has no event of its own.
import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { ResolvedOptions } from '../gateway/options.js';
import type { IdempotencyRecord, IdempotencyStore } from '../stores/idempotency/idempotency-store.js';
import type { RouteName } from '../types.js';
import { callerOf } from './authenticate.js';
import { bodyFingerprint } from './body/body-fingerprint.js';
import { type RequestContext, withContext } from './request-context.js';
import { sendBody } from './send-body.js';
import { preferenceOf } from './prefer-header.js';
import { backgroundWrites, doneRecord } from './kept-answers.js';
import { type StreamFields, asksStream } from '../images/image-stream-ask.js';

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
        if (record.state === 'done') return void deliver(context, keeping, key, run);
        return void join(context, keeping, key, config.runningTtlMs, run);
      },
      (error: unknown) => {
        // the store is down: the request runs as if nothing were kept
        options.logger.warn({ caller: caller.id, route, error: error instanceof Error ? error.message : String(error) }, 'kept-work store unreachable; running the request');
        next();
      },
    );
  });
}

/** Hands out a kept answer (once: `take` removes it); when another retry took it first, runs. */
async function deliver(context: RequestContext, store: KeepingStore, key: string, run: () => void): Promise<void> {
  let taken: IdempotencyRecord | undefined;
  try {
    taken = await store.take(key);
  } catch {
    taken = undefined;
  }
  if (taken?.state !== 'done') return run();
  const { status, contentType, body } = taken.answer;
  // nothing new happened upstream: no usage event for this request (the first one billed the work)
  context.replayed = true;
  context.res.setHeader(KEPT_HEADER, 'true');
  sendBody(context, status, contentType, Buffer.from(body, 'base64'));
}

/** Waits for the running work's answer; when the work ends without one, or the wait runs out, runs. */
async function join(context: RequestContext, store: KeepingStore, key: string, waitMs: number, run: () => void): Promise<void> {
  const until = Date.now() + waitMs;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, JOIN_POLL_MS).unref());
    if (context.res.destroyed) return;
    let record: IdempotencyRecord | undefined;
    try {
      record = await store.peek(key);
    } catch {
      record = undefined;
    }
    if (record?.state === 'done') return deliver(context, store, key, run);
    if (record?.state !== 'running') break;
  }
  run();
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
  const settle = (record: IdempotencyRecord | undefined, fromLateWork = false): void => {
    // once the caller was answered for a missed deadline, only the late work's own outcome settles
    if (settled || (late && !fromLateWork)) return;
    settled = true;
    clearTimeout(safety);
    if (abandoned) write(() => (record ? store.finish(key, record, config.keptAnswerMs!) : store.release(key)));
    hold.release();
  };
  context.keepLate = (answer) => {
    late = true;
    abandoned = true;
    context.workKept = true;
    write(() => store.finish(key, { state: 'running', fingerprint }, config.runningTtlMs));
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
  };
}
