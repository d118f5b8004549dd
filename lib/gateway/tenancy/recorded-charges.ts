// Charges settled away from the request that took them (docs/tenancy-and-billing.md "Settlement"): a
// lapsed Idempotency-Key's, which its lease recorded and another instance settles (kept-work/lapsed-keys.ts),
// and the charge work kept for a retry holds until its expiry (kept-work/kept-work-expiry.ts). Each is
// rebuilt as the charge it was (Quotas.recorded) and handed to the books as the work's `settleLater`:
// the books await it before the work's usage event, as they do a request's own late settlement.
import type { KeptWorkRecord } from '../../stores/idempotency/idempotency-store.js';
import { keptBookFields } from '../ledger/reckoning.js';
import type { Usage } from '../use-case.js';
import type { Quotas, RecordedCharge } from './quotas.js';
import { settleBooks } from './with-charge.js';

type Settlement = NonNullable<Usage['settleLater']>;

/**
 * The settlement of the charge a lapsed request recorded in its lease: the books its own request would
 * have settled it by (settleBooks): the images it is not charged for back, the budget to what it cost.
 */
export function recordedSettlement(quotas: Quotas, callerId: string, charged: RecordedCharge | undefined, usage: Usage): Settlement {
  const charge = quotas.recorded(callerId, charged ?? {});
  const cost = charged?.images !== undefined ? { images: charged.images } : {};
  return (end) => settleBooks(quotas, charge, cost, usage, end);
}

/**
 * The settlement of kept work nobody took: what its client lost by leaving is the tenant's, and the
 * charge it holds stays; what the operator absorbs (the vendor was slow, unless
 * `tenancy.chargeFailedWork`) comes back whole: its images, and the money held for them, fee and all.
 */
export function expiredKeptSettlement(quotas: Quotas, kept: KeptWorkRecord): Settlement {
  return async () => {
    const { absorbedImages } = keptBookFields(kept, 'expired', quotas.ledger);
    if (!absorbedImages) return;
    const charge = quotas.recorded(kept.caller.id, {
      images: kept.images,
      ...(kept.windowEnds?.images !== undefined ? { imagesWindowEnd: kept.windowEnds.images } : {}),
      ...(kept.budgetMicros !== undefined ? { budget: kept.budgetMicros } : {}),
      ...(kept.windowEnds?.budget !== undefined ? { budgetWindowEnd: kept.windowEnds.budget } : {}),
    });
    await charge.refund(['images'], { images: absorbedImages });
    await charge.settleBudget(0);
  };
}
