// The `deliveries` option resolved (docs/configuration.md "deliveries"): defaults, checks with a fix.
// `false` turns the delivery log off; the log itself is gateway/deliveries/delivery-log.ts, the
// endpoints it disables and enables gateway/deliveries/endpoints.ts.
import { GatewayConfigError } from '../../errors/config-error.js';
import type { DeliveryOptions, EndpointDisableOptions } from '../../options/delivery-options.js';

export interface ResolvedDeliveries {
  readonly retentionMs: number;
  readonly maxEntries: number;
  /** `disableAfter.attempts` */
  readonly disableAfterAttempts: number;
  /** `disableAfter.hours`, in ms */
  readonly disableAfterMs: number;
  readonly perEndpointInFlight: number;
}

const DAY_MS = 24 * 3600_000;
const HOUR_MS = 3600_000;
/** Attempts to one endpoint at once when nothing says otherwise (the log off included). */
export const DEFAULT_PER_ENDPOINT_IN_FLIGHT = 2;
const DEFAULT_DELIVERIES = Object.freeze({ retentionDays: 7, maxEntries: 10_000, perEndpointInFlight: DEFAULT_PER_ENDPOINT_IN_FLIGHT });
const DEFAULT_DISABLE_AFTER = Object.freeze({ hours: 24, attempts: 100 } satisfies Required<EndpointDisableOptions>);
type NumberKey = 'retentionDays' | 'maxEntries' | 'perEndpointInFlight';
const BOUNDS: Readonly<Record<NumberKey, readonly [number, number]>> = { retentionDays: [1, 365], maxEntries: [1, Number.MAX_SAFE_INTEGER], perEndpointInFlight: [1, 1000] };
const NAMES = [...Object.keys(BOUNDS), 'disableAfter'];
const EXAMPLE = 'deliveries: { retentionDays: 7, maxEntries: 10000, disableAfter: { hours: 24, attempts: 100 }, perEndpointInFlight: 2 } (or false: no delivery log)';

/** The log's settings, or undefined when `deliveries` is false. */
export function resolveDeliveries(given: DeliveryOptions | false | undefined): ResolvedDeliveries | undefined {
  if (given === false) return undefined;
  if (given !== undefined && !isObject(given)) throw new GatewayConfigError('deliveries_type', 'options.deliveries must be an object or false.', EXAMPLE);
  const options: DeliveryOptions = given ?? {};
  for (const key of Object.keys(options)) {
    if (!NAMES.includes(key)) throw new GatewayConfigError('deliveries_unknown', `Unknown deliveries option '${key}'.`, `use only: ${NAMES.join(', ')}.`);
  }
  const resolved: Record<NumberKey, number> = { ...DEFAULT_DELIVERIES };
  for (const key of Object.keys(BOUNDS) as NumberKey[]) {
    const value = options[key];
    if (value === undefined) continue;
    const [min, max] = BOUNDS[key];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new GatewayConfigError('deliveries_value', `deliveries.${key} must be a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ' up'}, got ${String(value)}.`, EXAMPLE);
    }
    resolved[key] = value;
  }
  const disableAfter = resolveDisableAfter(options.disableAfter);
  return Object.freeze({
    retentionMs: resolved.retentionDays * DAY_MS,
    maxEntries: resolved.maxEntries,
    disableAfterAttempts: disableAfter.attempts,
    disableAfterMs: Math.round(disableAfter.hours * HOUR_MS),
    perEndpointInFlight: resolved.perEndpointInFlight,
  });
}

/** `disableAfter`: one key given keeps the other's default. */
function resolveDisableAfter(given: EndpointDisableOptions | undefined): Required<EndpointDisableOptions> {
  if (given === undefined) return DEFAULT_DISABLE_AFTER;
  const example = 'deliveries: { disableAfter: { hours: 24, attempts: 100 } }';
  if (!isObject(given)) throw new GatewayConfigError('deliveries_type', 'deliveries.disableAfter must be an object.', example);
  for (const key of Object.keys(given)) {
    if (key !== 'hours' && key !== 'attempts') throw new GatewayConfigError('deliveries_unknown', `Unknown deliveries.disableAfter option '${key}'.`, 'use only: hours, attempts.');
  }
  const { hours = DEFAULT_DISABLE_AFTER.hours, attempts = DEFAULT_DISABLE_AFTER.attempts } = given;
  if (typeof hours !== 'number' || !Number.isFinite(hours) || hours < 0.001 || hours > 8760) {
    throw new GatewayConfigError('deliveries_value', `deliveries.disableAfter.hours must be a number from 0.001 to 8760, got ${String(hours)}.`, example);
  }
  if (typeof attempts !== 'number' || !Number.isSafeInteger(attempts) || attempts < 1 || attempts > 1_000_000) {
    throw new GatewayConfigError('deliveries_value', `deliveries.disableAfter.attempts must be a whole number from 1 to 1000000, got ${String(attempts)}.`, example);
  }
  return { hours, attempts };
}

function isObject(value: unknown): value is object {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
