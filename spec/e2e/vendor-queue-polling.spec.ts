// Work on a vendor's queue that the caller stopped waiting for (docs/providers/fal.md "The queue",
// docs/providers/replicate.md "What Replicate is sent", docs/tenancy-and-billing.md "Retries"): fal
// requests and Replicate predictions are followed by one rule. Past the answer deadline the work is
// followed only up to `idempotency.keptWorkSeconds`, then cancelled at the vendor; a retry that joins
// it is answered within its own deadline; work the vendor no longer knows (404) ends at once. The
// fakes count the paid work they started and the cancels they received, and the usage events must
// account for both (docs/tenancy-and-billing.md "The books").
import request from 'supertest';
import { describe, expect, it, onTestFinished } from 'vitest';
import { FAL_KEY, startFakeFal } from '../helpers/fake-fal.js';
import { REPLICATE_TOKEN, startFakeReplicate } from '../helpers/fake-replicate.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { accountedImages, absorbedImages, chargedImages, vendorImages } from '../helpers/ledger-books.js';

const FAL_MODEL = 'fal-ai/flux/dev';
const REPLICATE_MODEL = 'google/nano-banana';
const auth = { Authorization: `Bearer ${KEY_A}` };

/** A gateway in front of both fakes, each upstream with the answer deadline `timeoutMs` and the kept-work bound given. */
async function start(keptWorkSeconds: number, timeoutMs = 600) {
  return gatewayWith({
    fakes: { fal: startFakeFal, replicate: startFakeReplicate },
    resolve: ({ model }, { fal, replicate }) => {
      if (model === FAL_MODEL) return { provider: 'fal', baseURL: fal.origin, apiKey: FAL_KEY, model, timeoutMs };
      return { provider: 'replicate', baseURL: replicate.baseURL, apiKey: REPLICATE_TOKEN, model, timeoutMs };
    },
    tenancy: { quotas: { limits: { imagesPerMinute: 1000 } } },
    idempotency: { keptWorkSeconds },
  });
}

type Fixture = Awaited<ReturnType<typeof start>>;

/** The gateway of `start`, its Replicate predictions created at once (no `Prefer: wait` held) and processing until the test ends or `release`. */
async function startHeldReplicate(keptWorkSeconds: number, timeoutMs?: number) {
  const gw = await start(keptWorkSeconds, timeoutMs);
  const { replicate } = gw.fakes;
  replicate.settings.waitCapMs = 0;
  const release = replicate.hold();
  onTestFinished(release);
  return { gw, replicate, release };
}

const post = (gw: Fixture, model: string, headers: Record<string, string> = {}) =>
  request(gw.app).post('/v1/images/generations').set(auth).set(headers).send({ model, prompt: 'a kite over the dunes' });

/** The books balance: every image the vendor may bill is accounted once, charged or absorbed. */
async function expectBooksBalance(gw: Fixture, startedWork: number): Promise<void> {
  await expect.poll(() => vendorImages(gw.usage), { timeout: 10_000 }).toBe(startedWork);
  expect(accountedImages(gw.usage)).toBe(vendorImages(gw.usage));
}

describe('fal: a request that stays IN_PROGRESS past the answer deadline', () => {
  it('answers 504, follows the work only up to keptWorkSeconds, then cancels it at fal; the books hold it as absorbed', async () => {
    const gw = await start(1);
    const { fal } = gw.fakes;
    fal.setRunning(true);
    const answer = await post(gw, FAL_MODEL);
    expect(answer.status).toBe(504);
    const { requestId } = fal.inputs().at(-1)!;
    await expect.poll(() => fal.cancels(), { timeout: 10_000 }).toEqual([requestId]);
    expect(fal.submits()).toBe(1);
    await expectBooksBalance(gw, fal.started().length);
    // cancelled while running: it may have been billed (outcome unknown), the slow vendor's, so the operator's
    expect(gw.usage).toMatchObject([{ status: 504, images: 0, absorbedImages: 1, lostBy: 'upstream', vendorWork: { images: 1, attempts: [{ provider: 'fal', outcome: 'unknown' }] } }]);
    // the follow ended with the cancel: nothing was read after it
    expect(fal.apiRequests().at(-1)).toMatchObject({ method: 'PUT', path: `/fal-ai/flux/requests/${requestId}/cancel` });
    expect(chargedImages(gw.usage)).toBe(0);
  });

  it('a retry that joins the running work (x-stainless-retry-count: 1) is answered within its own deadline, and submits nothing', async () => {
    const gw = await start(60);
    const { fal } = gw.fakes;
    fal.setRunning(true);
    expect((await post(gw, FAL_MODEL)).status).toBe(504);
    const retry = await post(gw, FAL_MODEL, { 'x-stainless-retry-count': '1' }).timeout(10_000);
    expect(retry.status).toBe(504);
    expect(retry.body.error).toMatchObject({ code: 'upstream_timeout' });
    expect(retry.headers['x-should-retry']).toBe('true');
    expect(fal.submits()).toBe(1);
    // once the work completes, the next retry receives it: the join did not lose it
    fal.setRunning(false);
    await expect.poll(async () => (await post(gw, FAL_MODEL, { 'x-stainless-retry-count': '2' })).status, { timeout: 10_000, interval: 200 }).toBe(200);
    expect(fal.submits()).toBe(1);
    expect(fal.cancels()).toEqual([]);
    await expectBooksBalance(gw, fal.started().length);
    // charged once, to the retry that received it; the retry answered 504 charged nothing
    await expect.poll(() => chargedImages(gw.usage), { timeout: 10_000 }).toBe(1);
    expect(gw.usage.filter((event) => event.status === 504 && event.images + (event.undeliveredImages ?? 0) > 0)).toEqual([]);
  });

  it('a retry with the same Idempotency-Key while the work runs is answered at once, and submits nothing', async () => {
    const gw = await start(60);
    const { fal } = gw.fakes;
    fal.setRunning(true);
    const headers = { 'Idempotency-Key': 'fal-order-1' };
    expect((await post(gw, FAL_MODEL, headers)).status).toBe(504);
    const retry = await post(gw, FAL_MODEL, headers).timeout(10_000);
    expect(retry.status).toBe(409);
    expect(fal.submits()).toBe(1);
    fal.setRunning(false);
    await expect.poll(async () => (await post(gw, FAL_MODEL, headers)).status, { timeout: 10_000, interval: 200 }).toBe(200);
    expect(fal.submits()).toBe(1);
  });

  it('with an Idempotency-Key (run on fal as its own task): followed only up to keptWorkSeconds, then cancelled at fal', async () => {
    const gw = await start(1);
    const { fal } = gw.fakes;
    fal.setRunning(true);
    expect((await post(gw, FAL_MODEL, { 'Idempotency-Key': 'fal-order-2' })).status).toBe(504);
    const { requestId } = fal.inputs().at(-1)!;
    await expect.poll(() => fal.cancels(), { timeout: 10_000 }).toEqual([requestId]);
    expect(fal.submits()).toBe(1);
    await expectBooksBalance(gw, fal.started().length);
  });
});

describe('Replicate: the same rule', () => {
  it('a prediction still processing past the answer deadline is followed up to keptWorkSeconds, then canceled; the books hold it as absorbed', async () => {
    const { gw, replicate } = await startHeldReplicate(1);
    const answer = await post(gw, REPLICATE_MODEL);
    expect(answer.status).toBe(504);
    const [created] = [...replicate.predictions.keys()];
    await expect.poll(() => replicate.cancels(), { timeout: 10_000 }).toEqual([created]);
    expect(replicate.created()).toBe(1);
    await expectBooksBalance(gw, replicate.created());
    expect(absorbedImages(gw.usage)).toBe(1);
  });

  it('a retry that joins a running prediction is answered within its own deadline, and creates nothing', async () => {
    const { gw, replicate, release } = await startHeldReplicate(60);
    expect((await post(gw, REPLICATE_MODEL)).status).toBe(504);
    const retry = await post(gw, REPLICATE_MODEL, { 'x-stainless-retry-count': '1' }).timeout(10_000);
    expect(retry.status).toBe(504);
    expect(replicate.created()).toBe(1);
    release();
    await expect.poll(async () => (await post(gw, REPLICATE_MODEL, { 'x-stainless-retry-count': '2' })).status, { timeout: 10_000, interval: 200 }).toBe(200);
    expect(replicate.created()).toBe(1);
    expect(replicate.cancels()).toEqual([]);
    await expectBooksBalance(gw, replicate.created());
    await expect.poll(() => chargedImages(gw.usage), { timeout: 10_000 }).toBe(1);
  });

  it('a prediction Replicate no longer knows (404 on its read) ends at once as a 502, not at the deadline; the books hold it as possibly made', async () => {
    // a deadline far off: only the 404 can end the wait
    const { gw, replicate } = await startHeldReplicate(60, 60_000);
    replicate.settings.goneOnRead = true;
    const answer = await post(gw, REPLICATE_MODEL);
    expect(answer.status).toBe(502);
    expect(answer.body.error).toMatchObject({ code: 'upstream_bad_response' });
    // read once: a prediction that is gone is not read again
    expect(replicate.polls()).toHaveLength(1);
    expect(replicate.created()).toBe(1);
    await expectBooksBalance(gw, replicate.created());
    expect(gw.usage).toMatchObject([{ status: 502, images: 0, absorbedImages: 1, vendorWork: { attempts: [{ provider: 'replicate', outcome: 'unknown' }] } }]);
  });

  it('with an Idempotency-Key (run on Replicate as its own task): a prediction gone on its read is booked as possibly made too, not as failed', async () => {
    const { gw, replicate } = await startHeldReplicate(60, 60_000);
    replicate.settings.goneOnRead = true;
    const answer = await post(gw, REPLICATE_MODEL, { 'Idempotency-Key': 'replicate-order-gone' });
    expect(answer.status).toBe(502);
    expect(answer.body.error).toMatchObject({ code: 'upstream_bad_response' });
    expect(replicate.created()).toBe(1);
    await expectBooksBalance(gw, replicate.created());
    expect(gw.usage).toMatchObject([{ status: 502, images: 0, absorbedImages: 1, vendorWork: { attempts: [{ provider: 'replicate', outcome: 'unknown' }] } }]);
  });
});
