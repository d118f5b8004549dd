// What the vendors may bill the operator for a request (docs/tenancy-and-billing.md "The books"): each
// upstream call that may start paid work is an attempt, recorded when it is made, and given its outcome
// once it is known. `made`: the vendor answered with its work (the images it returned, before the
// gateway's cap); `unknown`: the vendor may have made it (a 5xx, a timeout or a reset after the request
// was written, an unreadable answer, a client or an instance that went away mid-call), so the most it
// could have made counts; `refused`: the vendor answered before doing anything (a 4xx, a 429, a 503, a
// connection never made), so nothing counts.
import type { ProviderName, VendorAttempt, VendorOutcome } from '../../types.js';

export type { VendorAttempt, VendorOutcome, VendorWork } from '../../types.js';
export { outcomeOfFailure } from '../../errors/vendor-outcome.js';

/**
 * An attempt while it runs: its outcome is settled when the call ends, or read from the request's end
 * (reckoning.ts) when nobody settled it. A call that fans out (n concurrent vendor calls for n images)
 * records each of its calls in `calls` instead.
 */
export interface AttemptRecord {
  provider: ProviderName;
  id?: string;
  images?: number;
  seconds?: number;
  outcome?: VendorOutcome;
  calls?: VendorAttempt[];
}

/** Starts an attempt in `attempts` (made when a call that may start paid work is sent). */
export function startAttempt(attempts: AttemptRecord[], provider: ProviderName): AttemptRecord {
  const record: AttemptRecord = { provider };
  attempts.push(record);
  return record;
}
