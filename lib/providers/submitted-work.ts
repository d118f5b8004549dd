// Waiting on work an upstream queued (fal's queue, Replicate's predictions; docs/providers/fal.md "The
// queue", docs/providers/replicate.md): the pause between two reads, cut short when the client goes, and
// the rule that any error met after the submit is one of work that started, so the fallback rule never
// submits the paid work again at another upstream (docs/tenancy-and-billing.md "Retries").
import { ClientGoneError } from '../errors/client-gone-error.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Upstream } from '../types.js';
import { type CallContext, timeoutOf } from './call-context.js';
import type { UpstreamImageState, UpstreamImageTasks } from './provider.js';

// reads of an upstream task: from half a second, doubling up to the caller's longest (at most 5 s)
const FIRST_READ_MS = 500;
const LONGEST_READ_MS = 5_000;

/** Resolves after `ms`, or rejects with ClientGoneError when the client goes first. */
export function pauseBetweenReads(ms: number, call: CallContext): Promise<void> {
  return new Promise((resolve, reject) => {
    if (call.signal.aborted) {
      reject(new ClientGoneError());
      return;
    }
    const gone = (): void => {
      clearTimeout(timer);
      reject(new ClientGoneError());
    };
    const timer = setTimeout(() => {
      call.signal.removeEventListener('abort', gone);
      resolve();
    }, ms);
    timer.unref();
    call.signal.addEventListener('abort', gone, { once: true });
  });
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
    type: error.type,
  });
}

/**
 * Reads an upstream image task by id until it ends, within the upstream's deadline from `startedAt`
 * (an Idempotency-Key request run on the upstream's own task, gateway/image-upstream-task.ts). A read that
 * fails on the upstream's side (5xx, 429) is read again, never submitted again; any error is one of
 * work that started. Answers the task's end: its images, or the failure the upstream reported.
 */
export async function awaitUpstreamImage(
  call: CallContext,
  upstream: Upstream,
  tasks: UpstreamImageTasks,
  id: string,
  how: { startedAt: number; longestReadMs: number },
): Promise<Exclude<UpstreamImageState, { status: 'running' }>> {
  const timeoutMs = timeoutOf(upstream, call.limits);
  const longest = Math.min(LONGEST_READ_MS, Math.max(FIRST_READ_MS, how.longestReadMs));
  let delay = FIRST_READ_MS;
  try {
    for (;;) {
      const left = how.startedAt + timeoutMs - Date.now();
      if (left <= 0) throw GatewayError.upstreamTimeout(upstream.provider, timeoutMs);
      await pauseBetweenReads(Math.min(delay, left), call);
      delay = Math.min(delay * 2, longest);
      let state: UpstreamImageState;
      try {
        state = await tasks.read(call, upstream, id);
      } catch (error) {
        // a read that failed says nothing of the task: read again
        if (GatewayError.is(error) && (error.status >= 500 || error.status === 429)) continue;
        throw error;
      }
      if (state.status !== 'running') return state;
    }
  } catch (error) {
    throw asStartedWork(error);
  }
}
