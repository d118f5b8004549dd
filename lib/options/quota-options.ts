// The `tenancy.quotas` option's types (docs/tenancy-and-billing.md "Quotas"): per-caller limits on requests, images,
// video seconds, concurrent tasks and money, the Redis client that counts them across instances, and what
// `router.quota(caller)` reports. Types only; gateway/tenancy/resolve-tenancy.ts checks and resolves them.
import type { Caller } from '../types.js';

/**
 * Per-caller quotas (docs/tenancy-and-billing.md): limits in the units a tenant is billed in, counted by
 * rate-limiter-flexible in memory by default (one instance); on the gateway's `redis` option when it is
 * given (or on a `redis` of their own), so several instances share one budget.
 * @example quotas: { limits: (caller) => plans[caller.plan], whenRedisDown: 'refuse' }
 */
export interface QuotaOptions {
  /** Required. The limits, for every caller or per caller (null/undefined: no quota for this caller). No default. @example limits: { requestsPerMinute: 60 } */
  limits: QuotaLimitsFor;
  /**
   * An override: a connected ioredis client of the quotas' own (the host's; never closed by the
   * gateway). Default: the `redis` option's client, else counters in this process's memory.
   * @example redis: new Redis(process.env.QUOTA_REDIS_URL!)
   */
  redis?: QuotaRedisClient;
  /** An override: prepended to every quota key. Default `'<redis.prefix>quota:'` (`'gw:quota:'`). @example prefix: 'myapp:quota:' */
  prefix?: string;
  /**
   * When Redis cannot be reached: `'refuse'` answers 503 `quota_unavailable` (nothing runs
   * uncounted), `'allow'` lets the request run uncounted and logs a warning. Default `'refuse'`.
   * @example whenRedisDown: 'allow'
   */
  whenRedisDown?: 'refuse' | 'allow';
  /** Seconds a video task costs when its body names no duration. Default 5 (Seedance's default). @example defaultVideoSeconds: 10 */
  defaultVideoSeconds?: number;
  /**
   * The window of the money budget (limit `budget`), seconds: the budget refills when it ends.
   * Default 86 400 (a day); at most 24 days. @example budgetWindowSeconds: 3600
   */
  budgetWindowSeconds?: number;
}

/**
 * One caller's limits. Each key is optional; an absent key is no limit of that kind (the default).
 * @example { requestsPerMinute: 120, imagesPerMinute: 40, videoSecondsPerDay: 600, concurrentVideoTasks: 2, inFlight: 16 }
 */
export interface QuotaLimits {
  /** Requests per minute (fixed window): creates and forwarded requests, not task queries or `/v1/models` (a refused request is not counted). @example requestsPerMinute: 120 */
  requestsPerMinute?: number;
  /** Images per minute: an image request costs its `n` (default 1), given back when the upstream fails (and the images its answer lacks). @example imagesPerMinute: 40 */
  imagesPerMinute?: number;
  /**
   * Video-seconds per day: a task costs its requested `duration` (top-level, else a `--dur N` /
   * `--duration N` flag in its text, else `defaultVideoSeconds`), given back when the upstream refuses the create.
   * @example videoSecondsPerDay: 600
   */
  videoSecondsPerDay?: number;
  /** Video tasks not yet in a terminal state at once; a slot is freed when the task ends (seen by a query or the callback poller). @example concurrentVideoTasks: 2 */
  concurrentVideoTasks?: number;
  /** Requests in flight at once on this instance; overrides `limits.inFlightPerCaller` for this caller. @example inFlight: 16 */
  inFlight?: number;
  /**
   * Money per budget window (`budgetWindowSeconds`, default a day), in the `tenancy.pricing` currency: a
   * request reserves the most it may cost by the price table, and is settled to its cost when it ends
   * (a video task at its terminal state); a 429 names the budget. Needs `tenancy.pricing`. @example budget: 25
   */
  budget?: number;
}

/**
 * The limits of a caller: one table for all, or looked up per caller (a plan in the host's database).
 * @example limits: async (caller) => (await db.plans.of(caller.id))?.quotas
 */
export type QuotaLimitsFor = QuotaLimits | ((caller: Caller) => QuotaLimits | null | undefined | Promise<QuotaLimits | null | undefined>);

/**
 * The commands the quota counters send (ioredis's `Redis` fits; rate-limiter-flexible drives it).
 * @example redis: new Redis(process.env.REDIS_URL!)
 */
export interface QuotaRedisClient {
  status?: string;
  eval(...args: never[]): unknown;
  multi(...args: never[]): unknown;
}

/** What `router.quota(caller)` tells about the `tenancy.quotas` limits: each configured limit, what is left of it now, and when it refills. */
export interface QuotaState {
  name: 'requests' | 'images' | 'video-seconds' | 'video-tasks' | 'budget';
  limit: number;
  remaining: number;
  /** Seconds until the window resets (0 for concurrent video tasks: a slot frees when a task ends). */
  resetSeconds: number;
}
