// Charges settled away from the request that took them (docs/tenancy-and-billing.md "Settlement"): a
// charge rebuilt from what its work recorded (Quotas.recorded) settles by the same books as the request's
// own charge would, and kept work that expires gives back what the operator absorbs, whole, and keeps
// what its client lost by leaving. Memory counters, read back through the quotas' state.
import { describe, expect, it } from 'vitest';
import { Pricing } from '../../lib/gateway/ledger/pricing.js';
import type { QuotaCost } from '../../lib/gateway/tenancy/quota-cost.js';
import { type QuotaCharge, Quotas } from '../../lib/gateway/tenancy/quotas.js';
import { expiredKeptSettlement, recordedSettlement } from '../../lib/gateway/tenancy/recorded-charges.js';
import { resolveQuotas } from '../../lib/gateway/tenancy/resolve-tenancy.js';
import { settleBooks } from '../../lib/gateway/tenancy/with-charge.js';
import type { Usage } from '../../lib/gateway/use-case.js';
import type { KeptWorkRecord } from '../../lib/stores/idempotency/idempotency-store.js';

const pricing = Pricing.resolve({ currency: 'USD', models: { 'x-image': { request: 0.01, image: 0.04 } } })!;
const silent = { info: () => {}, warn: () => {}, error: () => {} };
const quotas = (): Quotas => new Quotas(resolveQuotas({ limits: { imagesPerMinute: 10, budget: 1 } }), silent, 60_000, { pricing, chargeFailedWork: false });
const images = (n: number): QuotaCost => ({ images: n, priced: { model: 'x-image', images: n } });
const left = async (of: Quotas, id: string) => (await of.state({ id })).map(({ name, remaining }) => [name, remaining]);

/** Two images asked and made, one answered: the other is the vendor's excess of the answer, absorbed. */
const oneOfTwo = (): Usage => ({ model: 'x-image', images: 1, imagesAsked: 2, attempts: [{ provider: 'openai', outcome: 'made', images: 2 }] });

/** What a request records of its charge (with-charge.ts): what another instance settles it from. */
function recordOf(charge: QuotaCharge, cost: QuotaCost): NonNullable<Usage['charged']> {
  return { images: cost.images, imagesWindowEnd: charge.windowEnds.images, budget: charge.budget, budgetWindowEnd: charge.windowEnds.budget };
}

describe('a charge settled from its record', () => {
  it('leaves the counters as the request settling its own charge would', async () => {
    const counters = quotas();
    const own = await counters.charge({ id: 'tenant-own' }, images(2));
    await settleBooks(counters, own, images(2), oneOfTwo(), {});
    const cost = images(2);
    const taken = await counters.charge({ id: 'tenant-lapsed' }, cost);
    await recordedSettlement(counters, 'tenant-lapsed', recordOf(taken, cost), oneOfTwo())({});
    expect(await left(counters, 'tenant-lapsed')).toEqual(await left(counters, 'tenant-own'));
    // one image and its price with the fee kept: 9 images and 1 - 0.05 of the budget left
    expect(await left(counters, 'tenant-lapsed')).toEqual([
      ['images', 9],
      ['budget', 0.95],
    ]);
  });

  it('settles nothing of a request that charged nothing', async () => {
    const counters = quotas();
    await recordedSettlement(counters, 'tenant-free', undefined, oneOfTwo())({});
    expect(await left(counters, 'tenant-free')).toEqual([
      ['images', 10],
      ['budget', 1],
    ]);
  });
});

describe('kept work settled at its expiry', () => {
  const keptFor = async (counters: Quotas, id: string, lostBy: KeptWorkRecord['lostBy']): Promise<KeptWorkRecord> => {
    const cost = images(1);
    const charge = await counters.charge({ id }, cost);
    return { caller: { id }, route: 'images.generations', model: 'x-image', images: 1, lostBy, windowEnds: charge.windowEnds, budgetMicros: charge.budget! };
  };

  it('gives back the images and money of work the operator absorbs (the vendor was slow)', async () => {
    const counters = quotas();
    await expiredKeptSettlement(counters, await keptFor(counters, 'tenant-slow', 'upstream'))({});
    expect(await left(counters, 'tenant-slow')).toEqual([
      ['images', 10],
      ['budget', 1],
    ]);
  });

  it('keeps the charge of work its client lost by leaving', async () => {
    const counters = quotas();
    await expiredKeptSettlement(counters, await keptFor(counters, 'tenant-left', 'client_left'))({});
    expect(await left(counters, 'tenant-left')).toEqual([
      ['images', 9],
      ['budget', 0.95],
    ]);
  });
});
