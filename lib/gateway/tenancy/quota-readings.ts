// What a quota counter's reading tells the caller (docs/tenancy-and-billing.md): the RateLimit fields
// of an answer, and the 429 of a limit a charge passes, worded in the kind's unit (a money budget in
// the pricing currency). Quotas (quotas.ts) makes both, for a charge and for a quote alike.
import type { RateLimiterRes } from 'rate-limiter-flexible';
import { QuotaExceededError, type RateLimitFields } from '../../errors/quota-exceeded-error.js';
import { MICROS } from '../ledger/pricing.js';
import { QUOTA_KINDS, type QuotaKind } from './quota-cost.js';

/** A counter as a charge left it: what its window holds and when it resets. */
type Counted = Pick<RateLimiterRes, 'consumedPoints' | 'msBeforeNext'>;

/** What is left of `limit` after the charge, and when it resets (`window` in seconds; none for a concurrency limit). */
export function rateLimitFieldsOf(kind: QuotaKind, limit: number, window: number | undefined, result: Counted): RateLimitFields {
  return {
    name: QUOTA_KINDS[kind].name,
    quota: limit,
    ...(window !== undefined ? { windowSeconds: window } : {}),
    remaining: Math.max(0, limit - result.consumedPoints),
    resetSeconds: window === undefined ? 0 : Math.ceil(result.msBeforeNext / 1000),
  };
}

/** The 429 of a charge of `asked` that took the counter past `limit`; a budget is told in `currency`. */
export function quotaRefusalOf(kind: QuotaKind, limit: number, window: number | undefined, result: Counted, asked: number, currency: string | undefined): QuotaExceededError {
  const { name, unit } = QUOTA_KINDS[kind];
  const remaining = Math.max(0, limit - (result.consumedPoints - asked));
  // a concurrency slot frees when a task ends, which no clock predicts: a minute is an honest hint
  const resetSeconds = window === undefined ? 60 : Math.max(1, Math.ceil(result.msBeforeNext / 1000));
  if (kind === 'budget') {
    const money = (micros: number): string => `${(micros / MICROS).toFixed(2)} ${currency ?? ''}`.trim();
    const message =
      asked > limit
        ? `This request may cost up to ${money(asked)}, more than your whole budget of ${money(limit)} per ${window} s.`
        : `Budget exceeded: ${money(limit)} per ${window} s (budget); this request may cost up to ${money(asked)} and ${money(remaining)} remain. Retry in ${resetSeconds} s.`;
    return new QuotaExceededError(message, { name, quota: limit, ...(window !== undefined ? { windowSeconds: window } : {}), remaining, resetSeconds });
  }
  const message =
    asked > limit
      ? `This request needs ${asked} of your ${limit} ${unit}, more than the whole quota.`
      : `Quota exceeded: ${limit} ${unit} (${name}); this request needs ${asked} and ${remaining} remain. Retry in ${resetSeconds} s.`;
  return new QuotaExceededError(message, { name, quota: limit, ...(window !== undefined ? { windowSeconds: window } : {}), remaining, resetSeconds });
}
