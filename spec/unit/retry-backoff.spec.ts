// equalJitterBackoff (lib/gateway/tasks/retry-backoff.ts): the delay before a retry of a task poll or a
// callback delivery. The random source is injected, so every row is exact.
import { describe, expect, it } from 'vitest';
import { equalJitterBackoff } from '../../lib/gateway/tasks/retry-backoff.js';

// the defaults of the `callbacks` option: retryBaseMs 2 s, retryMaxMs 5 min
const DEFAULTS = { baseMs: 2_000, maxMs: 300_000 };

describe('equalJitterBackoff', () => {
  it.each([
    // retry, random, delay: the ceiling doubles per retry; the delay is half of it plus random × half
    { retry: 1, random: 0, delay: 1_000 },
    { retry: 1, random: 0.5, delay: 1_500 },
    { retry: 1, random: 0.999_999, delay: 2_000 },
    { retry: 2, random: 0, delay: 2_000 },
    { retry: 2, random: 0.5, delay: 3_000 },
    { retry: 3, random: 0.25, delay: 5_000 },
    { retry: 8, random: 0, delay: 128_000 },
    // 2 s × 2^8 = 512 s passes retryMaxMs: the ceiling stays at 300 s from here on
    { retry: 9, random: 0, delay: 150_000 },
    { retry: 9, random: 0.5, delay: 225_000 },
    { retry: 40, random: 0.999_999, delay: 300_000 },
  ])('retry $retry with random $random waits $delay ms', ({ retry, random, delay }) => {
    expect(equalJitterBackoff(retry, DEFAULTS, () => random)).toBe(delay);
  });

  it.each([
    // whole milliseconds: 1.5 + 0.1 × 1.5 = 1.65 rounds to 2
    { bounds: { baseMs: 3, maxMs: 100 }, retry: 1, random: 0.1, delay: 2 },
    { bounds: { baseMs: 3, maxMs: 100 }, retry: 1, random: 0, delay: 2 },
    { bounds: { baseMs: 1_000, maxMs: 1_000 }, retry: 5, random: 0.5, delay: 750 },
  ])('rounds to whole ms and honours maxMs: $bounds retry $retry random $random', ({ bounds, retry, random, delay }) => {
    expect(equalJitterBackoff(retry, bounds, () => random)).toBe(delay);
  });

  it.each([1, 2, 5, 9, 30])('retry %i stays between half the ceiling and the ceiling, whatever the random draw', (retry) => {
    const ceiling = Math.min(DEFAULTS.maxMs, DEFAULTS.baseMs * 2 ** (retry - 1));
    for (const random of [0, 0.1, 0.37, 0.5, 0.83, 0.999_999]) {
      const delay = equalJitterBackoff(retry, DEFAULTS, () => random);
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });
});
