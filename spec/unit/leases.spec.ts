// Leases on held work (docs/image-tasks.md "Restarts and several instances", docs/tenancy-and-billing.md
// "Retries"): the lease arithmetic, the books of lost work and of work that may have been under way, and the lease methods of the memory
// Idempotency-Key store (the Redis store's are exercised across instances in crash-leases-redis.spec.ts).
import { describe, expect, it } from 'vitest';
import { hasLapsed, leaseEnd, leaseTerms, nextLookAt } from '../../lib/gateway/leases/lease-terms.js';
import { lostWorkUsage, mayHaveBeenUnderWay } from '../../lib/gateway/ledger/lost-work.js';
import { attempting, usageFor } from '../../lib/gateway/use-case.js';
import { bookFields } from '../../lib/gateway/ledger/reckoning.js';
import { ERROR_CODES } from '../../lib/errors/error-codes.js';
import { GatewayError } from '../../lib/errors/gateway-error.js';
import { type RunningLease, memoryIdempotencyStore } from '../../lib/index.js';

const interrupted = new GatewayError({ status: 502, code: ERROR_CODES.taskInterrupted, message: 'stopped' });
const lease = (holder: string, leaseUntil: number): RunningLease => ({ holder, leaseUntil, work: { caller: { id: 'tenant-a' }, route: 'images.generations', model: 'm', startedAt: 0 } });

describe('lease terms', () => {
  it('renews three times per lease, never more often than every 100 ms', () => {
    expect(leaseTerms(30)).toEqual({ leaseMs: 30_000, renewMs: 10_000 });
    expect(leaseTerms(1).renewMs).toBe(333);
    expect(leaseEnd(leaseTerms(30), 1_000)).toBe(31_000);
  });

  it('a lease lapses at its end; work recorded without one never lapses', () => {
    expect(hasLapsed(1_000, 999)).toBe(false);
    expect(hasLapsed(1_000, 1_000)).toBe(true);
    expect(hasLapsed(undefined, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  it('a watch looks at the lease end, or the deadline when it comes first', () => {
    expect(nextLookAt(5_000, 9_000)).toBe(5_000);
    expect(nextLookAt(9_000, 5_000)).toBe(5_000);
    expect(nextLookAt(undefined, 5_000)).toBe(5_000);
  });
});

describe('the books of lost work', () => {
  const policy = { chargeFailedWork: false, pricing: undefined };

  it('a call that had started: one attempt of unknown outcome, every image asked absorbed, lost by the gateway', () => {
    const usage = lostWorkUsage({ model: 'm', provider: 'dashscope', imagesAsked: 2, started: true, sizeAsked: '1024x1024' });
    expect(bookFields(usage, { error: interrupted, noFee: true }, policy)).toEqual({
      images: 0,
      absorbedImages: 2,
      lostBy: 'gateway',
      vendorWork: { images: 2, attempts: [{ provider: 'dashscope', images: 2, outcome: 'unknown' }] },
    });
  });

  it('charged to the tenant as undelivered with tenancy.chargeFailedWork', () => {
    const usage = lostWorkUsage({ model: 'm', provider: 'dashscope', imagesAsked: 2, started: true, sizeAsked: '1024x1024' });
    expect(bookFields(usage, { error: interrupted, noFee: true }, { ...policy, chargeFailedWork: true })).toMatchObject({
      images: 0,
      undeliveredImages: 2,
      undeliveredSizes: ['1024x1024', '1024x1024'],
      lostBy: 'gateway',
    });
  });

  it('work that never reached a vendor: no attempt, nothing absorbed or charged', () => {
    const books = bookFields(lostWorkUsage({ model: 'm', provider: 'dashscope', imagesAsked: 3, started: false }), { error: interrupted, noFee: true }, policy);
    expect(books).toEqual({ images: 0, vendorWork: { images: 0, attempts: [] } });
  });
});

describe('work that may have been under way (a cancelled running task)', () => {
  const policy = { chargeFailedWork: false, pricing: undefined };
  const cancelled = GatewayError.invalidRequest('the task was cancelled');

  it('a run with no attempt recorded: one is started, of unknown outcome, every image asked charged as lost by the cancel', () => {
    const usage = usageFor('m');
    usage.imagesAsked = 2;
    mayHaveBeenUnderWay(usage, 'dashscope', 2);
    usage.lostBy = 'cancelled';
    expect(bookFields(usage, { error: cancelled, noFee: true }, policy)).toEqual({
      images: 0,
      undeliveredImages: 2,
      lostBy: 'cancelled',
      vendorWork: { images: 2, attempts: [{ provider: 'dashscope', images: 2, outcome: 'unknown' }] },
    });
  });

  it("a run whose call is under way: its own attempt (with the vendor's id) becomes unknown, not a second one", () => {
    const usage = usageFor('m');
    usage.imagesAsked = 3;
    attempting(usage, 'openai').id = 'req_1';
    mayHaveBeenUnderWay(usage, 'openai', 3);
    expect(usage.attempts).toEqual([{ provider: 'openai', id: 'req_1', images: 3, outcome: 'unknown' }]);
  });

  it('an attempt already settled, or images the vendor is known to have made, stay as they are', () => {
    const settled = usageFor('m');
    attempting(settled, 'openai').outcome = 'refused';
    mayHaveBeenUnderWay(settled, 'openai', 2);
    expect(settled.attempts).toEqual([{ provider: 'openai', outcome: 'refused' }]);
    const made = usageFor('m');
    attempting(made, 'dashscope');
    made.upstreamImages = 1;
    mayHaveBeenUnderWay(made, 'dashscope', 2);
    expect(made.attempts).toEqual([{ provider: 'dashscope' }]);
  });
});

describe('memoryIdempotencyStore leases', () => {
  it('only the holder renews; a lapsed lease is claimed once, marked interrupted, and cleared once', async () => {
    const store = memoryIdempotencyStore();
    expect(await store.begin('k', 'fp', 60_000, lease('one', 1_000))).toBeUndefined();
    expect(await store.renew!('k', lease('two', 5_000), 60_000)).toBe(false);
    expect(await store.renew!('k', lease('one', 5_000), 60_000)).toBe(true);
    // not lapsed yet
    expect(await store.claimLapsed!('k', 4_999, 60_000)).toBeUndefined();
    const claimed = await store.claimLapsed!('k', 5_000, 60_000);
    expect(claimed).toMatchObject({ state: 'running', fingerprint: 'fp', lease: { holder: 'one', leaseUntil: 5_000 } });
    expect(await store.claimLapsed!('k', 5_000, 60_000)).toBeUndefined();
    // the holder that comes back cannot take the key again
    expect(await store.renew!('k', lease('one', 9_000), 60_000)).toBe(false);
    expect(await store.begin('k', 'fp', 60_000)).toEqual({ state: 'interrupted', fingerprint: 'fp' });
    expect(await store.clearInterrupted!('k')).toBe(true);
    expect(await store.clearInterrupted!('k')).toBe(false);
    expect(await store.begin('k', 'fp', 60_000)).toBeUndefined();
  });

  it('a running key without a lease is never claimed, and clearInterrupted leaves anything else', async () => {
    const store = memoryIdempotencyStore();
    await store.begin('k', 'fp', 60_000);
    expect(await store.claimLapsed!('k', Number.MAX_SAFE_INTEGER, 60_000)).toBeUndefined();
    expect(await store.clearInterrupted!('k')).toBe(false);
    expect(await store.peek!('k')).toEqual({ state: 'running', fingerprint: 'fp' });
  });

  it('swap replaces exactly the record it was given, once: one instance takes a lapsed key over, and one ends it', async () => {
    const store = memoryIdempotencyStore();
    await store.begin('k', 'fp', 60_000, lease('one', 1_000));
    const seen = (await store.peek!('k'))!;
    const followed = { state: 'running' as const, fingerprint: 'fp', lease: lease('follower', 9_000) };
    expect(await store.swap!('k', seen, followed, 60_000)).toBe(true);
    // a second instance that read the same lapsed record loses, and so does the old holder's renewal
    expect(await store.swap!('k', seen, { state: 'interrupted', fingerprint: 'fp' }, 60_000)).toBe(false);
    expect(await store.renew!('k', lease('one', 9_000), 60_000)).toBe(false);
    const done = { state: 'done' as const, fingerprint: 'fp', answer: { status: 200, contentType: 'application/json', body: 'e30=' } };
    expect(await store.swap!('k', followed, done, 60_000)).toBe(true);
    expect(await store.swap!('k', followed, done, 60_000)).toBe(false);
    expect(await store.peek!('k')).toEqual(done);
    expect(await store.swap!('gone', followed, done, 60_000)).toBe(false);
  });
});
