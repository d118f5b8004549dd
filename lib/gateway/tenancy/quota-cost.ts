// What a request costs in each kind of quota (docs/tenancy-and-billing.md), the kinds themselves (the
// caller's limit each is compared with, and its name and unit in a RateLimit field or a 429), and which
// kinds of a cost a charge counts. Quotas (quotas.ts) charges, peeks and reports by these.
import type { QuotaLimits, QuotaState } from '../../options/gateway-options.js';
import { MICROS, type PriceAsk } from '../ledger/pricing.js';

/** What one request costs, per kind. */
export interface QuotaCost {
  requests?: number;
  images?: number;
  videoSeconds?: number;
  videoTasks?: number;
  /** Money, in millionths of the pricing currency: filled by the charge from `priced` when the caller has a budget. */
  budget?: number;
  /** What the request asks for, for the most it may cost (a money budget's reservation). */
  priced?: PriceAsk;
}

/** A kind of quota a request is charged against. */
export type QuotaKind = Exclude<keyof QuotaCost, 'priced'>;

/** Each kind's limit in `QuotaLimits`, and its name and unit as the caller is told them. */
export const QUOTA_KINDS: Record<QuotaKind, { limit: keyof QuotaLimits; name: QuotaState['name']; unit: string }> = {
  requests: { limit: 'requestsPerMinute', name: 'requests', unit: 'requests per minute' },
  images: { limit: 'imagesPerMinute', name: 'images', unit: 'images per minute' },
  videoSeconds: { limit: 'videoSecondsPerDay', name: 'video-seconds', unit: 'video-seconds per day' },
  videoTasks: { limit: 'concurrentVideoTasks', name: 'video-tasks', unit: 'video tasks running at once' },
  budget: { limit: 'budget', name: 'budget', unit: 'budget' },
};

/**
 * Whether a charge of `cost` counts `kind`: the caller has a limit for it and the request costs it
 * something. A budget is taken even at 0 reserved (tokens cannot be foreseen): it is settled to the
 * cost, and a caller already past it is refused.
 */
export function countsKind(kind: QuotaKind, cost: QuotaCost, limits: QuotaLimits): boolean {
  return ((cost[kind] ?? 0) > 0 || (kind === 'budget' && cost.budget !== undefined)) && limits[QUOTA_KINDS[kind].limit] !== undefined;
}

/** A caller's limit of a kind in the counter's unit: a money budget in millionths. */
export function limitOf(limits: QuotaLimits, kind: QuotaKind): number {
  const limit = limits[QUOTA_KINDS[kind].limit]!;
  return kind === 'budget' ? Math.floor(limit * MICROS) : limit;
}
