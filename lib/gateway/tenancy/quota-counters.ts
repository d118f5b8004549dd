// The rate-limiter-flexible counters behind Quotas (quotas.ts): one per kind and caller, in memory or
// on the host's Redis (shared by every instance), each with the window it keeps a charge for. The
// counters only count: the caller's own limit decides (docs/tenancy-and-billing.md).
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract, type RateLimiterRes } from 'rate-limiter-flexible';
import type { QuotaKind } from './quota-cost.js';
import type { ResolvedQuotas } from './resolve-tenancy.js';

// the counters count; the caller's limit decides. Far above any limit, so the counter never refuses.
const COUNTER_POINTS = Number.MAX_SAFE_INTEGER;
// the memory counters expire with setTimeout, which fires at once past 2^31-1 ms (24.8 days): a longer
// window would forget every charge immediately, so a slot is held 24 days at most
const MAX_WINDOW_SECONDS = 24 * 86_400;
const WINDOW_END_MARGIN_MS = 250;

export interface QuotaCounters {
  readonly counters: Record<QuotaKind, RateLimiterAbstract>;
  /** Each kind's window as the caller is told it, seconds (none for a concurrency limit). */
  readonly windows: Record<QuotaKind, number | undefined>;
  /** How long each counter keeps a charge, seconds: a new window's reset, for the refusal a quote reports. */
  readonly durations: Record<QuotaKind, number>;
}

/** The counters of every kind; a video-task slot is held `videoSlotMs` at most (a task nobody sees end). */
export function quotaCounters(config: ResolvedQuotas | undefined, videoSlotMs: number): QuotaCounters {
  const budgetWindow = config?.budgetWindowSeconds ?? 86_400;
  const windows = { requests: 60, images: 60, videoSeconds: 86_400, videoTasks: undefined, budget: budgetWindow };
  const durations: Record<QuotaKind, number> = {
    requests: 60,
    images: 60,
    videoSeconds: 86_400,
    videoTasks: Math.min(Math.ceil(videoSlotMs / 1000), MAX_WINDOW_SECONDS),
    budget: budgetWindow,
  };
  const make = (kind: QuotaKind): RateLimiterAbstract => {
    const common = { points: COUNTER_POINTS, duration: durations[kind], keyPrefix: `${config?.prefix ?? 'gw:quota:'}${kind}` };
    return config?.redis ? new RateLimiterRedis({ ...common, storeClient: config.redis }) : new RateLimiterMemory(common);
  };
  const counters = { requests: make('requests'), images: make('images'), videoSeconds: make('videoSeconds'), videoTasks: make('videoTasks'), budget: make('budget') };
  return { counters, windows, durations };
}

/** When each consumed counter's window ends (no end for a counter without expiry). */
export function windowEndsOf(kinds: readonly QuotaKind[], settled: ReadonlyArray<PromiseSettledResult<RateLimiterRes>>): Partial<Record<QuotaKind, number>> {
  const now = Date.now();
  const ends: Partial<Record<QuotaKind, number>> = {};
  kinds.forEach((kind, index) => {
    const result = settled[index];
    // the counter's expiry was read before its answer travelled back: a margin, so that a give-back
    // never races the reset of the window it belongs to
    if (result?.status === 'fulfilled' && result.value.msBeforeNext > 0) ends[kind] = now + result.value.msBeforeNext - WINDOW_END_MARGIN_MS;
  });
  return ends;
}

/** ioredis's states of a connection that was lost ('wait' and 'connecting' at startup still queue and succeed). */
export function isDisconnected(client: { status?: string }): boolean {
  return client.status === 'reconnecting' || client.status === 'close' || client.status === 'end';
}
