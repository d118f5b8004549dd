// The fallback policy (docs/architecture.md): the resolver's upstreams are tried in order, the next one only when
// the failed one certainly did not start the work (GatewayError.notStarted) and nothing was sent to
// the client yet, because a fallback after work began generates (and bills) the same images twice, or
// leaves an orphaned task running upstream beside the new one.
import { rejectionOf } from '../errors/rejection-of.js';
import { ERROR_CODES } from '../errors/error-codes.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Upstream } from '../types.js';
import type { AttemptInfo } from '../telemetry/telemetry.js';
import type { ResolvedOptions } from './options.js';
import { requestIdOf } from '../errors/request-id.js';

/** Everything secret an upstream carries, to be cut out of any error message it causes. */
export function secretsOf(upstream: Upstream): Array<string | undefined> {
  return [upstream.apiKey, upstream.secretAccessKey, upstream.accessKeyId, ...Object.values(upstream.headers ?? {})];
}

/**
 * Runs `attempt` on each upstream in turn until one answers or a failure rules out the next one.
 * Falls back on: connection refused, DNS failure, network unreachable, a connect that timed out
 * before a socket existed, a TLS handshake failure, and upstream 429, 503 and auth/quota refusals.
 * Never on: a timeout or reset after the request was written, 500/502/504, an unreadable answer,
 * a caller error (4xx), or a client that went away. An `attempt` makes one upstream call that
 * starts work (create, generate, forward), so the last failure tells whether work began. Each
 * attempt is one CLIENT span and one upstream-duration measurement, described by `info`.
 */
export function withFallback<T>(upstreams: readonly Upstream[], options: ResolvedOptions, info: AttemptInfo<T>, attempt: (upstream: Upstream) => Promise<T>): Promise<T> {
  // a promise chain, not an async loop: a suspended async frame (its registers, promise and
  // reactions) would wait beside every slow upstream call (docs/architecture.md "Performance": memory per held request)
  const attemptAt = (index: number): Promise<T> => {
    const upstream = upstreams[index]!;
    return rejectionOf(() => options.telemetry.attempt(upstream, index, info, () => attempt(upstream))).catch((caught: unknown) => {
      // an upstream may quote the request it got, the operator's key included
      const error = caught instanceof GatewayError ? caught.withoutSecrets(secretsOf(upstream)) : caught;
      const retry = error instanceof GatewayError && error.retryable && error.notStarted && index + 1 < upstreams.length;
      if (error instanceof GatewayError)
        logAttemptFailure(options, upstream, error, { attempt: index + 1, of: upstreams.length, retry, requestId: info.requestId ?? (info.request && requestIdOf(info.request)) });
      if (!retry) throw error;
      return attemptAt(index + 1);
    });
  };
  return attemptAt(0);
}

/**
 * Every failed attempt once, the last one included (the operator sees which upstream failed even when
 * no fallback followed). Only what identifies the failure: the message can quote the upstream's
 * answer, which may echo the request's image bytes. An internal_error (the resolver named a provider
 * that cannot serve the route) was logged where it was raised, with its cause. A client that went
 * away is not a GatewayError and not the upstream's failure.
 */
function logAttemptFailure(options: ResolvedOptions, upstream: Upstream, error: GatewayError, at: { attempt: number; of: number; retry: boolean; requestId?: string }): void {
  if (error.code === ERROR_CODES.internalError) return;
  const fields = {
    ...(at.requestId !== undefined ? { requestId: at.requestId } : {}),
    provider: upstream.provider,
    status: error.status,
    code: error.code,
    upstreamRequestId: error.upstreamRequestId,
    attempt: at.attempt,
    of: at.of,
  };
  options.logger.warn(fields, at.retry ? 'upstream failed, trying the next one' : 'upstream failed');
}
