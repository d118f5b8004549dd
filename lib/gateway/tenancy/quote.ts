// The quote of a create sent with `Prefer: dry-run` (docs/tenancy-and-billing.md "Quotes before work"):
// made from what the real request would be charged (its QuotaCost) and the caller's limits as they
// stand (Quotas.peek), at the point where the real request would charge. A limit the charge would
// pass over is its own 429, thrown; otherwise the cost by the price table (the amount a money budget
// reserves), what each counting quota would take, and the money left after it.
import type { Quote } from '../../types.js';
import { MICROS, type Pricing } from '../ledger/pricing.js';
import type { QuotaCost, QuotaKind } from './quota-cost.js';
import type { QuotaPeek } from './quotas.js';

/** A use case's answer when it was asked for a quote: the routes write it as the whole answer. */
export interface Quoted {
  readonly kind: 'quote';
  readonly quote: Quote;
}

// the quote's field for each quota a request counts (the JSON body's own snake_case)
const RESERVED_FIELDS = { requests: 'requests', images: 'images', videoSeconds: 'video_seconds', videoTasks: 'video_tasks' } as const satisfies Record<
  Exclude<QuotaKind, 'budget'>,
  keyof Quote['reserved']
>;

/**
 * The quote of `cost` for `model`, against the caller's `limits` as peeked (none: no quotas). Throws
 * the 429 of the first limit the charge would refuse, as the charge itself would.
 */
export function quoteOf(model: string, cost: QuotaCost, pricing: Pricing | undefined, limits: readonly QuotaPeek[]): Quote {
  const refused = limits.find((limit) => !limit.passes);
  if (refused?.refusal) throw refused.refusal;
  const currency = pricing?.currency ?? '';
  const money = (micros: number): { amount: number; currency: string } => ({ amount: micros / MICROS, currency });
  const most = cost.priced && pricing ? pricing.mostMicros(cost.priced) : undefined;
  const reserved: Quote['reserved'] = {};
  let remaining: Quote['budget_remaining'] = null;
  for (const limit of limits) {
    if (limit.kind === 'budget') {
      remaining = money(limit.remaining);
      if (limit.charged) reserved.budget = money(limit.asked);
    } else if (limit.charged) {
      reserved[RESERVED_FIELDS[limit.kind]] = limit.asked;
    }
  }
  return { object: 'quote', model, cost: most === undefined ? null : money(most), reserved, budget_remaining: remaining };
}

/** Whether a use case's answer is a quote. */
export function isQuoted(answer: object): answer is Quoted {
  return (answer as { kind?: unknown }).kind === 'quote';
}
