// The fallback policy (docs/architecture.md): the resolver's upstreams are tried in order, the next one only when
// the failed one certainly did not start the work (GatewayError.notStarted) and nothing was sent to
// the client yet, because a fallback after work began generates (and bills) the same images twice, or
// leaves an orphaned task running upstream beside the new one. Which upstreams are in the list, and in
// what order, is routing's (docs/routing-and-health.md): it skips the open ones, never the rule.
import { rejectionOf } from '../../errors/rejection-of.js';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Upstream } from '../../types.js';
import type { AttemptInfo } from '../../telemetry/telemetry.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { type AttemptBooks, attemptEnded, nextAttemptAt } from '../ledger/vendor-work.js';
import { requestIdOf } from '../../errors/request-id.js';
import { listStrategy } from './resolve-upstreams.js';
import type { PriceOf } from './upstream-health.js';

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
 *
 * Routing (docs/routing-and-health.md) orders the list by its strategy and skips an upstream whose
 * breaker is open (or whose half-open trial is taken); every outcome feeds its health. The rule above
 * is unchanged: health only removes upstreams from the list, it never adds an attempt after work may
 * have begun. `last` tells the attempt that no usable upstream follows it. With none usable at all,
 * the caller gets 503 `upstream_unavailable` and nothing is sent.
 *
 * The one runner of every upstream call that may start paid work, so the one place each attempt gets
 * the id the vendor answered (`books`, docs/tenancy-and-billing.md "The books"): from its answer or from
 * its failure, whatever the outcome, a refusal the rule passed over included.
 */
export function withFallback<T>(
  upstreams: readonly Upstream[],
  options: ResolvedOptions,
  info: AttemptInfo<T>,
  books: AttemptBooks<T>,
  attempt: (upstream: Upstream, last: boolean) => Promise<T>,
): Promise<T> {
  const health = options.routing;
  const { route, model } = info;
  const strategy = listStrategy(upstreams) ?? health.settings.strategy;
  // the caller's id: an upstream closed to it alone by its own failures is skipped for it only (docs/routing-and-health.md "Whose failure")
  const caller = info.tenant;
  const order = health.order(upstreams, route, model, strategy, strategy === 'price' ? priceOfRequest(options, info) : undefined, caller);
  let skipped: string[] | undefined;
  let tried = 0;
  // whether an upstream after `position` would be admitted now: a fallback has somewhere to go
  const usableAfter = (position: number): boolean => {
    for (let next = position + 1; next < order.length; next++) if (health.usable(order[next]!, route, model, caller)) return true;
    return false;
  };
  // a promise chain, not an async loop: a suspended async frame (its registers, promise and
  // reactions) would wait beside every slow upstream call (docs/architecture.md "Performance": memory per held request)
  const attemptAt = (position: number, failure: unknown, waited = false): Promise<T> => {
    if (position >= order.length) {
      // the last failure stands; with no attempt at all, every upstream was open
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the last attempt's own failure, passed on as it was thrown
      if (tried > 0) return Promise.reject(failure);
      const until = health.soonestOpenUntil(order, route, model, caller);
      return Promise.reject(GatewayError.upstreamUnavailable(model, until === undefined ? undefined : (until - health.settings.now()) / 1000));
    }
    const upstream = order[position]!;
    const admission = health.admit(upstream, route, model, caller);
    if (!admission) {
      // its trial is the gateway's health read, under way: with nowhere else to go, this request waits
      // for it rather than being refused because a trial runs (docs/routing-and-health.md "The trial")
      const reading = waited ? undefined : health.reading(upstream, route, model);
      if (reading && !usableAfter(position)) return reading.then(() => attemptAt(position, failure, true));
      (skipped ??= []).push(`${upstream.provider} ${upstream.baseURL}`);
      return attemptAt(position + 1, failure);
    }
    const index = tried++;
    const last = !usableAfter(position);
    const described = options.telemetry.enabled ? { ...info, routing: { selectedBy: admission.as === 'trial' ? 'trial' : index > 0 ? 'fallback' : strategy, skipped: skipped ?? [] } } : info;
    const started = performance.now();
    // the attempt this call records (use-case.ts `attempting`) is the next one of the books
    const booked = nextAttemptAt(books);
    return rejectionOf(() => options.telemetry.attempt(upstream, index, described, () => attempt(upstream, last))).then(
      (answer) => {
        attemptEnded(books, booked, { answer });
        health.succeeded(admission, performance.now() - started);
        return answer;
      },
      (caught: unknown) => {
        attemptEnded(books, booked, { error: caught });
        health.failed(admission, caught);
        // an upstream may quote the request it got, the operator's key included
        const error = caught instanceof GatewayError ? caught.withoutSecrets(secretsOf(upstream)) : caught;
        const retry = error instanceof GatewayError && error.retryable && error.notStarted && !last;
        if (error instanceof GatewayError)
          logAttemptFailure(options, upstream, error, { attempt: index + 1, of: upstreams.length, retry, requestId: info.requestId ?? (info.request && requestIdOf(info.request)) });
        if (!retry) throw error;
        return attemptAt(position + 1, error);
      },
    );
  };
  return attemptAt(0, undefined);
}

/** The `'price'` strategy's price of this request on an upstream model: the pricing table's most it may cost. */
function priceOfRequest(options: ResolvedOptions, info: Pick<AttemptInfo, 'model' | 'choices'>): PriceOf {
  return (upstreamModel) =>
    options.pricing?.mostMicros({ model: upstreamModel, ...(info.choices !== undefined ? { images: info.choices } : {}) }) ?? options.pricing?.mostMicros({ model: info.model });
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
