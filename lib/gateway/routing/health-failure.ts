// Which failures count against an upstream's health (docs/routing-and-health.md "What counts"): a
// connect failure, a timeout, a 5xx or an unreadable answer, a 429 (one with a Retry-After rests the
// upstream at once, for that long or, unreadable, for the cooldown), and the operator-account failures (the upstream refused the operator's key or account: 401, 403, an account
// block or exhausted quota, as each adapter reads its vendor's answer into these codes). A caller's
// error (400, content policy), the gateway's own limits and a client that left say nothing about it.
// A failure that an answer to the request itself may have caused (a 5xx, a timeout or reset once the
// request was written, an unreadable answer) is the caller's own until enough callers meet it
// ("Whose failure"): one tenant's poisoned prompt must not open the upstream for every tenant.
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { HealthFailure } from './circuit-breaker.js';

const ACCOUNT: ReadonlySet<string> = new Set([ERROR_CODES.upstreamAuthFailed, ERROR_CODES.upstreamQuotaExceeded]);
const TRANSIENT: ReadonlySet<string> = new Set([
  ERROR_CODES.upstreamError,
  ERROR_CODES.upstreamUnreachable,
  ERROR_CODES.upstreamTimeout,
  ERROR_CODES.upstreamBadResponse,
  ERROR_CODES.rateLimitExceeded,
]);

/** The health failure `error` is, or `'answered'` (the upstream is up), or `'neutral'` (it tells nothing). */
export function healthOutcomeOf(error: unknown): HealthFailure | 'answered' | 'neutral' {
  if (!GatewayError.is(error)) return 'neutral';
  if (ACCOUNT.has(error.code)) return { account: true, ...retryAfter(error) };
  if (TRANSIENT.has(error.code)) {
    // the vendor named its wait: honoured at once rather than after `failures` more refusals
    const rest = error.code === ERROR_CODES.rateLimitExceeded && (error.retryAfterSeconds !== undefined || error.retryAfterUnreadable === true);
    return { account: false, ...(rest ? { rest } : {}), ...(callerOwn(error) ? { callerOwn: true } : {}), ...retryAfter(error) };
  }
  // the gateway's own failures (a full socket pool, a resolver mistake) are not the upstream's
  if (error.code === ERROR_CODES.upstreamBusy || error.code === ERROR_CODES.internalError) return 'neutral';
  return 'answered';
}

// a connect failure (nothing of the request reached the vendor) and a 429 speak for every caller
function callerOwn(error: GatewayError): boolean {
  if (error.code === ERROR_CODES.upstreamError || error.code === ERROR_CODES.upstreamBadResponse) return true;
  return (error.code === ERROR_CODES.upstreamTimeout || error.code === ERROR_CODES.upstreamUnreachable) && !error.notStarted;
}

function retryAfter(error: GatewayError): { retryAfterMs?: number } {
  return error.retryAfterSeconds !== undefined ? { retryAfterMs: error.retryAfterSeconds * 1000 } : {};
}
