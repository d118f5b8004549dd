// What an operator sees of upstream health (docs/routing-and-health.md "Operator signals" and
// "Seeing it"): the signals of a state change (onUpstreamHealth, a log line, a metric, the shared
// store's message) and one upstream's entry of `router.health()`. Run on a change or a report, never
// on a request's path.
import type { UpstreamCallerState, UpstreamHealthEvent, UpstreamHealthReport, UpstreamIdentity } from '../../options/routing-options.js';
import type { BreakerState, Transition } from './circuit-breaker.js';
import type { SharedHealth } from './shared-health.js';
import type { Logger } from '../../options/host-hooks.js';
import type { Telemetry } from '../../telemetry/telemetry.js';

/** Where the signals go: the log, the metrics, the operator's hook. */
export interface HealthSignals {
  logger: Logger;
  telemetry: Telemetry;
  onUpstreamHealth?: (event: UpstreamHealthEvent) => void;
}

/**
 * The operator's signals of a state change: `onUpstreamHealth`, a log line, a metric, and (this
 * instance's own changes, given `shared`) the message to the other instances.
 */
export function announce(key: string, identity: UpstreamIdentity, moved: Transition, signals: HealthSignals, shared?: SharedHealth): void {
  const event: UpstreamHealthEvent = {
    upstream: { ...identity },
    state: moved.state,
    reason: moved.reason,
    since: new Date(moved.since),
    ...(moved.openUntil !== undefined ? { openUntil: new Date(moved.openUntil) } : {}),
    ...(moved.caller !== undefined ? { caller: moved.caller } : {}),
  };
  const fields = {
    upstream: identity,
    state: moved.state,
    reason: moved.reason,
    ...(event.openUntil ? { openUntil: event.openUntil.toISOString() } : {}),
    ...(moved.caller !== undefined ? { caller: moved.caller } : {}),
  };
  const { logger } = signals;
  if (moved.caller !== undefined && moved.state === 'open')
    logger.warn(fields, `upstream ${identity.provider} ${identity.baseURL} is open for caller ${moved.caller} alone after its own failures: the other callers still use it`);
  else if (moved.caller !== undefined) logger.info(fields, `upstream ${identity.provider} ${identity.baseURL} is closed for caller ${moved.caller} again`);
  else if (moved.reason === 'account') logger.error(fields, `the upstream refused the operator's account: ${identity.provider} ${identity.baseURL} is open for every tenant`);
  else if (moved.state === 'open') logger.warn(fields, `upstream ${identity.provider} ${identity.baseURL} is open: requests go to the next upstream`);
  else logger.info(fields, `upstream ${identity.provider} ${identity.baseURL} is ${moved.state}`);
  signals.telemetry.recordUpstreamHealth(moved.state, moved.reason, identity.provider);
  if (signals.onUpstreamHealth) {
    try {
      signals.onUpstreamHealth(event);
    } catch (error) {
      logger.error({ error: error instanceof Error ? error.message : String(error) }, 'onUpstreamHealth threw; the gateway ignores it');
    }
  }
  if (moved.state !== 'half-open')
    shared?.publish({
      key,
      upstream: identity,
      state: moved.state,
      reason: moved.reason,
      since: moved.since,
      ...(moved.openUntil !== undefined ? { openUntil: moved.openUntil } : {}),
      ...(moved.caller !== undefined ? { caller: moved.caller } : {}),
    });
}

/** One upstream's entry of router.health(): its state now, with the callers it is open for alone. */
export function reportOf(identity: UpstreamIdentity, breaker: BreakerState, now: number): UpstreamHealthReport {
  const state = breaker.state === 'open' && now >= breaker.openUntil ? 'half-open' : breaker.state;
  return {
    upstream: { ...identity },
    state,
    failures: breaker.failures,
    ...(breaker.latencyMs !== undefined ? { latencyMs: Math.round(breaker.latencyMs * 10) / 10 } : {}),
    ...(state === 'open' ? { openUntil: new Date(breaker.openUntil) } : {}),
    ...(breaker.reason ? { reason: breaker.reason, since: new Date(breaker.since) } : {}),
    ...closingsOf(breaker, now),
  };
}

/** The callers an upstream is open for alone, now, for health(). */
function closingsOf(breaker: BreakerState, now: number): { openFor?: UpstreamCallerState[] } {
  if (breaker.callers.size === 0) return {};
  const openFor: UpstreamCallerState[] = [];
  for (const [caller, own] of breaker.callers) if (now < own.openUntil) openFor.push({ caller, failures: own.failures, since: new Date(own.since), openUntil: new Date(own.openUntil) });
  return openFor.length > 0 ? { openFor } : {};
}
