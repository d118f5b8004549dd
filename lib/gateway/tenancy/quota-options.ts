// The public types of the `quotas` option (README "Tenant controls"): per-caller limits in the units a
// tenant is billed in, counted by rate-limiter-flexible in memory or in the host's Redis.
import type { Caller } from '../../types.js';

/**
 * One caller's limits. Each key is optional; an absent key is no limit of that kind.
 * @example { requestsPerMinute: 120, imagesPerMinute: 40, videoSecondsPerDay: 600, concurrentVideoTasks: 2, inFlight: 16 }
 */
export interface QuotaLimits {
  /** Requests per minute (fixed window): creates and forwarded requests, not task queries or `/v1/models` (a refused request is not counted). */
  requestsPerMinute?: number;
  /** Images per minute: an image request costs its `n` (default 1), given back when the upstream fails (and the images its answer lacks). */
  imagesPerMinute?: number;
  /**
   * Video-seconds per day: a task costs its requested `duration` (top-level, else a `--dur N` /
   * `--duration N` flag in its text, else `defaultVideoSeconds`), given back when the upstream refuses the create.
   */
  videoSecondsPerDay?: number;
  /** Video tasks not yet in a terminal state at once; a slot is freed when the task ends (seen by a query or the callback poller). */
  concurrentVideoTasks?: number;
  /** Requests in flight at once on this instance; overrides `limits.inFlightPerCaller` for this caller. */
  inFlight?: number;
}

/** The limits of a caller: one table for all, or looked up per caller (a plan in the host's database). */
export type QuotaLimitsFor = QuotaLimits | ((caller: Caller) => QuotaLimits | null | undefined | Promise<QuotaLimits | null | undefined>);

/** The commands the quota counters send (ioredis's `Redis` fits; rate-limiter-flexible drives it). */
export interface QuotaRedisClient {
  status?: string;
  eval(...args: never[]): unknown;
  multi(...args: never[]): unknown;
}

/**
 * Per-caller quotas (README "Tenant controls"). Counted in memory by default (one instance); give
 * `redis` so several instances share one budget.
 * @example quotas: { limits: (caller) => plans[caller.plan], redis: new Redis(process.env.REDIS_URL!), whenRedisDown: 'refuse' }
 */
export interface QuotaOptions {
  /** Required. The limits, for every caller or per caller (null/undefined: no quota for this caller). */
  limits: QuotaLimitsFor;
  /** A connected ioredis client (the host's; never closed by the gateway). Default: counters in this process's memory. */
  redis?: QuotaRedisClient;
  /** Prepended to every Redis key. Default `'gw:quota:'`. */
  prefix?: string;
  /**
   * When Redis cannot be reached: `'refuse'` answers 503 `quota_unavailable` (nothing runs
   * uncounted), `'allow'` lets the request run uncounted and logs a warning. Default `'refuse'`.
   */
  whenRedisDown?: 'refuse' | 'allow';
  /** Seconds a video task costs when its body names no duration. Default 5 (Seedance's default). */
  defaultVideoSeconds?: number;
}

/** What `router.quota(caller)` tells: each configured limit, what is left of it now, and when it refills. */
export interface QuotaState {
  name: 'requests' | 'images' | 'video-seconds' | 'video-tasks';
  limit: number;
  remaining: number;
  /** Seconds until the window resets (0 for concurrent video tasks: a slot frees when a task ends). */
  resetSeconds: number;
}
