// Idempotency-Key on the paid creates (IETF draft "The Idempotency-Key HTTP Header Field"; docs/tenancy-and-billing.md). Runs after authentication and the body parser, before the route: the key is
// scoped to the caller and the route, taken atomically in the store with the body's fingerprint.
// - first request: runs; a 2xx answer is kept (status, Content-Type, bytes) for idempotency.ttlSeconds;
//   any error answer frees the key, so a retry runs again (a 4xx costs nothing, a 5xx may be transient),
//   but an output refusal (images made, paid and flagged) is kept like an answer
// - same key, same body, answer kept: replayed byte for byte with `Idempotent-Replayed: true`, the
//   upstream not called, no usage event (nothing new was billed)
// - same key, same body, still running: 409 `idempotency_key_in_use` with Retry-After (the OpenAI
//   SDKs retry a 409 by themselves, so a client retrying too early simply waits)
// - same key, another body: 422 `idempotency_key_reused` (the draft's answer)
// - a streamed answer (`stream: true`) cannot be replayed: the key is refused with 400
// - the instance running the first request stopped (its key's lease lapsed, gateway/kept-work/lapsed-keys.ts):
//   the lost request is booked once, and the next request with the key gets 409
//   `idempotency_key_interrupted` with `x-should-retry: false` (its outcome is unknown: the upstream
//   may have made, and billed, the images); the key is then free for a deliberate new attempt
// - a request that runs on an upstream task of its own (an Idempotency-Key request to DashScope's
//   asynchronous synthesis, a Replicate prediction, fal's queue) records the task's id in its lease
//   as soon as the submit answered: when its instance stops, another follows that task to its end and
//   keeps the answer under the key, so the retry gets it (409 `idempotency_key_in_use` meanwhile)
// - a quote (`Prefer: dry-run`) checks the key as the real request would and takes nothing: the key
//   stays free for the request it quotes (docs/tenancy-and-billing.md "Quotes before work")
import { createHash, randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ResolvedOptions } from '../../gateway/resolve-options.js';
import type { IdempotencyRecord, LeasedWork, RunningLease, StoredAnswer } from '../../stores/idempotency/idempotency-store.js';
import type { RouteName } from '../../types.js';
import type { Usage } from '../../gateway/use-case.js';
import { leaseEnd } from '../../gateway/leases/lease-terms.js';
import type { LapsedKeys } from '../../gateway/kept-work/lapsed-keys.js';
import { bearerKeyOf, callerOf } from '../authenticate.js';
import { bodyFingerprint } from '../body/body-fingerprint.js';
import { type RequestContext, withContext } from '../request-context.js';
import { sendBody } from '../answers/send-body.js';
import { ANSWER_HEADER_NAMES, answerHeadersOf, backgroundWrites, doneRecord } from './kept-answers.js';
import { type StreamFields, asksStream } from '../../images/image-stream-ask.js';

// the response header that marks a replayed answer
const REPLAYED_HEADER = 'idempotent-replayed';
// the draft's key is an sf-string; printable ASCII, bounded so a key cannot be a payload
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

// rounds of begin when the record met changes under the request (a lapse claimed, an interrupted key freed)
const BEGIN_ROUNDS = 4;

export function createIdempotency(route: RouteName, options: ResolvedOptions, lapsed?: LapsedKeys): RequestHandler {
  const config = options.idempotency;
  if (!config) return withContext('idempotencyOff', (_context, next) => next());
  // leases with a store that keeps them (both built-in ones); a host's store without them frees a stopped instance's keys when they expire
  const leases = lapsed?.enabled ? lapsed : undefined;
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
    const lease: RunningLease | undefined = leases
      ? { holder: randomBytes(12).toString('base64url'), leaseUntil: leaseEnd(config.lease, Date.now()), work: workOf(context, route, leases) }
      : undefined;
    beginOrResolve(scoped, fingerprint, lease, leases, options).then(
      (held) => {
        if (!held) {
          keepAnswer(context, scoped, fingerprint, options, lease && leases ? { lease, leases } : undefined);
          return next();
        }
        // a host store's malformed record must fail this request, not become an unhandled rejection
        try {
          const refusal = refusalFor(held, fingerprint);
          if (refusal) {
            // the earlier attempt may have been paid: a blind retry would pay again (error-middleware.ts)
            if (refusal.code === ERROR_CODES.idempotencyKeyInterrupted) context.workMayHaveStarted = true;
            return next(refusal);
          }
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

/**
 * Takes the key, or returns the record that holds it. A running key whose lease lapsed is claimed and
 * booked (lapsed-keys.ts), and an interrupted key is freed: this request is then answered that the
 * earlier one was interrupted (the record returned is `interrupted`), and the next one runs.
 */
async function beginOrResolve(key: string, fingerprint: string, lease: RunningLease | undefined, leases: LapsedKeys | undefined, options: ResolvedOptions): Promise<IdempotencyRecord | undefined> {
  const { store, runningTtlMs } = options.idempotency!;
  for (let round = 0; round < BEGIN_ROUNDS; round += 1) {
    const held = await store.begin(key, fingerprint, runningTtlMs, lease);
    if (!held) {
      // the key's watch ends the request if this instance stops before it does
      if (lease && leases)
        leases.arm(key, lease.leaseUntil).catch((error: unknown) => options.logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'idempotency key watch not scheduled'));
      return undefined;
    }
    if (!leases || held.fingerprint !== fingerprint) return held;
    const now = Date.now();
    // claimed here or by another instance a moment ago: the key is interrupted now, or followed (a
    // request on an upstream task: met again, it is running, and this request is told it is in use)
    if (held.state === 'running' && held.lease && held.lease.leaseUntil <= now) {
      if ((await leases.claim(key, now)) === 'following') continue;
    } else if (held.state !== 'interrupted') return held;
    // the first request that meets the interrupted key is told, and frees it; a concurrent one begins again
    if (await store.clearInterrupted!(key)) return { state: 'interrupted', fingerprint };
  }
  throw new Error('the Idempotency-Key record kept changing');
}

/** What the request is, for the instance that books it if this one stops: who asked, and the model its body names. */
function workOf(context: RequestContext, route: RouteName, leases: LapsedKeys): LeasedWork {
  const body = context.req.body as { model?: unknown } | undefined;
  return leases.workOf(callerOf(context), bearerKeyOf(context.req), route, typeof body?.model === 'string' ? body.model : '');
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
  if (held.state === 'interrupted') {
    return new GatewayError({
      status: 409,
      code: ERROR_CODES.idempotencyKeyInterrupted,
      message:
        'The request with this Idempotency-Key was interrupted: the gateway instance running it stopped before it answered, so its outcome is unknown (the upstream may have generated, and billed, the images). It is not run again by this request; the key is now free: send the request again with it to generate anew.',
      param: 'Idempotency-Key',
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
 * that expired under a live request would let a retry generate, and bill, a second time. With a
 * store that keeps leases, the renewal is the lease's (idempotency.leaseSeconds, with what the use
 * case charged and whether its call started): a crashed instance stops renewing, and another finds
 * the lapse about one lease later (gateway/kept-work/lapsed-keys.ts); without, its keys free within runningTtlMs.
 */
function keepAnswer(context: RequestContext, scoped: string, fingerprint: string, options: ResolvedOptions, leased?: { lease: RunningLease; leases: LapsedKeys }): void {
  const config = options.idempotency!;
  const hold = context.lifetime.hold();
  let settled = false;
  // the lease was claimed by another instance (this one could not renew it in time): the key is no longer this request's
  let lost = false;
  const write = backgroundWrites(options.logger, 'idempotency');
  const startedAt = Date.now();
  let tracked: Usage | undefined;
  const renew = async (): Promise<void> => {
    if (!leased || lost || settled) return;
    const { lease } = leased;
    lease.leaseUntil = leaseEnd(config.lease, Date.now());
    if (tracked) lease.work = leased.leases.tracked(lease.work, tracked);
    if (await config.store.renew!(scoped, lease, config.runningTtlMs)) return;
    if (settled) return;
    lost = true;
    clearInterval(renewal);
    options.logger.warn({ requestId: context.requestId }, 'idempotency key lease lost: another instance found it lapsed');
  };
  if (leased) {
    // the use case's usage as it starts: its charge and its upstream call go into the lease at once
    context.tracker = (usage) => {
      tracked = usage;
      usage.onAttempt = () => write(renew);
      // a request on an upstream task of its own records the task's id before it waits on it: another
      // instance follows it from there if this one stops (gateway/kept-work/lapsed-keys.ts)
      if (leased.leases.follows) {
        usage.onUpstreamTask = (task) => {
          leased.lease.work.upstreamTask = task;
          return renew().catch((error: unknown) =>
            options.logger.error({ requestId: context.requestId, error: error instanceof Error ? error.message : String(error) }, 'upstream task id not recorded'),
          );
        };
      }
    };
  }
  const renewal = setInterval(
    () => {
      // a request that never ends is not held past the kept answers' own lifetime
      if (Date.now() - startedAt >= config.ttlMs) return clearInterval(renewal);
      write(() => (leased ? renew() : config.store.finish(scoped, { state: 'running', fingerprint }, config.runningTtlMs)));
    },
    leased ? config.lease.renewMs : Math.max(50, Math.floor(config.runningTtlMs / 3)),
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
    if (record !== 'unknown' && !lost) write(() => (record ? config.store.finish(scoped, record, config.ttlMs) : config.store.release(scoped)));
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
  const keep = (status: number, contentType: string, body: Buffer | string | undefined, bytes: number): void => {
    if (context.res.destroyed) context.keptStatus = status;
    settle(body === undefined ? { state: 'too-large', fingerprint, bytes } : doneRecord(fingerprint, status, contentType, body, answerHeadersOf(context.res)));
  };
  context.recorder = {
    maxBytes: config.maxAnswerBytes,
    record(status, contentType, body, bytes) {
      if (status < 200 || status >= 300) return settle(undefined);
      keep(status, contentType, body, bytes);
    },
    fail: () => settle(undefined),
    // made, paid and flagged: a retry gets the same refusal and pays nothing again (docs/content-safety.md)
    keepRefusal: (status, contentType, body) => keep(status, contentType, body, Buffer.byteLength(body)),
  };
}
