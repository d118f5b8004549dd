// Idempotency-Key on the paid creates (IETF draft "The Idempotency-Key HTTP Header Field"; docs/tenancy-and-billing.md). Runs after authentication and the body parser, before the route: the key is
// scoped to the caller and the route, taken atomically in the store with the body's fingerprint.
// - first request: runs; a 2xx answer is kept (status, Content-Type, bytes) for idempotency.ttlSeconds;
//   any error answer frees the key, so a retry runs again (a 4xx costs nothing, a 5xx may be transient)
// - same key, same body, answer kept: replayed byte for byte with `Idempotent-Replayed: true`, the
//   upstream not called, no usage event (nothing new was billed)
// - same key, same body, still running: 409 `idempotency_key_in_use` with Retry-After (the OpenAI
//   SDKs retry a 409 by themselves, so a client retrying too early simply waits)
// - same key, another body: 422 `idempotency_key_reused` (the draft's answer)
// - a streamed answer (`stream: true`) cannot be replayed: the key is refused with 400
// - a quote (`Prefer: dry-run`) checks the key as the real request would and takes nothing: the key
//   stays free for the request it quotes (docs/tenancy-and-billing.md "Quotes before work")
import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ERROR_CODES } from '../errors/error-codes.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ResolvedOptions } from '../gateway/options.js';
import type { IdempotencyRecord, StoredAnswer } from '../stores/idempotency/idempotency-store.js';
import type { RouteName } from '../types.js';
import { callerOf } from './authenticate.js';
import { bodyFingerprint } from './body/body-fingerprint.js';
import { type RequestContext, withContext } from './request-context.js';
import { sendBody } from './send-body.js';
import { ANSWER_HEADER_NAMES, answerHeadersOf, backgroundWrites, doneRecord } from './kept-answers.js';
import { type StreamFields, asksStream } from '../images/image-stream-ask.js';

// the response header that marks a replayed answer
const REPLAYED_HEADER = 'idempotent-replayed';
// the draft's key is an sf-string; printable ASCII, bounded so a key cannot be a payload
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

export function createIdempotency(route: RouteName, options: ResolvedOptions): RequestHandler {
  const config = options.idempotency;
  if (!config) return withContext('idempotencyOff', (_context, next) => next());
  return withContext('idempotency', (context, next) => {
    const { req } = context;
    // most requests carry none: headersDistinct (an array per header) is built only for those that do
    if (req.headers['idempotency-key'] === undefined) return next();
    const values = req.headersDistinct['idempotency-key'];
    if (values === undefined) return next();
    if (values.length > 1) return next(GatewayError.invalidRequest('Send at most one Idempotency-Key header', 'Idempotency-Key'));
    // the draft's form is a quoted string ("abc"); the bare form most clients send is accepted too
    const key = values[0]!.trim().replace(/^"(.*)"$/, '$1');
    if (!KEY_SHAPE.test(key)) return next(GatewayError.invalidRequest('Idempotency-Key must be 1 to 255 visible ASCII characters', 'Idempotency-Key'));
    if (asksStream(req.body as StreamFields | undefined)) {
      return next(GatewayError.invalidRequest('Idempotency-Key cannot be used with stream: true: a streamed answer cannot be replayed. Send stream: false, or no key.', 'Idempotency-Key'));
    }
    if (context.dryRun) return next();
    const caller = callerOf(context);
    const scoped = createHash('sha256').update(`${caller.id}\0${route}\0${key}`).digest('base64url');
    const fingerprint = bodyFingerprint(context);
    config.store.begin(scoped, fingerprint, config.runningTtlMs).then(
      (held) => {
        if (!held) {
          keepAnswer(context, scoped, fingerprint, options);
          return next();
        }
        // a host store's malformed record must fail this request, not become an unhandled rejection
        try {
          const refusal = refusalFor(held, fingerprint);
          if (refusal) return next(refusal);
          replay(context, (held as { answer: StoredAnswer }).answer);
        } catch (error) {
          next(error);
        }
      },
      (error: unknown) => {
        options.logger.error({ requestId: context.requestId, caller: caller.id, route, error: error instanceof Error ? error.message : String(error) }, 'idempotency store unreachable; answering 503');
        next(
          new GatewayError({
            status: 503,
            code: ERROR_CODES.idempotencyUnavailable,
            message: 'The Idempotency-Key cannot be checked right now, so the request was not run. Retry shortly.',
            retryAfterSeconds: 5,
            type: 'server_error',
          }),
        );
      },
    );
  });
}

function refusalFor(held: IdempotencyRecord, fingerprint: string): GatewayError | undefined {
  if (held.fingerprint !== fingerprint) {
    return new GatewayError({
      status: 422,
      code: ERROR_CODES.idempotencyKeyReused,
      message: 'This Idempotency-Key was already used with a different request body. Use a new key for a new request.',
      param: 'Idempotency-Key',
    });
  }
  if (held.state === 'running') {
    return new GatewayError({
      status: 409,
      code: ERROR_CODES.idempotencyKeyInUse,
      message: 'A request with this Idempotency-Key is still running. Retry after it has finished to get its answer.',
      param: 'Idempotency-Key',
      retryAfterSeconds: 1,
    });
  }
  if (held.state === 'too-large') {
    return new GatewayError({
      status: 409,
      code: ERROR_CODES.idempotencyAnswerNotKept,
      message: `The request with this Idempotency-Key succeeded, but its ${held.bytes} byte answer was too large to keep for replays. It is not run again: use a new key to generate again, or response_format 'url' for answers that can be replayed.`,
      param: 'Idempotency-Key',
    });
  }
  return undefined;
}

function replay(context: RequestContext, answer: StoredAnswer): void {
  // nothing new happened upstream: no usage event (docs/tenancy-and-billing.md: none for a replay)
  const { status, contentType } = answer;
  const body = Buffer.from(answer.body, 'base64');
  context.replayed = true;
  context.res.setHeader(REPLAYED_HEADER, 'true');
  // a host store's record is not trusted to name headers: only the answer headers, as strings
  for (const [name, value] of Object.entries(answer.headers ?? {})) if (ANSWER_HEADER_NAMES.has(name) && typeof value === 'string') context.res.setHeader(name, value);
  sendBody(context, status, contentType, body);
}

/**
 * The first request's answer goes to the store when it is written (2xx only); an error answer, or a
 * failure after the client left, frees the key. The request is held open until then
 * (request-lifetime.ts): a client that disconnects does not abort the upstream call, so a lost
 * answer is still kept for the retry, and the caller's in-flight slot stays taken meanwhile.
 *
 * The running key is renewed while the work runs: its hold (idempotency.runningTtlMs) is a guess
 * from the limits, and an Upstream's own `timeoutMs` (or a storage timeout) may be longer. A key
 * that expired under a live request would let a retry generate, and bill, a second time; a crashed
 * instance stops renewing, so its keys still free within runningTtlMs.
 */
function keepAnswer(context: RequestContext, scoped: string, fingerprint: string, options: ResolvedOptions): void {
  const config = options.idempotency!;
  const hold = context.lifetime.hold();
  let settled = false;
  const write = backgroundWrites(options.logger, 'idempotency');
  const startedAt = Date.now();
  const renewal = setInterval(
    () => {
      // a request that never ends is not held past the kept answers' own lifetime
      if (Date.now() - startedAt >= config.ttlMs) return clearInterval(renewal);
      write(() => config.store.finish(scoped, { state: 'running', fingerprint }, config.runningTtlMs));
    },
    Math.max(50, Math.floor(config.runningTtlMs / 3)),
  );
  renewal.unref();
  let late = false;
  /** `unknown`: the work's outcome cannot be known (cut at its bound): the key stays taken until it expires. */
  const settle = (record: IdempotencyRecord | 'unknown' | undefined, fromLateWork = false): void => {
    // once the caller was answered for a missed deadline, only the late work's own outcome settles
    if (settled || (late && !fromLateWork)) return;
    settled = true;
    clearTimeout(safety);
    clearInterval(renewal);
    if (record !== 'unknown') write(() => (record ? config.store.finish(scoped, record, config.ttlMs) : config.store.release(scoped)));
    hold.release();
  };
  // the upstream missed its deadline but works on (answer-deadline.ts): the key stays taken, and the
  // late answer is kept under it, so a retry with the key starts nothing (docs/tenancy-and-billing.md "Retries")
  context.keepLate = (answer) => {
    late = true;
    context.workKept = true;
    answer.then(
      (kept) => {
        if (!kept) return settle('unknown', true);
        settle(kept.body.length > config.maxAnswerBytes ? { state: 'too-large', fingerprint, bytes: kept.body.length } : doneRecord(fingerprint, kept.status, kept.contentType, kept.body), true);
      },
      () => settle('unknown', true),
    );
  };
  // nothing answered within the key's running time (a handler that hangs): the caller's in-flight slot
  // is given back; the key stays taken (renewed), and an answer that comes later is still kept and
  // reported in the request's one usage event
  const safety = setTimeout(hold.freeSlot, config.runningTtlMs);
  safety.unref();
  context.recorder = {
    maxBytes: config.maxAnswerBytes,
    record(status, contentType, body, bytes) {
      if (status < 200 || status >= 300) return settle(undefined);
      if (context.res.destroyed) context.keptStatus = status;
      settle(body === undefined ? { state: 'too-large', fingerprint, bytes } : doneRecord(fingerprint, status, contentType, body, answerHeadersOf(context.res)));
    },
    fail: () => settle(undefined),
  };
}
