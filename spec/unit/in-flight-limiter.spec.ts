// The per-caller in-flight counter behind limits.inFlightPerCaller: slots per key up to the limit,
// keys independent, a release that frees exactly one slot however often it is called.
import { describe, expect, it } from 'vitest';
import { createInFlightLimiter } from '../../lib/express/caller-in-flight.js';

/** `+a` acquires a slot for key a (recording whether it was granted); `-a0` calls the release of a's first grant. */
type Step = `+${string}` | `-${string}`;

function run(limit: number, steps: readonly Step[]): { granted: boolean[]; inFlight: Record<string, number> } {
  const limiter = createInFlightLimiter(limit);
  const releases: Record<string, Array<() => void>> = {};
  const granted: boolean[] = [];
  const keys = new Set<string>();
  for (const step of steps) {
    const key = step.slice(1, 2);
    keys.add(key);
    if (step.startsWith('+')) {
      const release = limiter.tryAcquire(key);
      granted.push(release !== null);
      if (release) (releases[key] ??= []).push(release);
    } else {
      releases[key]![Number(step.slice(2))]!();
    }
  }
  return { granted, inFlight: Object.fromEntries([...keys].map((key) => [key, limiter.inFlight(key)])) };
}

describe('createInFlightLimiter', () => {
  it.each<{ name: string; limit: number; steps: Step[]; granted: boolean[]; inFlight: Record<string, number> }>([
    { name: 'up to the limit, then refused', limit: 2, steps: ['+a', '+a', '+a'], granted: [true, true, false], inFlight: { a: 2 } },
    { name: 'a release frees a slot', limit: 2, steps: ['+a', '+a', '-a0', '+a'], granted: [true, true, true], inFlight: { a: 2 } },
    { name: 'a release called twice frees one slot only', limit: 2, steps: ['+a', '+a', '-a0', '-a0', '+a', '+a'], granted: [true, true, true, false], inFlight: { a: 2 } },
    { name: 'keys do not share slots', limit: 1, steps: ['+a', '+b', '+a', '+b'], granted: [true, true, false, false], inFlight: { a: 1, b: 1 } },
    { name: 'one key at its limit leaves another untouched', limit: 3, steps: ['+a', '+a', '+a', '+a', '+b'], granted: [true, true, true, false, true], inFlight: { a: 3, b: 1 } },
    { name: 'all released: nothing held', limit: 2, steps: ['+a', '+a', '-a1', '-a0'], granted: [true, true], inFlight: { a: 0 } },
  ])('$name', ({ limit, steps, granted, inFlight }) => {
    expect(run(limit, steps)).toEqual({ granted, inFlight });
  });

  it('forgets a key once all its slots are released (memory bounded by callers in flight)', () => {
    const limiter = createInFlightLimiter(1);
    for (let index = 0; index < 1_000; index += 1) limiter.tryAcquire(`caller-${index}`)!();
    expect(limiter.size()).toBe(0);
  });
});
