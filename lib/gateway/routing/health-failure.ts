// Which failures count against an upstream's health (docs/routing-and-health.md "What counts"): a
// connect failure, a timeout, a 5xx or an unreadable answer, a 429 (one with a Retry-After rests the
// upstream at once, for that long or, unreadable, for the cooldown), and the operator-account failures (the upstream refused the operator's key or account: 401, 403, an account
// block or exhausted quota, as each adapter reads its vendor's answer into these codes). A caller's
// error (400, content policy), the gateway's own limits and a client that left say nothing about it.
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
    return { account: false, ...(rest ? { rest } : {}), ...retryAfter(error) };
  }
  // the gateway's own failures (a full socket pool, a resolver mistake) are not the upstream's
  if (error.code === ERROR_CODES.upstreamBusy || error.code === ERROR_CODES.internalError) return 'neutral';
  return 'answered';
}

function retryAfter(error: GatewayError): { retryAfterMs?: number } {
  return error.retryAfterSeconds !== undefined ? { retryAfterMs: error.retryAfterSeconds * 1000 } : {};
}
