// A call's deadline and cancellation (upstream-http.ts): a whole-request timer, the client going
// away, and for a relayed stream an idle limit instead. Plain listeners, not an AbortController: a
// controller, its signal and the listener node:http adds for it cost measurable time per call.
import { ClientGoneError } from '../errors/client-gone-error.js';
import type { UpstreamRequest } from './upstream-call.js';

/** The reason of a call cancelled by its deadline (or a stream by its idle limit). */
class DeadlineError extends Error {}

export interface Deadline {
  /** Why the call was cancelled (DeadlineError or ClientGoneError); undefined while it runs. */
  reason: () => Error | undefined;
  /** Runs `listener` on cancellation (at once when already cancelled); returns its remover. */
  onCancel: (listener: (reason: Error) => void) => () => void;
  expired: () => boolean;
  /** Switches from a whole-request deadline to an idle limit of `ms`; `waiting` time does not count. */
  idle: (ms: number, waiting: () => boolean) => void;
  /** Records activity for the idle limit. */
  touch: () => void;
  clear: () => void;
}

/** Starts the deadline of one call: `timeoutMs` from now, or sooner when `signal` aborts. */
export function startDeadline(call: Pick<UpstreamRequest, 'timeoutMs' | 'signal'>): Deadline {
  let reason: Error | undefined;
  let listeners: ((reason: Error) => void)[] = [];
  const cancel = (why: Error): void => {
    if (reason) return;
    reason = why;
    const waiting = listeners;
    listeners = [];
    for (const listener of waiting) listener(why);
  };
  const expire = (): void => cancel(new DeadlineError());
  let timer = setTimeout(expire, call.timeoutMs);
  timer.unref();
  const onClientGone = (): void => cancel(new ClientGoneError());
  if (call.signal?.aborted) onClientGone();
  else call.signal?.addEventListener('abort', onClientGone, { once: true });
  let idleMs = 0;
  let lastTouch = 0;
  return {
    reason: () => reason,
    onCancel: (listener) => {
      if (reason) {
        listener(reason);
        return () => {};
      }
      listeners.push(listener);
      return () => {
        listeners = listeners.filter((other) => other !== listener);
      };
    },
    expired: () => reason instanceof DeadlineError,
    idle: (ms: number, waiting: () => boolean) => {
      // one timer re-armed lazily: touching costs a clock read, not a timer per chunk
      clearTimeout(timer);
      idleMs = ms;
      lastTouch = performance.now();
      const check = (): void => {
        if (waiting()) lastTouch = performance.now();
        const quiet = performance.now() - lastTouch;
        if (quiet >= idleMs) expire();
        else {
          timer = setTimeout(check, idleMs - quiet);
          timer.unref();
        }
      };
      timer = setTimeout(check, ms);
      timer.unref();
    },
    touch: () => {
      lastTouch = performance.now();
    },
    clear: () => {
      clearTimeout(timer);
      listeners = [];
      call.signal?.removeEventListener('abort', onClientGone);
    },
  };
}
