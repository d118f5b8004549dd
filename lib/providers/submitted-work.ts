// Waiting on work an upstream queued (fal's queue, Replicate's predictions; docs/providers/fal.md "The
// queue", docs/providers/replicate.md "What Replicate is sent"): the one rule both follow
// (`followQueuedWork`: read until the work ends, within the call's bound, cancel what is left unread, end
// at once on work the vendor no longer knows), the pause between two reads, cut short when the client
// goes, and the rule that any error met after the submit is one of work that started, so the fallback
// rule never submits the paid work again at another upstream (docs/tenancy-and-billing.md "Retries").
import { clock } from '../clock.js';
import { ClientGoneError } from '../errors/client-gone-error.js';
import { ERROR_CODES } from '../errors/error-codes.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Upstream } from '../types.js';
import { type CallContext, timeoutOf } from './call-context.js';
import type { UpstreamImageState, UpstreamImageTasks } from './provider.js';

// reads of an upstream task: from half a second, doubling up to the caller's longest (at most 5 s)
const FIRST_READ_MS = 500;
const LONGEST_READ_MS = 5_000;

/** Resolves after `ms`, or rejects with ClientGoneError when the client goes first. */
function pauseBetweenReads(ms: number, call: CallContext): Promise<void> {
  return new Promise((resolve, reject) => {
    if (call.signal.aborted) {
      reject(new ClientGoneError());
      return;
    }
    const gone = (): void => {
      cancel();
      reject(new ClientGoneError());
    };
    // on the gateway's clock (lib/clock.ts), so a spec's skipping clock makes the pause take no time
    const cancel = clock().after(ms, () => {
      call.signal.removeEventListener('abort', gone);
      resolve();
    });
    call.signal.addEventListener('abort', gone, { once: true });
  });
}

/** One read of queued work: still running, ended (with what the vendor said), or unknown to the vendor (a 404). */
export type QueuedRead<T> = { state: 'running' } | { state: 'ended'; end: T } | { state: 'gone' };

/** How one vendor's queued work is read and cancelled, for `followQueuedWork`. */
interface QueuedWork<T> {
  provider: string;
  /** The vendor's id of the work, named in the error when the vendor no longer knows it. */
  id: string;
  /** One read, given the time left before the bound. */
  read(timeoutMs: number): Promise<QueuedRead<T>>;
  /** The vendor's cancel of the work, best effort (fire and forget): work nobody will read stops costing. */
  cancel(): void;
  /** The pause before the first read, and the longest one; each next pause is `growth` times the last. */
  pace: { firstMs: number; longestMs: number; growth: number };
}

/**
 * The error of work the vendor answers 404 for after it accepted it: gone. A 502 `upstream_bad_response`
 * (the vendor's answers contradict each other; nothing the caller can fix), of work that may have run.
 */
export function workGone(provider: string, id: string): GatewayError {
  return GatewayError.badUpstreamResponse(provider, `the upstream no longer knows the work it accepted (it answered 404 for ${id})`, id);
}

/** The failures of a read worth another read: the vendor busy, failing or unreachable; never a refusal of the key, the account or the id. */
const READ_AGAIN: ReadonlySet<string> = new Set([
  ERROR_CODES.upstreamError,
  ERROR_CODES.upstreamUnreachable,
  ERROR_CODES.upstreamTimeout,
  ERROR_CODES.upstreamBusy,
  ERROR_CODES.upstreamBadResponse,
  ERROR_CODES.rateLimitExceeded,
]);
/** Reads that fail in a row before the wait gives up: the work is not known to be running any more. */
const READS_FAILED_IN_A_ROW = 8;

/**
 * Follows queued work to its end: pauses, then reads, until a read says it ended, within the upstream's
 * `timeoutMs` counted from `startedAt` (before the submit). That bound is the answer deadline, or, when
 * late work is kept for the client's retry, the deadline plus `idempotency.keptWorkSeconds`
 * (gateway/image-pipeline.ts): past it nobody can receive the work. A read that fails on the vendor's
 * side is read again (READS_FAILED_IN_A_ROW at most), never submitted again. When the wait stops before
 * the work ended (the bound, the client gone, reads that kept failing or were refused), the vendor's
 * cancel is sent: a request still queued then never runs. Work the vendor answers 404 for is gone: the
 * wait ends at once, a 502 `upstream_bad_response`, with nothing to cancel. Every error is one of work
 * that started (it may have run, and be billed).
 */
export async function followQueuedWork<T>(call: CallContext, upstream: Upstream, work: QueuedWork<T>, startedAt: number): Promise<T> {
  const timeoutMs = timeoutOf(upstream, call.limits);
  const bound = startedAt + timeoutMs;
  let pause = work.pace.firstMs;
  let failures = 0;
  // the vendor said the work is gone: nothing is left to cancel
  let gone = false;
  try {
    for (;;) {
      const left = bound - clock().now();
      if (left <= 0) throw GatewayError.upstreamTimeout(work.provider, timeoutMs);
      await pauseBetweenReads(Math.min(pause, left), call);
      pause = Math.min(work.pace.longestMs, Math.round(pause * work.pace.growth));
      let read: QueuedRead<T>;
      try {
        read = await work.read(Math.max(1, bound - clock().now()));
        failures = 0;
      } catch (error) {
        failures += 1;
        if (!(GatewayError.is(error) && READ_AGAIN.has(error.code)) || failures >= READS_FAILED_IN_A_ROW) throw error;
        continue;
      }
      if (read.state === 'ended') return read.end;
      if (read.state === 'gone') {
        gone = true;
        throw workGone(work.provider, work.id);
      }
    }
  } catch (error) {
    if (!gone) work.cancel();
    throw asStartedWork(error);
  }
}

/**
 * An error met after the submit, as one of work that started: a read refused before it was made (a
 * 429, the token refused, a connection never made) says nothing of the submitted work, which runs
 * upstream and is billed.
 */
export function asStartedWork(error: unknown): unknown {
  if (!GatewayError.is(error) || !error.notStarted) return error;
  return new GatewayError({
    status: error.status,
    code: error.code,
    message: error.message,
    ...(error.param !== undefined ? { param: error.param } : {}),
    retryable: error.retryable,
    notStarted: false,
    ...(error.upstreamRequestId !== undefined ? { upstreamRequestId: error.upstreamRequestId } : {}),
    ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
    ...(error.retryAfterUnreadable ? { retryAfterUnreadable: true } : {}),
    type: error.type,
  });
}

/**
 * Reads an upstream image task by id until it ends, by the one rule of queued work (`followQueuedWork`:
 * within the call's bound from `startedAt`, the task cancelled at the vendor where it has a cancel when
 * the wait stops first): an Idempotency-Key request run on the upstream's own task
 * (gateway/image-upstream-task.ts). A read that fails on the upstream's side is read again, never submitted
 * again; any error is one of work that started. Answers the task's end: its images, or the failure the
 * upstream reported.
 */
export function awaitUpstreamImage(
  call: CallContext,
  upstream: Upstream,
  tasks: UpstreamImageTasks,
  id: string,
  how: { startedAt: number; longestReadMs: number },
): Promise<Exclude<UpstreamImageState, { status: 'running' }>> {
  return followQueuedWork(
    call,
    upstream,
    {
      provider: upstream.provider,
      id,
      read: () =>
        tasks
          .read(call, upstream, id)
          .then((state): QueuedRead<Exclude<UpstreamImageState, { status: 'running' }>> => (state.status === 'running' ? { state: 'running' } : { state: 'ended', end: state })),
      cancel: () => tasks.cancel?.(call, upstream, id),
      pace: { firstMs: FIRST_READ_MS, longestMs: Math.min(LONGEST_READ_MS, Math.max(FIRST_READ_MS, how.longestReadMs)), growth: 2 },
    },
    how.startedAt,
  );
}
