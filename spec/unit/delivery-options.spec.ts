// The `deliveries` option resolved (docs/configuration.md "deliveries"): the endpoint rules' defaults,
// one key of `disableAfter` keeping the other's default, and config errors that show the fix.
import { describe, expect, it } from 'vitest';
import { GatewayConfigError } from '../../lib/errors/config-error.js';
import { resolveDeliveries } from '../../lib/gateway/options/delivery-options.js';
import type { DeliveryOptions } from '../../lib/options/delivery-options.js';

const HOUR = 3_600_000;

describe('deliveries option', () => {
  it.each([
    { name: 'the defaults', given: undefined, attempts: 100, ms: 24 * HOUR, inFlight: 2 },
    { name: 'hours alone keeps the attempts default', given: { disableAfter: { hours: 6 } }, attempts: 100, ms: 6 * HOUR, inFlight: 2 },
    { name: 'attempts alone keeps the hours default', given: { disableAfter: { attempts: 10 } }, attempts: 10, ms: 24 * HOUR, inFlight: 2 },
    { name: 'half an hour', given: { disableAfter: { hours: 0.5 } }, attempts: 100, ms: HOUR / 2, inFlight: 2 },
    { name: 'perEndpointInFlight', given: { perEndpointInFlight: 5 }, attempts: 100, ms: 24 * HOUR, inFlight: 5 },
  ])('$name', ({ given, attempts, ms, inFlight }) => {
    expect(resolveDeliveries(given)).toMatchObject({ disableAfterAttempts: attempts, disableAfterMs: ms, perEndpointInFlight: inFlight, retentionMs: 7 * 24 * HOUR, maxEntries: 10_000 });
  });

  it.each([
    { given: { disableAfter: { hours: 0 } }, code: 'deliveries_value' },
    { given: { disableAfter: { hours: 'a day' } }, code: 'deliveries_value' },
    { given: { disableAfter: { attempts: 0 } }, code: 'deliveries_value' },
    { given: { disableAfter: { attempts: 2.5 } }, code: 'deliveries_value' },
    { given: { disableAfter: { days: 1 } }, code: 'deliveries_unknown' },
    { given: { disableAfter: true }, code: 'deliveries_type' },
    { given: { perEndpointInFlight: 0 }, code: 'deliveries_value' },
    { given: { perEndpointInFlight: 1001 }, code: 'deliveries_value' },
    { given: { inFlight: 2 }, code: 'deliveries_unknown' },
  ])('refuses $given with $code and a fix', ({ given, code }) => {
    let thrown: unknown;
    try {
      resolveDeliveries(given as unknown as DeliveryOptions);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GatewayConfigError);
    expect(thrown).toMatchObject({ code });
    expect(String((thrown as Error).message)).toContain('Fix:');
  });
});
