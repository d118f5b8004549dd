// The per-caller in-flight cap (limits.inFlightPerCaller, or the caller's `tenancy.quotas` `inFlight`): runs
// right after authentication, so one tenant can hold at most that many requests (and so upstream
// sockets) at a time and never starve the others. A request past the cap gets the quotas' 429 (with
// RateLimit headers) before its body is read or an upstream is called. Counted per instance: it
// guards this process's sockets, which another instance's requests do not hold. The counter sits
// behind a small interface (acquire a slot, get back its one release), apart from the middleware.
import type { RequestHandler } from 'express';
import { callerOf } from './authenticate.js';
import { type RequestContext, withContext } from './request-context.js';
import { QuotaExceededError } from '../errors/quota-exceeded-error.js';
import type { Quotas } from '../gateway/tenancy/quotas.js';

// A slot frees whenever any of the caller's requests ends; with `limit` slow jobs in flight that is
// on average well under a second away, so one second is an honest hint (the OpenAI SDKs honour it).
const RETRY_AFTER_SECONDS = 1;

export function limitCallerInFlight(limit: number, limiter: InFlightLimiter = createInFlightLimiter(limit), quotas?: Quotas): RequestHandler {
  const acquire = (context: RequestContext, next: (error?: unknown) => void, most: number): void => {
    const release = limiter.tryAcquire(callerOf(context).id, most);
    if (!release) {
      next(
        new QuotaExceededError(`This API key already has ${most} requests in flight, the most allowed at once. Retry when one of them has finished.`, {
          name: 'in-flight',
          quota: most,
          remaining: 0,
          resetSeconds: RETRY_AFTER_SECONDS,
        }),
      );
      return;
    }
    // once per response however it ends (finished, failed, client gone), or later when an
    // Idempotency-Key create finishes its work after its client left (request-lifetime.ts); the
    // release is idempotent besides, so no path can free a slot twice
    context.lifetime.whenSlotFree(release);
    next();
  };
  if (!quotas) return withContext('limitCallerInFlight', (context, next) => acquire(context, next, limit));
  return withContext('limitCallerInFlight', (context, next) => {
    quotas.limitsFor(callerOf(context)).then(
      (limits) => acquire(context, next, limits?.inFlight ?? limit),
      (error: unknown) => next(error),
    );
  });
}

export interface InFlightLimiter {
  /** Slots each key may hold at once. */
  readonly limit: number;
  /**
   * Takes one slot for `key` (at most `limit` held, default the limiter's: a caller's quota may override it). Returns the function that gives it back, or null when `key` already
   * holds `limit` slots. The release is idempotent: calling it again frees nothing more, so every
   * way a response can end (finish, error, abort) may call it without counting twice.
   */
  tryAcquire(key: string, limit?: number): (() => void) | null;
  /** Slots `key` holds now. */
  inFlight(key: string): number;
  /** Keys holding at least one slot (a key is forgotten at zero, so memory follows live callers). */
  size(): number;
}

export function createInFlightLimiter(limit: number): InFlightLimiter {
  const held = new Map<string, number>();
  return {
    limit,
    tryAcquire(key, most = limit) {
      const current = held.get(key) ?? 0;
      if (current >= most) return null;
      held.set(key, current + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const remaining = (held.get(key) ?? 1) - 1;
        if (remaining > 0) held.set(key, remaining);
        else held.delete(key);
      };
    },
    inFlight: (key) => held.get(key) ?? 0,
    size: () => held.size,
  };
}
