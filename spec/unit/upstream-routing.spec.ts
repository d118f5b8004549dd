// The routing pieces that are pure (docs/routing-and-health.md): the chooser's order per strategy, with
// a seeded random source, and the circuit breaker's state machine, with a clock the table moves.
import { describe, expect, it } from 'vitest';
import { type Candidate, chooseOrder } from '../../lib/gateway/routing/choose-upstreams.js';
import { type BreakerSettings, BreakerState } from '../../lib/gateway/routing/circuit-breaker.js';
import { seededRandom } from '../helpers/seeded-random.js';

const candidate = (index: number, fields: Partial<Candidate> = {}): Candidate => ({ index, weight: 1, latencyMs: undefined, price: undefined, ...fields });

describe('chooseOrder', () => {
  it.each([
    [[1, 1], 1000],
    [[3, 1], 1000],
    [[1, 2, 7], 1000],
  ])('weighted %j: each is first in its share of %i choices, within ±10 %%', (weights, rounds) => {
    const random = seededRandom(42);
    const candidates = weights.map((weight, index) => candidate(index, { weight }));
    const firsts = weights.map(() => 0);
    for (let round = 0; round < rounds; round++) firsts[chooseOrder(candidates, 'weighted', random, false)[0]!.index]! += 1;
    const total = weights.reduce((sum, weight) => sum + weight, 0);
    weights.forEach((weight, index) => {
      const expected = (rounds * weight) / total;
      expect(Math.abs(firsts[index]! - expected)).toBeLessThanOrEqual(expected * 0.1);
    });
  });

  it('weighted: a zero weight is never first while another can be, and still follows as a fallback', () => {
    const random = seededRandom(7);
    for (let round = 0; round < 200; round++) {
      const order = chooseOrder([candidate(0, { weight: 0 }), candidate(1, { weight: 1 })], 'weighted', random, false);
      expect(order.map((entry) => entry.index)).toEqual([1, 0]);
    }
  });

  it.each([
    ['ordered keeps the list', 'ordered', [candidate(0, { latencyMs: 900 }), candidate(1, { latencyMs: 10 })], [0, 1]],
    ['latency: the fastest first', 'latency', [candidate(0, { latencyMs: 900 }), candidate(1, { latencyMs: 10 }), candidate(2, { latencyMs: 300 })], [1, 2, 0]],
    ['latency: one never measured goes first', 'latency', [candidate(0, { latencyMs: 10 }), candidate(1)], [1, 0]],
    ['price: the cheapest first, unpriced last', 'price', [candidate(0, { price: 40 }), candidate(1), candidate(2, { price: 20 })], [2, 0, 1]],
    ['price: a tie goes to the faster', 'price', [candidate(0, { price: 20, latencyMs: 500 }), candidate(1, { price: 20, latencyMs: 50 })], [1, 0]],
  ] as const)('%s', (_name, strategy, candidates, expected) => {
    // no exploration: the order is the strategy's alone
    expect(chooseOrder(candidates, strategy, seededRandom(1), false).map((entry) => entry.index)).toEqual(expected);
  });

  it('latency explores: a choice that explores puts another upstream first', () => {
    const order = chooseOrder([candidate(0, { latencyMs: 10 }), candidate(1, { latencyMs: 500 }), candidate(2, { latencyMs: 50 })], 'latency', seededRandom(3), true);
    expect(order[0]!.index).not.toBe(0);
    expect(order.map((entry) => entry.index).sort()).toEqual([0, 1, 2]);
  });
});

const SETTINGS: BreakerSettings = { failures: 5, failureRate: 0.5, windowMs: 60_000, minCalls: 20, cooldownMs: 30_000, accountCooldownMs: 300_000, maxRetryAfterMs: 300_000, minCallers: 3 };
const transient = { account: false };

describe('BreakerState', () => {
  it('opens after 5 consecutive failures, for the cooldown, then admits one trial', () => {
    const breaker = new BreakerState();
    for (let failure = 1; failure <= 4; failure++) expect(breaker.failed(1000, 'closed', transient, SETTINGS)).toBeUndefined();
    expect(breaker.failed(1000, 'closed', transient, SETTINGS)).toEqual({ state: 'open', reason: 'failures', since: 1000, openUntil: 31_000 });
    expect(breaker.admit(30_999)).toBeUndefined();
    const trial = breaker.admit(31_000);
    expect(trial).toEqual({ as: 'trial', moved: { state: 'half-open', reason: 'cooldown-over', since: 31_000 } });
    // the rest go elsewhere while the trial runs
    expect(breaker.admit(31_001)).toBeUndefined();
    expect(breaker.succeeded(31_500, 'trial', 200, SETTINGS)).toEqual({ state: 'closed', reason: 'recovered', since: 31_500 });
    expect(breaker.admit(31_501)).toEqual({ as: 'closed' });
  });

  it('a success resets the count of consecutive failures', () => {
    const breaker = new BreakerState();
    for (let failure = 0; failure < 4; failure++) breaker.failed(0, 'closed', transient, SETTINGS);
    breaker.succeeded(1, 'closed', 10, SETTINGS);
    for (let failure = 0; failure < 4; failure++) expect(breaker.failed(2, 'closed', transient, SETTINGS)).toBeUndefined();
    expect(breaker.state).toBe('closed');
  });

  it('a failed trial opens it again for the cooldown', () => {
    const breaker = new BreakerState();
    for (let failure = 0; failure < 5; failure++) breaker.failed(0, 'closed', transient, SETTINGS);
    breaker.admit(30_000);
    expect(breaker.failed(30_100, 'trial', transient, SETTINGS)).toEqual({ state: 'open', reason: 'trial-failed', since: 30_100, openUntil: 60_100 });
  });

  it("a vendor's Retry-After longer than the cooldown keeps it open that long", () => {
    const breaker = new BreakerState();
    for (let failure = 0; failure < 5; failure++) breaker.failed(0, 'closed', { account: false, retryAfterMs: 90_000 }, SETTINGS);
    expect(breaker.openUntil).toBe(90_000);
  });

  it("a 429's named wait opens it at once for that wait, capped at maxRetryAfterMs; one that could not be read for the cooldown", () => {
    expect(new BreakerState().failed(0, 'closed', { account: false, rest: true, retryAfterMs: 20_000 }, SETTINGS)).toEqual({ state: 'open', reason: 'retry-after', since: 0, openUntil: 20_000 });
    expect(new BreakerState().failed(0, 'closed', { account: false, rest: true, retryAfterMs: 86_400_000 }, SETTINGS)).toMatchObject({ openUntil: 300_000 });
    expect(new BreakerState().failed(0, 'closed', { account: false, rest: true }, SETTINGS)).toMatchObject({ openUntil: 30_000 });
  });

  it('an account failure opens it at once for the account cooldown; another while open announces nothing', () => {
    const breaker = new BreakerState();
    expect(breaker.failed(0, 'closed', { account: true }, SETTINGS)).toEqual({ state: 'open', reason: 'account', since: 0, openUntil: 300_000 });
    expect(breaker.failed(5, 'closed', { account: true }, SETTINGS)).toBeUndefined();
  });

  it('a failure rate over the window opens it before 5 in a row', () => {
    const breaker = new BreakerState();
    let opened;
    for (let call = 0; call < 40 && !opened; call++) {
      // fail, fail, succeed: 2/3 of calls fail, never 5 in a row
      opened = call % 3 === 2 ? breaker.succeeded(call, 'closed', 10, SETTINGS) : breaker.failed(call, 'closed', transient, SETTINGS);
    }
    expect(opened).toMatchObject({ state: 'open', reason: 'failure-rate' });
  });

  it('an answer that began before it opened does not close it', () => {
    const breaker = new BreakerState();
    breaker.failed(0, 'closed', { account: true }, SETTINGS);
    expect(breaker.succeeded(1, 'closed', 10, SETTINGS)).toBeUndefined();
    expect(breaker.state).toBe('open');
  });

  it('a trial whose client left frees the trial for the next request', () => {
    const breaker = new BreakerState();
    breaker.failed(0, 'closed', { account: true }, SETTINGS);
    expect(breaker.admit(300_000)?.as).toBe('trial');
    breaker.released('trial');
    expect(breaker.admit(300_001)?.as).toBe('trial');
  });
});
