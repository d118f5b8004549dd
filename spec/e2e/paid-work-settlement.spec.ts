// The settlement of paid work (docs/tenancy-and-billing.md "Settlement"): when work ends, its charge is
// settled before its usage event goes out, so a host that reads the quotas as an event arrives finds
// them as the event's books say; on every path the books end the same way: a request answered at its
// deadline whose late work then failed, work kept for a retry and delivered to it, kept work that
// expired unclaimed. The event of settled kept work names the work that was kept (its upstream model
// and sizes). Real HTTP against a fake that counts the images it makes; the quotas are read from
// `onUsage` itself.
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import type { GatewayOptions, UsageEvent } from '../../lib/index.js';
import { OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { type GatewayFixture, gatewayWith } from '../helpers/gateway-with.js';
import { accountedImages, chargedImages, costOf, keptImages, quotaUsedBy, settledKeptImages, vendorImages } from '../helpers/ledger-books.js';
import { postAndLeave } from '../helpers/paid-work.js';

const FEE = 0.01;
const IMAGE = 0.03;
const fakes = { images: startFakePaidImages };
type Fixture = GatewayFixture<typeof fakes>;

/** An event, and the quotas as a host read them from `onUsage` when it arrived. */
interface Reading {
  event: UsageEvent;
  images: Promise<number>;
  budget: Promise<number>;
}

/** A priced gateway with an images quota and a money budget whose `onUsage` reads the quotas as each event arrives. */
async function start(options: Partial<GatewayOptions> & { timeoutMs?: number } = {}): Promise<{ gw: Fixture; readings: Reading[] }> {
  const { timeoutMs, ...rest } = options;
  const readings: Reading[] = [];
  const box: { gw?: Fixture } = {};
  const gw = await gatewayWith(
    {
      fakes,
      resolve: ({ model }, { images }) =>
        model === 'x-image-2.0' ? { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-2.0', ...(timeoutMs !== undefined ? { timeoutMs } : {}) } : null,
      tenancy: {
        pricing: { currency: 'USD', models: { 'x-image-2.0': { request: FEE, image: { default: 0.1, by: { '1024x1024': IMAGE } } } } },
        quotas: { limits: { imagesPerMinute: 1_000, budget: 100 } },
      },
      onUsage: (event) => {
        const { router } = box.gw!;
        // read at once, in the host's own hook: nothing of the event's settlement may still be under way
        readings.push({ event, images: quotaUsedBy(router, event.caller, 'images'), budget: quotaUsedBy(router, event.caller, 'budget') });
      },
    },
    rest,
  );
  box.gw = gw;
  return { gw, readings };
}

const auth = { Authorization: `Bearer ${KEY_A}` };
const body = { model: 'x-image-2.0', prompt: 'a settled lighthouse', size: '1024x1024' };

/** The quotas as each event was read: used images and money equal the books of every event up to it. */
async function expectReadingsSettled(readings: readonly Reading[]): Promise<void> {
  for (const [index, reading] of readings.entries()) {
    const events = readings.slice(0, index + 1).map((item) => item.event);
    const held = keptImages(events) - settledKeptImages(events);
    expect(await reading.images, `images used as event ${index + 1} arrived`).toBe(chargedImages(events) + held);
    // kept images stay reserved in money too until they are settled: their price and the fee
    expect(await reading.budget, `budget used as event ${index + 1} arrived`).toBeCloseTo(costOf(events) + (held > 0 ? held * IMAGE + FEE : 0), 6);
  }
}

describe('a charge is settled before its usage event', () => {
  it('a request answered 504 at its deadline, whose late work then failed: its images and money are back when its event arrives', async () => {
    const { gw, readings } = await start({ timeoutMs: 400 });
    gw.fakes.images.script = () => ({ workMs: 900, failAfterWork: 500 });
    const answer = await request(gw.app).post(OPENAI_IMAGES).set(auth).send(body);
    expect(answer.status).toBe(504);
    await gw.fakes.images.settled();
    await vi.waitFor(() => expect(readings).toHaveLength(1), { timeout: 10_000, interval: 50 });
    const [event] = readings.map((reading) => reading.event);
    // the vendor may have made the image (a 5xx after its work): the operator's, not the tenant's
    expect(event).toMatchObject({ status: 504, images: 0, absorbedImages: 1, lostBy: 'upstream', vendorWork: { images: 1 }, cost: { amount: 0, currency: 'USD' } });
    expect(vendorImages(readings.map((reading) => reading.event))).toBe(gw.fakes.images.imagesMade());
    expect(await readings[0]!.images).toBe(0);
    expect(await readings[0]!.budget).toBeCloseTo(0, 6);
  });

  it('kept work delivered to the retry: both events find the quotas settled, and the delivery names the kept work', async () => {
    const { gw, readings } = await start();
    gw.fakes.images.workMs = 600;
    await postAndLeave({ url: gw.url, path: OPENAI_IMAGES, key: KEY_A, body: JSON.stringify(body), upstream: gw.fakes.images });
    await gw.fakes.images.settled();
    await vi.waitFor(() => expect(readings).toHaveLength(1), { timeout: 10_000, interval: 50 });
    const retry = await request(gw.app).post(OPENAI_IMAGES).set(auth).send(body);
    expect(retry.status).toBe(200);
    expect(retry.headers['x-kept-answer']).toBe('true');
    await vi.waitFor(() => expect(readings).toHaveLength(2), { timeout: 10_000, interval: 50 });
    const events = readings.map((reading) => reading.event);
    expect(events[0]).toMatchObject({ status: 499, images: 0, keptImages: 1, vendorWork: { images: 1 } });
    expect(events[1]).toMatchObject({
      status: 200,
      model: 'x-image-2.0',
      provider: 'dashscope',
      upstreamModel: 'qwen-image-2.0',
      imageSizes: ['1024x1024'],
      images: 1,
      kept: { images: 1 },
      vendorWork: { images: 0, attempts: [] },
      cost: { amount: expect.closeTo(IMAGE + FEE, 6) as number },
    });
    // one image made, billed once
    expect(gw.fakes.images.imagesMade()).toBe(1);
    expect(vendorImages(events)).toBe(1);
    expect(accountedImages(events)).toBe(1);
    await expectReadingsSettled(readings);
  });

  it('kept work that expires unclaimed after the deadline passed: absorbed, and given back before its event arrives', async () => {
    const { gw, readings } = await start({ timeoutMs: 400, idempotency: { keptAnswerSeconds: 1 } });
    gw.fakes.images.workMs = 900;
    const first = await request(gw.app).post(OPENAI_IMAGES).set(auth).send(body);
    expect(first.status).toBe(504);
    await gw.fakes.images.settled();
    // the first try's event, then the expiry's once nobody took the kept answer
    await vi.waitFor(() => expect(readings).toHaveLength(2), { timeout: 10_000, interval: 50 });
    const events = readings.map((reading) => reading.event);
    expect(events[0]).toMatchObject({ status: 504, images: 0, keptImages: 1, lostBy: 'client_left', vendorWork: { images: 1 } });
    expect(events[1]).toMatchObject({
      status: 504,
      model: 'x-image-2.0',
      upstreamModel: 'qwen-image-2.0',
      imageSizes: ['1024x1024'],
      images: 0,
      absorbedImages: 1,
      lostBy: 'upstream',
      kept: { images: 1 },
      cost: { amount: 0, currency: 'USD' },
    });
    expect(gw.fakes.images.imagesMade()).toBe(1);
    expect(vendorImages(events)).toBe(1);
    expect(accountedImages(events)).toBe(1);
    // the first event found the kept image and its money held; the expiry's found them given back
    expect(await readings[0]!.images).toBe(1);
    expect(await readings[0]!.budget).toBeCloseTo(IMAGE + FEE, 6);
    expect(await readings[1]!.images).toBe(0);
    expect(await readings[1]!.budget).toBeCloseTo(0, 6);
  });
});
