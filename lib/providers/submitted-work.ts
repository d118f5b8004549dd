// Waiting on work an upstream queued (fal's queue, Replicate's predictions; docs/providers/fal.md "The
// queue", docs/providers/replicate.md): the pause between two reads, cut short when the client goes, and
// the rule that any error met after the submit is one of work that started, so the fallback rule never
// submits the paid work again at another upstream (docs/tenancy-and-billing.md "Retries").
import { ClientGoneError } from '../errors/client-gone-error.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { CallContext } from './call-context.js';

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
