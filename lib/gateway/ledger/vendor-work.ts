// What the vendors may bill the operator for a request (docs/tenancy-and-billing.md "The books"): each
// upstream call that may start paid work is an attempt, recorded when it is made, and given its outcome
// once it is known. `made`: the vendor answered with its work (the images it returned, before the
// gateway's cap); `unknown`: the vendor may have made it (a 5xx, a timeout or a reset after the request
// was written, an unreadable answer, a client or an instance that went away mid-call), so the most it
// could have made counts; `refused`: the vendor answered before doing anything (a 4xx, a 429, a 503, a
// connection never made), so nothing counts.
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ProviderName, VendorAttempt, VendorOutcome } from '../../types.js';

export type { VendorAttempt, VendorOutcome, VendorWork } from '../../types.js';

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

// the vendor answered, and what came after failed: its images were made (their count is known)
const ANSWERED: ReadonlySet<string> = new Set([ERROR_CODES.imageDownloadFailed, ERROR_CODES.storageFailed, ERROR_CODES.resultNotKept]);

// answers a vendor gives before it does any work: nothing was made
const REFUSALS: ReadonlySet<string> = new Set([
  ERROR_CODES.invalidRequest,
  ERROR_CODES.contentPolicyViolation,
  ERROR_CODES.rateLimitExceeded,
  ERROR_CODES.upstreamAuthFailed,
  ERROR_CODES.upstreamQuotaExceeded,
  ERROR_CODES.upstreamBusy,
  ERROR_CODES.modelNotFound,
  ERROR_CODES.notFound,
]);

/**
 * The outcome of a call that failed with `error`, for the vendor's bill: `made` when the vendor had
 * answered (what failed came after), `refused` when it refused before any work, else `unknown`. The
 * same reading as the fallback rule's (fallback.ts): what may have started is never tried elsewhere,
 * and is counted here as possibly made.
 */
export function outcomeOfFailure(error: unknown): VendorOutcome {
  // a client or an instance that went away mid-call, or a failure of the gateway's own
  if (!GatewayError.is(error)) return 'unknown';
  if (error.notStarted) return 'refused';
  if (ANSWERED.has(error.code)) return 'made';
  if (REFUSALS.has(error.code)) return 'refused';
  // no image in a 2xx answer: the vendor answered, and made nothing it bills as an image
  if (error.code === ERROR_CODES.upstreamNoImage) return 'refused';
  return 'unknown';
}

/** Starts an attempt in `attempts` (made when a call that may start paid work is sent). */
export function startAttempt(attempts: AttemptRecord[], provider: ProviderName): AttemptRecord {
  const record: AttemptRecord = { provider };
  attempts.push(record);
  return record;
}

/** One call of a fan-out, recorded by the provider that made it, with its outcome. */
export function recordCall(calls: VendorAttempt[] | undefined, provider: ProviderName, result: { images: number; id?: string } | { error: unknown }, asked: number): void {
  if (!calls) return;
  if ('error' in result) {
    const outcome = outcomeOfFailure(result.error);
    calls.push({ provider, images: outcome === 'refused' ? 0 : asked, outcome, ...(GatewayError.is(result.error) && result.error.upstreamRequestId ? { id: result.error.upstreamRequestId } : {}) });
  } else calls.push({ provider, images: result.images, outcome: 'made', ...(result.id ? { id: result.id } : {}) });
}
