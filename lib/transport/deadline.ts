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
  return new CallDeadline(call);
}

/**
 * One object per call, its state in fields and its timers given the object as their argument: a
 * closure per method and per timer (nine per call) cost allocations on every upstream call
 * (docs/benchmarks.md "Against the Express floor").
 */
class CallDeadline implements Deadline {
  private why: Error | undefined;
  private listeners: Array<(reason: Error) => void> | undefined;
  private timer: NodeJS.Timeout;
  private idleMs = 0;
  private lastTouch = 0;
  private waiting: (() => boolean) | undefined;
  private readonly onClientGone = (): void => this.cancel(new ClientGoneError());

  constructor(private readonly call: Pick<UpstreamRequest, 'timeoutMs' | 'signal'>) {
    this.timer = setTimeout(expire, call.timeoutMs, this);
    this.timer.unref();
    if (call.signal?.aborted) this.onClientGone();
    else call.signal?.addEventListener('abort', this.onClientGone, ONCE);
  }

  reason(): Error | undefined {
    return this.why;
  }

  onCancel(listener: (reason: Error) => void): () => void {
    if (this.why) {
      listener(this.why);
      return () => {};
    }
    (this.listeners ??= []).push(listener);
    return () => {
      this.listeners = this.listeners?.filter((other) => other !== listener);
    };
  }

  expired(): boolean {
    return this.why instanceof DeadlineError;
  }

  idle(ms: number, waiting: () => boolean): void {
    // one timer re-armed lazily: touching costs a clock read, not a timer per chunk
    clearTimeout(this.timer);
    this.idleMs = ms;
    this.waiting = waiting;
    this.lastTouch = performance.now();
    this.timer = setTimeout(checkIdle, ms, this);
    this.timer.unref();
  }

  /** A bound function: it is handed to a body's 'data' event. */
  readonly touch = (): void => {
    this.lastTouch = performance.now();
  };

  clear(): void {
    clearTimeout(this.timer);
    this.listeners = undefined;
    this.call.signal?.removeEventListener('abort', this.onClientGone);
  }

  cancel(why: Error): void {
    if (this.why) return;
    this.why = why;
    const waiting = this.listeners;
    this.listeners = undefined;
    if (waiting) for (const listener of waiting) listener(why);
  }

  checkIdle(): void {
    if (this.waiting?.()) this.lastTouch = performance.now();
    const quiet = performance.now() - this.lastTouch;
    if (quiet >= this.idleMs) expire(this);
    else {
      this.timer = setTimeout(checkIdle, this.idleMs - quiet, this);
      this.timer.unref();
    }
  }
}

const ONCE = { once: true } as const;

function expire(deadline: CallDeadline): void {
  deadline.cancel(new DeadlineError());
}

function checkIdle(deadline: CallDeadline): void {
  deadline.checkIdle();
}
