// The per-caller in-flight cap (limits.inFlightPerCaller): runs right after authentication, so one
// tenant can hold at most that many requests (and so upstream sockets) at a time and never starve
// the others. A request past the cap gets 429 before its body is read or an upstream is called.
import type { RequestHandler } from 'express';
import { callerOf } from './authenticate.js';
import { ERROR_CODES } from '../errors/error-codes.js';
import { GatewayError } from '../errors/gateway-error.js';
import { type InFlightLimiter, createInFlightLimiter } from './in-flight-limiter.js';
import { findRouteState } from './route-state.js';
import { Telemetry } from '../telemetry/telemetry.js';

// A slot frees whenever any of the caller's requests ends; with `limit` slow jobs in flight that is
// on average well under a second away, so one second is an honest hint (the OpenAI SDKs honour it).
const RETRY_AFTER_SECONDS = 1;

export function limitCallerInFlight(limit: number, limiter: InFlightLimiter = createInFlightLimiter(limit), telemetry: Telemetry = Telemetry.off): RequestHandler {
  return (_req, res, next) => {
    const release = limiter.tryAcquire(callerOf(res).id);
    if (!release) {
      telemetry.recordLimitRefusal('in_flight_per_caller', findRouteState(res)?.route);
      next(
        new GatewayError({
          status: 429,
          code: ERROR_CODES.rateLimitExceeded,
          message: `This API key already has ${limiter.limit} requests in flight, the most allowed at once. Retry when one of them has finished.`,
          retryAfterSeconds: RETRY_AFTER_SECONDS,
        }),
      );
      return;
    }
    // 'close' comes once per response however it ends (finished, failed, client gone); the
    // release is idempotent besides, so no path can free a slot twice
    res.once('close', release);
    next();
  };
}
