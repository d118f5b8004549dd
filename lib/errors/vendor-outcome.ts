// How a vendor call that failed ended, for the vendor's bill (docs/tenancy-and-billing.md "The books"):
// `made` when the vendor had answered and what came after failed, `refused` when it refused before any
// work, else `unknown` (it may have made, and billed, the work). The same reading as the fallback
// rule's (gateway/fallback.ts): what may have started is never tried elsewhere, and counts as possibly
// made. A leaf: providers record each call of a fan-out with it (`recordCall`), the ledger reads it.
import { ERROR_CODES } from './error-codes.js';
import { GatewayError } from './gateway-error.js';
import type { ProviderName, VendorAttempt, VendorOutcome } from '../types.js';

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

/** One call of a fan-out, recorded by the provider that made it, with its outcome. */
export function recordCall(calls: VendorAttempt[] | undefined, provider: ProviderName, result: { images: number; id?: string } | { error: unknown }, asked: number): void {
  if (!calls) return;
  if ('error' in result) {
    const outcome = outcomeOfFailure(result.error);
    calls.push({ provider, images: outcome === 'refused' ? 0 : asked, outcome, ...(GatewayError.is(result.error) && result.error.upstreamRequestId ? { id: result.error.upstreamRequestId } : {}) });
  } else calls.push({ provider, images: result.images, outcome: 'made', ...(result.id ? { id: result.id } : {}) });
}
