// The default upstream deadline fits image work (README "Options", limits): slow image models take about
// two minutes at high quality and 4K longer, so a default that ends such a job would throw paid work away.
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../lib/index.js';

describe('default deadlines', () => {
  it('the whole-request upstream deadline outlasts a two-minute high-quality image job, with room for 4K', () => {
    expect(DEFAULT_LIMITS.upstreamTimeoutMs).toBeGreaterThanOrEqual(3 * 60_000);
  });
});
