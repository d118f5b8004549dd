// The quote of a dry run (docs/tenancy-and-billing.md "Quotes before work"): the limits as Quotas.peek
// reads them (memory counters: what would pass, what would remain, the charge's own 429, nothing taken)
// and the quote quoteOf makes of them (the cost by the price table, what each counting quota would
// take, the budget left), and `Prefer: dry-run` as the header is read.
import { describe, expect, it } from 'vitest';
import { QuotaExceededError } from '../../lib/errors/quota-exceeded-error.js';
import { preferenceOf } from '../../lib/express/prefer-header.js';
import { Pricing } from '../../lib/gateway/ledger/pricing.js';
import type { QuotaCost } from '../../lib/gateway/tenancy/quota-cost.js';
import { type QuotaPeek, Quotas } from '../../lib/gateway/tenancy/quotas.js';
import { quoteOf } from '../../lib/gateway/tenancy/quote.js';
import { resolveQuotas } from '../../lib/gateway/tenancy/resolve-tenancy.js';
import type { QuotaLimits } from '../../lib/options/gateway-options.js';

const pricing = Pricing.resolve({ currency: 'USD', models: { 'x-image': { image: 0.04 }, 'x-video': { videoSecond: { default: 0.05, by: { '720p': 0.02 } } } } })!;
const caller = { id: 'tenant-a' };
const silent = { info: () => {}, warn: () => {}, error: () => {} };

function quotasWith(limits: QuotaLimits): Quotas {
  return new Quotas(resolveQuotas({ limits }), silent, 60_000, { pricing, chargeFailedWork: false });
}

const images = (n: number): QuotaCost => ({ requests: 1, images: n, priced: { model: 'x-image', images: n } });
const left = async (quotas: Quotas) => (await quotas.state(caller)).map(({ name, remaining }) => [name, remaining]);

describe('Quotas.peek', () => {
  it('reports each limit as the charge would meet it, and takes nothing', async () => {
    const quotas = quotasWith({ requestsPerMinute: 10, imagesPerMinute: 5, videoSecondsPerDay: 60, budget: 1 });
    await quotas.charge(caller, images(2));
    const before = await left(quotas);
    const peeked = await quotas.peek(caller, images(2));
    expect(peeked).toEqual<QuotaPeek[]>([
      { kind: 'requests', charged: true, asked: 1, passes: true, remaining: 8 },
      { kind: 'images', charged: true, asked: 2, passes: true, remaining: 1 },
      // a limit the request does not count is reported with what is left of it
      { kind: 'videoSeconds', charged: false, asked: 0, passes: true, remaining: 60 },
      { kind: 'budget', charged: true, asked: 80_000, passes: true, remaining: 840_000 },
    ]);
    expect(await left(quotas)).toEqual(before);
  });

  it('a limit it would pass over carries the 429 the charge answers', async () => {
    const quotas = quotasWith({ imagesPerMinute: 5 });
    await quotas.charge(caller, images(4));
    const [peeked] = await quotas.peek(caller, images(2));
    expect(peeked).toMatchObject({ kind: 'images', passes: false, remaining: 0 });
    const charged: unknown = await quotas.charge(caller, images(2)).catch((error: unknown) => error);
    expect(peeked!.refusal).toBeInstanceOf(QuotaExceededError);
    expect(peeked!.refusal!.message).toBe((charged as QuotaExceededError).message);
    expect(peeked!.refusal!.rateLimit).toMatchObject({ name: 'images', quota: 5, remaining: 1 });
  });

  it('without limits for the caller: nothing to report', async () => {
    expect(await new Quotas(undefined, silent, 60_000, { pricing, chargeFailedWork: false }).peek(caller, images(1))).toEqual([]);
  });
});

describe('quoteOf', () => {
  it('the cost by the price table, what each counting quota would take, the budget left', () => {
    const limits: QuotaPeek[] = [
      { kind: 'requests', charged: true, asked: 1, passes: true, remaining: 9 },
      { kind: 'videoSeconds', charged: true, asked: 12, passes: true, remaining: 48 },
      { kind: 'videoTasks', charged: true, asked: 1, passes: true, remaining: 0 },
      { kind: 'images', charged: false, asked: 0, passes: true, remaining: 5 },
      { kind: 'budget', charged: true, asked: 240_000, passes: true, remaining: 760_000 },
    ];
    const cost: QuotaCost = { requests: 1, videoSeconds: 12, videoTasks: 1, priced: { model: 'x-video', videoSeconds: 12, resolution: '720p' } };
    expect(quoteOf('x-video', cost, pricing, limits)).toEqual({
      object: 'quote',
      model: 'x-video',
      cost: { amount: 0.24, currency: 'USD' },
      reserved: { requests: 1, video_seconds: 12, video_tasks: 1, budget: { amount: 0.24, currency: 'USD' } },
      budget_remaining: { amount: 0.76, currency: 'USD' },
    });
  });

  it('an unpriced model costs null; no quotas reserve nothing and leave no budget', () => {
    const other: QuotaCost = { requests: 1, images: 1, priced: { model: 'x-other', images: 1 } };
    expect(quoteOf('x-other', other, pricing, [])).toEqual({ object: 'quote', model: 'x-other', cost: null, reserved: {}, budget_remaining: null });
    expect(quoteOf('x-image', images(3), undefined, [])).toMatchObject({ cost: null });
  });

  it('throws the refusal of the first limit that would not pass', () => {
    const refusal = new QuotaExceededError('Quota exceeded', { name: 'images', quota: 5, windowSeconds: 60, remaining: 1, resetSeconds: 30 });
    const limits: QuotaPeek[] = [
      { kind: 'requests', charged: true, asked: 1, passes: true, remaining: 9 },
      { kind: 'images', charged: true, asked: 2, passes: false, remaining: 0, refusal },
    ];
    expect(() => quoteOf('x-image', images(2), pricing, limits)).toThrow(refusal);
  });
});

describe('preferenceOf: dry-run', () => {
  it.each<{ header: string | string[]; dryRun: boolean; respondAsync: boolean }>([
    { header: 'dry-run', dryRun: true, respondAsync: false },
    { header: 'Dry-Run', dryRun: true, respondAsync: false },
    { header: 'respond-async, dry-run', dryRun: true, respondAsync: true },
    { header: ['respond-async', 'dry-run; why=budget'], dryRun: true, respondAsync: true },
    { header: 'dry-run-later', dryRun: false, respondAsync: false },
    { header: 'return=minimal', dryRun: false, respondAsync: false },
  ])('$header', ({ header, dryRun, respondAsync }) => {
    expect(preferenceOf({ prefer: header })).toMatchObject({ dryRun, respondAsync });
  });

  it('no header: not a dry run', () => {
    expect(preferenceOf({}).dryRun).toBe(false);
  });
});
