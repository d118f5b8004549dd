// The skipping clock of the testing entry (docs/contributing.md "The clock of the specs"): the gateway's
// waits end at once, in the order of their due times, and the clock's time moves on to each due time.
import { afterEach, describe, expect, it } from 'vitest';
import { clock } from '../../lib/clock.js';
import { type SkippingClock, useSkippingClock } from '../../lib/testing/index.js';

let installed: SkippingClock | undefined;
afterEach(() => installed?.restore());

const wait = (ms: number, label: string, order: string[]): Promise<number> =>
  new Promise((resolve) =>
    clock().after(ms, () => {
      order.push(label);
      resolve(clock().now());
    }),
  );

describe('the skipping clock', () => {
  it('ends a wait of a minute at once, with the clock a minute on', async () => {
    installed = useSkippingClock();
    const before = clock().now();
    const realBefore = Date.now();
    const at = await wait(60_000, 'minute', []);
    expect(at - before).toBeGreaterThanOrEqual(60_000);
    // real time barely moved (far less than the minute skipped)
    expect(Date.now() - realBefore).toBeLessThan(30_000);
    expect(installed.skipped()).toBeGreaterThan(59_000);
  });

  it.each([
    [
      [3_000, 1_000, 2_000],
      ['1000', '2000', '3000'],
    ],
    [
      [500, 500, 10],
      ['10', '500', '500'],
    ],
    [
      [0, 5_000],
      ['0', '5000'],
    ],
  ])('waits of %j end in the order of their due times', async (delays, expected) => {
    installed = useSkippingClock();
    const order: string[] = [];
    await Promise.all(delays.map((ms) => wait(ms, String(ms), order)));
    expect(order).toEqual(expected);
  });

  it('moves on only to the latest due time when waits run side by side', async () => {
    installed = useSkippingClock();
    const start = clock().now();
    await Promise.all([wait(2_000, 'a', []), wait(2_000, 'b', []), wait(2_000, 'c', [])]);
    // three waits of 2 s at once are 2 s of the clock's time, not 6
    expect(clock().now() - start).toBeLessThan(6_000);
    expect(clock().now() - start).toBeGreaterThanOrEqual(2_000);
  });

  it('a cancelled wait never runs', async () => {
    installed = useSkippingClock();
    const order: string[] = [];
    const cancel = clock().after(1_000, () => order.push('cancelled'));
    cancel();
    await wait(2_000, 'kept', order);
    expect(order).toEqual(['kept']);
  });

  it('restore() puts the system clock back', () => {
    installed = useSkippingClock();
    installed.restore();
    installed = undefined;
    expect(Math.abs(clock().now() - Date.now())).toBeLessThan(1_000);
  });
});
