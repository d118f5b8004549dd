// The per-caller in-flight cap (limits.inFlightPerCaller, or the caller's `tenancy.quotas` `inFlight`): runs
// right after authentication, so one tenant can hold at most that many requests (and so upstream
// sockets) at a time and never starve the others. A request past the cap gets the quotas' 429 (with
// RateLimit headers) before its body is read or an upstream is called. Counted per instance: it
// guards this process's sockets, which another instance's requests do not hold.
import type { RequestHandler } from 'express';
import { callerOf } from './authenticate.js';
import { type RequestContext, withContext } from './request-context.js';
import { QuotaExceededError } from '../errors/quota-exceeded-error.js';
import type { Quotas } from '../gateway/tenancy/quotas.js';
import { type InFlightLimiter, createInFlightLimiter } from './in-flight-limiter.js';

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
