// The `deliveries` option resolved (docs/configuration.md "deliveries"): defaults, checks with a fix.
// `false` turns the delivery log off; the log itself is gateway/deliveries/delivery-log.ts.
import { GatewayConfigError } from '../../errors/config-error.js';
import type { DeliveryOptions } from '../../options/delivery-options.js';

export interface ResolvedDeliveries {
  readonly retentionMs: number;
  readonly maxEntries: number;
}

const DAY_MS = 24 * 3600_000;
const DEFAULT_DELIVERIES = Object.freeze({ retentionDays: 7, maxEntries: 10_000 } satisfies Required<DeliveryOptions>);
const BOUNDS: Readonly<Record<keyof DeliveryOptions, readonly [number, number]>> = { retentionDays: [1, 365], maxEntries: [1, Number.MAX_SAFE_INTEGER] };

/** The log's settings, or undefined when `deliveries` is false. */
export function resolveDeliveries(given: DeliveryOptions | false | undefined): ResolvedDeliveries | undefined {
  if (given === false) return undefined;
  const example = 'deliveries: { retentionDays: 7, maxEntries: 10000 } (or false: no delivery log)';
  if (given !== undefined && (given === null || typeof given !== 'object' || Array.isArray(given))) {
    throw new GatewayConfigError('deliveries_type', 'options.deliveries must be an object or false.', example);
  }
  const options: DeliveryOptions = given ?? {};
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(BOUNDS, key)) throw new GatewayConfigError('deliveries_unknown', `Unknown deliveries option '${key}'.`, `use only: ${Object.keys(BOUNDS).join(', ')}.`);
  }
  const resolved = { ...DEFAULT_DELIVERIES };
  for (const key of Object.keys(BOUNDS) as (keyof DeliveryOptions)[]) {
    const value = options[key];
    if (value === undefined) continue;
    const [min, max] = BOUNDS[key];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new GatewayConfigError('deliveries_value', `deliveries.${key} must be a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ' up'}, got ${String(value)}.`, example);
    }
    resolved[key] = value;
  }
  return Object.freeze({ retentionMs: resolved.retentionDays * DAY_MS, maxEntries: resolved.maxEntries });
}
