// The one place a request is charged against the caller's quotas and given back what it did not use
// (docs/architecture.md "One use-case shape"; docs/tenancy-and-billing.md). Charged after validation and
// the resolver, before any upstream call; a refused charge is the quota's 429 and nothing runs.
// - the work failed: everything but the request itself comes back (images, video-seconds, the task
//   slot), except images the upstream may have made (an unknown outcome, or a failure after its answer)
// - the work answered fewer images than charged: the rest come back (the quota counts what was made)
import type { Caller } from '../../types.js';
import { type Outcome, type Usage, mayHaveBeenPaid, settle } from '../use-case.js';
import { type QuotaCharge, type QuotaCost, Quotas } from './quotas.js';

// a failed request still counts as a request; everything it would have produced is given back
const REFUNDED_ON_FAILURE = ['images', 'videoSeconds', 'videoTasks'] as const;

/** When a successful outcome is settled: at once, or by the work itself later (a stream, when it ends). */
export type Settlement = 'at-answer' | 'by-work';

/**
 * Charges `cost`, runs `work` with the charge, and settles: the outcome carries `usage`, with the
 * RateLimit fields of the charge. Work whose answer is still producing when it returns (a stream)
 * says `by-work` and settles itself with `refundUnproduced`; a failure is always settled here.
 */
export function withCharge<A>(quotas: Quotas, caller: Caller, cost: QuotaCost, usage: Usage, work: (charge: QuotaCharge) => Promise<A>, settlement: Settlement = 'at-answer'): Promise<Outcome<A>> {
  // no quotas configured: nothing to take or give back, and no promise spent on it per request
  if (!quotas.enabled) return settle(usage, () => work(Quotas.nothing));
  return settle(usage, () => quotas.charge(caller, cost)).then((charged) => {
    if (!charged.ok) return { ok: false, error: charged.error, usage };
    const charge = charged.answer;
    usage.rateLimit = charge.rateLimit;
    return settle(usage, () => work(charge)).then((outcome) => {
      if (outcome.ok && settlement === 'by-work') return outcome;
      return settleCharge(charge, cost, outcome).then(() => outcome);
    });
  });
}

/** Gives back what the outcome did not use (never throws: a refund is best effort, see quotas.ts). */
function settleCharge(charge: QuotaCharge, cost: QuotaCost, outcome: Outcome<unknown>): Promise<void> {
  // nothing charged (quotas off, or no limit for these kinds): nothing to give back
  if (charge.taken.length === 0) return Promise.resolve();
  if (!outcome.ok) {
    // the upstream may have made the images (use-case.ts mayHaveBeenPaid): they stay charged, or a
    // tenant could make unbilled generations by failing them on purpose; the rest comes back
    if (mayHaveBeenPaid(outcome.usage, outcome.error)) return charge.refund(REFUNDED_ON_FAILURE.filter((kind) => kind !== 'images'));
    return charge.refund(REFUNDED_ON_FAILURE);
  }
  return refundUnproduced(charge, cost, outcome.usage.images);
}

/** The images charged but not answered (a smaller group, a stream that ended early) come back. */
export function refundUnproduced(charge: QuotaCharge, cost: QuotaCost, produced: number): Promise<void> {
  if (charge.taken.length === 0) return Promise.resolve();
  const asked = cost.images ?? 0;
  return produced < asked ? charge.refund(['images'], { images: asked - produced }) : Promise.resolve();
}
