// The one place a request is charged against the caller's quotas and given back what it did not use
// (docs/architecture.md "One use-case shape"; docs/tenancy-and-billing.md). Charged after validation and
// the resolver, before any upstream call; a refused charge is the quota's 429 and nothing runs.
// - the work failed: everything but the request itself comes back (images, video-seconds, the task
//   slot), except images the upstream may have made (an unknown outcome, or a failure after its answer)
// - the work answered fewer images than charged: the rest come back (the quota counts what was made)
// - a money budget reserved the most the request may cost: it is settled to the cost of what was
//   made (a video task's at its terminal state, task-usage.ts)
// A dry run (`Prefer: dry-run`, docs/tenancy-and-billing.md "Quotes before work") reaches this same
// point, validated and resolved, and is answered the quote of this charge instead: the limits peeked,
// not consumed, and the work never run.
import type { Caller } from '../../types.js';
import { Pricing, type PricedWork } from './pricing.js';
import { type Outcome, type Usage, mayHaveBeenPaid, settle } from '../use-case.js';
import { type QuotaCharge, type QuotaCost, Quotas } from './quotas.js';
import { type Quoted, quoteOf } from './quote.js';

// a failed request still counts as a request; everything it would have produced is given back
const REFUNDED_ON_FAILURE = ['images', 'videoSeconds', 'videoTasks'] as const;

/** When a successful outcome is settled: at once, or by the work itself later (a stream, when it ends). */
export type Settlement = 'at-answer' | 'by-work';

/**
 * Charges `cost`, runs `work` with the charge, and settles: the outcome carries `usage`, with the
 * RateLimit fields of the charge. Work whose answer is still producing when it returns (a stream)
 * says `by-work` and settles itself with `refundUnproduced`; a failure is always settled here.
 * `dryRun` (the request asked for a quote): nothing is charged and `work` does not run; the answer
 * is the quote, or the charge's own 429.
 */
export function withCharge<A>(quotas: Quotas, caller: Caller, cost: QuotaCost, usage: Usage, work: (charge: QuotaCharge) => Promise<A>, settlement?: Settlement): Promise<Outcome<A>>;
export function withCharge<A>(
  quotas: Quotas,
  caller: Caller,
  cost: QuotaCost,
  usage: Usage,
  work: (charge: QuotaCharge) => Promise<A>,
  settlement: Settlement,
  dryRun: boolean | undefined,
): Promise<Outcome<A | Quoted>>;
export function withCharge<A>(
  quotas: Quotas,
  caller: Caller,
  cost: QuotaCost,
  usage: Usage,
  work: (charge: QuotaCharge) => Promise<A>,
  settlement: Settlement = 'at-answer',
  dryRun?: boolean,
): Promise<Outcome<A | Quoted>> {
  if (dryRun) return settle(usage, () => quotas.peek(caller, cost).then((limits): Quoted => ({ kind: 'quote', quote: quoteOf(usage.model, cost, quotas.pricing, limits) })));
  // no quotas configured: nothing to take or give back, and no promise spent on it per request
  if (!quotas.enabled) return settle(usage, () => work(Quotas.nothing));
  return settle(usage, () => quotas.charge(caller, cost)).then((charged) => {
    if (!charged.ok) return { ok: false, error: charged.error, usage };
    const charge = charged.answer;
    usage.rateLimit = charge.rateLimit;
    return settle(usage, () => work(charge)).then((outcome) => {
      if (outcome.ok && settlement === 'by-work') return outcome;
      return settleCharge(quotas, charge, cost, outcome).then(() => outcome);
    });
  });
}

/** Gives back what the outcome did not use (never throws: a refund is best effort, see quotas.ts). */
function settleCharge(quotas: Quotas, charge: QuotaCharge, cost: QuotaCost, outcome: Outcome<unknown>): Promise<void> {
  // nothing charged (quotas off, or no limit for these kinds): nothing to give back
  if (charge.taken.length === 0) return Promise.resolve();
  if (!outcome.ok) {
    // the upstream may have made the images (use-case.ts mayHaveBeenPaid): they, and the money they
    // may cost, stay charged, or a tenant could make unbilled generations by failing them on purpose
    if (mayHaveBeenPaid(outcome.usage, outcome.error)) return charge.refund(REFUNDED_ON_FAILURE.filter((kind) => kind !== 'images'));
    return charge.refund([...REFUNDED_ON_FAILURE, 'budget']);
  }
  return settleProduced(quotas, charge, cost, outcome.usage);
}

/**
 * After a successful answer (or a stream's end): the images charged but not answered come back, and a
 * money budget is settled to what the work cost. A video task's budget stays reserved until the task
 * ends (task-usage.ts settles it with what Ark reports).
 */
export function settleProduced(quotas: Quotas, charge: QuotaCharge, cost: QuotaCost, usage: Usage): Promise<void> {
  if (charge.taken.length === 0) return Promise.resolve();
  const asked = cost.images ?? 0;
  const images = usage.images < asked ? charge.refund(['images'], { images: asked - usage.images }) : Promise.resolve();
  if (charge.budget === undefined || cost.videoTasks !== undefined || !quotas.pricing) return images;
  const actual = Pricing.micros(quotas.pricing.costOf(pricedWork(usage, 200))) ?? 0;
  return images.then(() => charge.settleBudget(actual));
}

/** What a use case did, as the pricing reads it. */
export function pricedWork(usage: Usage, status: number): PricedWork {
  return {
    model: usage.model,
    status,
    images: usage.images,
    ...(usage.imageSizes ? { imageSizes: usage.imageSizes } : {}),
    ...(usage.upstreamUsage ? { upstreamUsage: usage.upstreamUsage } : {}),
    ...(usage.tokens ? { tokens: usage.tokens } : {}),
    ...(usage.imageQuality !== undefined ? { imageQuality: usage.imageQuality } : {}),
  };
}
