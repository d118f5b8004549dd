// repeatLimiter (lib/stores/scheduling/repeat-limiter.ts): the first of a kind at once, repeats counted
// within the window and reported with the next one let through, kinds apart, memory bounded.
import { describe, expect, it } from 'vitest';
import { repeatLimiter } from '../../lib/stores/scheduling/repeat-limiter.js';

describe('repeatLimiter', () => {
  it('lets the first through, counts repeats in the window, reports them with the next one', () => {
    let now = 0;
    const limiter = repeatLimiter(1_000, () => now);
    const seen = [limiter.admit('a'), limiter.admit('a'), limiter.admit('a')];
    now = 999;
    seen.push(limiter.admit('a'));
    now = 1_000;
    seen.push(limiter.admit('a'), limiter.admit('a'));
    expect(seen).toEqual([0, undefined, undefined, undefined, 3, undefined]);
  });

  it('keeps kinds apart', () => {
    const limiter = repeatLimiter(1_000, () => 0);
    expect([limiter.admit('queue: refused'), limiter.admit('worker: refused'), limiter.admit('queue: refused')]).toEqual([0, 0, undefined]);
  });

  it('forgets the oldest kind past 100 kinds, so varying messages cannot grow it without bound', () => {
    const limiter = repeatLimiter(1_000, () => 0);
    for (let index = 0; index <= 100; index += 1) limiter.admit(`kind ${index}`);
    expect(limiter.admit('kind 0')).toBe(0);
    expect(limiter.admit('kind 100')).toBeUndefined();
  });
});
