// The books a SaaS bills from (docs/tenancy-and-billing.md "Billing contract"), path by path: every image
// and second a vendor may bill is in the usage events once (`vendorWork`), the tenant is charged for what
// it received and for work lost by its own act (`images`, `undeliveredImages`, `cost`), work lost by the
// vendor or the gateway is shown as the operator's (`absorbedImages`), per-request fees are taken once and
// never on a read, and the quota and budget counters say what the events say. Real HTTP against fakes
// that count the generations they start; the official `openai` SDK at its default retries.
import net from 'node:net';
import OpenAI from 'openai';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import type { GatewayOptions, TenancyOptions, UsageEvent } from '../../lib/index.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { GEMINI_KEY, startFakeGemini } from '../helpers/fake-gemini.js';
import { type GenerationScript, OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import type { RecordedRequest } from '../helpers/fake-upstream.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { type GatewayFixture, gatewayWith } from '../helpers/gateway-with.js';
import { imageTaskEnded } from '../helpers/image-task-ended.js';
import { absorbedImages, accountedImages, chargedImages, costOf, keptImages, ledger, quotaUsedBy, settledKeptImages, vendorImages, vendorSeconds } from '../helpers/ledger-books.js';
import { generationTags, postAndLeave } from '../helpers/paid-work.js';

const FEE = 0.01;
const GEMINI_MODEL = 'gemini-3-pro-image-preview';
const VIDEO_MODEL = 'doubao-seedance-1-5-pro-251215';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The price table every test bills by: a fee per billable request, images by the size asked. */
const PRICES = {
  gpt: { '1024x1024': 0.05, '1536x1024': 0.07, default: 0.04 },
  qwen: { '1024x1024': 0.03, '2048x2048': 0.08, default: 0.1 },
  plus: { '2048x2048': 0.08, default: 0.04 },
  gemini: 0.039,
  videoSecond: 0.1,
};
const pricing: TenancyOptions['pricing'] = {
  currency: 'USD',
  models: {
    'gpt-image-1': { request: FEE, image: { default: PRICES.gpt.default, by: { '1024x1024': PRICES.gpt['1024x1024'], '1536x1024': PRICES.gpt['1536x1024'] } } },
    'x-image-2.0': { request: FEE, image: { default: PRICES.qwen.default, by: { '1024x1024': PRICES.qwen['1024x1024'], '2048x2048': PRICES.qwen['2048x2048'] } } },
    'x-image-plus': { request: FEE, image: { default: PRICES.plus.default, by: { '2048x2048': PRICES.plus['2048x2048'] } } },
    'gemini-image': { request: FEE, image: PRICES.gemini },
    'doubao-seedance-1-5-pro*': { request: FEE, videoSecond: PRICES.videoSecond },
  },
};

const fakes = { images: startFakePaidImages, gemini: startFakeGemini, ark: startFakeArk };
type Fixture = GatewayFixture<typeof fakes>;

/** A gateway in front of the counting fakes, priced, with an images quota and a money budget. */
function start(options: Partial<GatewayOptions> & { timeoutMs?: number } = {}): Promise<Fixture> {
  const { timeoutMs, ...rest } = options;
  const deadline = timeoutMs !== undefined ? { timeoutMs } : {};
  return gatewayWith(
    {
      fakes,
      resolve: ({ model, route }, { images, gemini, ark }) => {
        if (route === 'video.tasks') return { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-key' };
        if (model === 'x-image-2.0') return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-2.0', ...deadline };
        if (model === 'x-image-plus') return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-plus', ...deadline };
        if (model === 'gemini-image') return { provider: 'gemini', baseURL: gemini.baseURL, apiKey: GEMINI_KEY, model: GEMINI_MODEL };
        if (model === 'gpt-image-1') return { provider: 'openai', baseURL: images.openaiBaseURL, apiKey: 'oa-key', ...deadline };
        return null;
      },
      tenancy: { pricing: pricing, quotas: { limits: { imagesPerMinute: 1_000, budget: 100 } } },
      callbacks: { pollIntervalsMs: { image: [1000] } },
    },
    rest,
  );
}

const auth = { Authorization: `Bearer ${KEY_A}` };
const post = (gw: Fixture, body: Record<string, unknown>, headers: Record<string, string> = {}) => request(gw.app).post(OPENAI_IMAGES).set(auth).set(headers).send(body);
const taskEventsOf = (gw: Fixture, id: string) => gw.usage.filter((event) => event.task?.id === id);

/** Waits until the fakes' work is over and the events have come, then a moment for late settlements. */
async function settled(gw: Fixture, events: number): Promise<UsageEvent[]> {
  await gw.fakes.images.settled();
  await vi.waitFor(() => expect(gw.usage.length).toBeGreaterThanOrEqual(events), { timeout: 10_000, interval: 50 });
  return gw.usage;
}

/** The quota and budget counters agree with the events: images charged (and kept, until settled), money spent. */
async function expectCountersAgree(gw: Fixture, events: readonly UsageEvent[]): Promise<void> {
  const held = keptImages(events) - settledKeptImages(events);
  expect(await quotaUsedBy(gw.router, 'tenant-a', 'images'), 'the imagesPerMinute counter = Σ (images + undeliveredImages) + kept').toBe(chargedImages(events) + held);
  expect(await quotaUsedBy(gw.router, 'tenant-a', 'budget'), 'the budget counter = Σ cost').toBeCloseTo(costOf(events), 6);
}

/** Posts a stream and leaves once the upstream started work on it (a raw client; the SDK cannot leave before an event). */
async function streamAndLeave(gw: Fixture, body: Record<string, unknown>): Promise<void> {
  const before = gw.fakes.images.started();
  const controller = new AbortController();
  const sent = fetch(`${gw.url}${OPENAI_IMAGES}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
    signal: controller.signal,
  }).then(
    (response) => response.arrayBuffer(),
    () => undefined,
  );
  await vi.waitFor(() => expect(gw.fakes.images.started()).toBeGreaterThan(before), { timeout: 5_000, interval: 10 });
  controller.abort();
  await sent.catch(() => undefined);
}

/** Writes a request on a raw socket and closes it at once, before any answer: a client that left as it asked. */
async function sendAndLeave(req: Request): Promise<void> {
  const url = new URL(req.url);
  const body = Buffer.from(await req.arrayBuffer());
  const headers = [...req.headers.entries()].filter(([name]) => name !== 'content-length' && name !== 'connection');
  const head = [
    `${req.method} ${url.pathname}${url.search} HTTP/1.1`,
    `host: ${url.host}`,
    ...headers.map(([name, value]) => `${name}: ${value}`),
    `content-length: ${body.length}`,
    'connection: close',
    '',
    '',
  ].join('\r\n');
  await new Promise<void>((resolve, reject) => {
    // the whole request, then the socket closed: the client reads nothing of the answer
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(Buffer.concat([Buffer.from(head), body]), () => socket.destroy()));
    socket.on('error', reject);
    socket.on('close', () => resolve());
  });
  // give the gateway a moment to see the close
  await sleep(200);
}

/** Scripts the fake per request, by a marker in the request's bytes (its prompt). */
function scriptBy(gw: Fixture, scripts: Record<string, GenerationScript>): void {
  gw.fakes.images.script = (recorded: RecordedRequest) => {
    const text = recorded.body.toString('utf8');
    return Object.entries(scripts).find(([marker]) => text.includes(marker))?.[1];
  };
}

describe('the books of each path', () => {
  it('a relayed stream the client cuts after its partial images: the image is charged as undelivered (stream cut), not given back', async () => {
    const gw = await start();
    gw.fakes.images.workMs = 1_500;
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });
    const stream = await client.images.generate({ model: 'gpt-image-1', prompt: 'a paper crane', size: '1024x1024', stream: true, partial_images: 2 });
    const seen: string[] = [];
    for await (const event of stream) {
      seen.push(event.type);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual(['image_generation.partial_image', 'image_generation.partial_image']);
    const events = await settled(gw, 1);
    expect(gw.fakes.images.imagesMade()).toBe(1);
    expect(await quotaUsedBy(gw.router, 'tenant-a', 'images'), 'the images quota keeps the image of the cut stream').toBe(1);
    expect(costOf(events), 'the cut stream costs its image and the fee').toBeCloseTo(PRICES.gpt['1024x1024'] + FEE, 6);
    expect(chargedImages(events), 'images + undeliveredImages: the cut stream is charged its image').toBe(1);
    expect(ledger(events)[0]).toMatchObject({ images: 0, undeliveredImages: 1, undeliveredSizes: ['1024x1024'], lostBy: 'stream_cut' });
    expect(vendorImages(events), 'vendorWork.images = what the fake made').toBe(1);
    expect(ledger(events)[0]!.vendorWork?.attempts).toMatchObject([{ provider: 'openai', images: 1 }]);
    await expectCountersAgree(gw, events);
  });

  it('a relayed stream for n: 1 that the upstream answers with 5 completed images: the client gets 1, the other 4 are vendor work absorbed', async () => {
    const gw = await start();
    scriptBy(gw, { 'five for one': { extraImages: 4 } });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });
    const stream = await client.images.generate({ model: 'gpt-image-1', prompt: 'five for one', size: '1024x1024', n: 1, stream: true });
    const completed: string[] = [];
    for await (const event of stream) if (event.type === 'image_generation.completed') completed.push(event.type);
    const events = await settled(gw, 1);
    expect(gw.fakes.images.imagesMade()).toBe(5);
    expect(completed, 'completed events delivered for n: 1').toHaveLength(1);
    expect(ledger(events)[0]).toMatchObject({ images: 1, absorbedImages: 4, vendorWork: { images: 5 } });
    expect(accountedImages(events)).toBe(5);
    expect(costOf(events)).toBeCloseTo(PRICES.gpt['1024x1024'] + FEE, 6);
    await expectCountersAgree(gw, events);
  });

  it('streams the client leaves early, relayed and whole-answer: each event says the image is undelivered, as the quota counts it', async () => {
    const gw = await start();
    gw.fakes.images.workMs = 1_000;
    await streamAndLeave(gw, { model: 'gpt-image-1', prompt: 'relayed, left', size: '1024x1024' });
    await streamAndLeave(gw, { model: 'x-image-2.0', prompt: 'whole answer, left', size: '1024x1024' });
    const events = await settled(gw, 2);
    await sleep(300);
    expect(chargedImages(events), 'Σ (images + undeliveredImages) = what the images quota kept').toBe(await quotaUsedBy(gw.router, 'tenant-a', 'images'));
    expect(chargedImages(events), 'both cut streams charged their image').toBe(2);
    for (const event of ledger(events)) expect(event).toMatchObject({ images: 0, undeliveredImages: 1, lostBy: 'stream_cut', vendorWork: { images: 1 } });
    expect(vendorImages(events)).toBe(gw.fakes.images.imagesMade());
    expect(costOf(events)).toBeCloseTo(PRICES.gpt['1024x1024'] + PRICES.qwen['1024x1024'] + 2 * FEE, 6);
    await expectCountersAgree(gw, events);
  });

  it('a kept answer delivered to the retry (client left; or answered 504 at the deadline) is billed on the retry: images, cost, kept, and no vendor work of its own', async () => {
    // the client left while the upstream worked, and retried after the work was over
    const left = await start();
    left.fakes.images.workMs = 800;
    const body = JSON.stringify({ model: 'x-image-2.0', prompt: 'kept for the retry', size: '1024x1024' });
    await postAndLeave({ url: left.url, path: OPENAI_IMAGES, key: KEY_A, body, upstream: left.fakes.images });
    await left.fakes.images.settled();
    await sleep(200);
    const retry = await request(left.app).post(OPENAI_IMAGES).set(auth).set('Content-Type', 'application/json').send(body);
    expect(retry.status).toBe(200);
    expect(retry.headers['x-kept-answer']).toBe('true');
    let events = await settled(left, 2).catch(() => left.usage);
    expect(costOf(events), 'the delivered image is billed once: its price and one fee').toBeCloseTo(PRICES.qwen['1024x1024'] + FEE, 6);
    const [first, delivery] = ledger(events);
    expect(first).toMatchObject({ keptImages: 1, vendorWork: { images: 1 } });
    expect(delivery).toMatchObject({ images: 1, kept: { images: 1 }, vendorWork: { images: 0, attempts: [] }, cost: { amount: expect.closeTo(PRICES.qwen['1024x1024'] + FEE, 6) as number } });
    expect(vendorImages(events)).toBe(left.fakes.images.imagesMade());
    expect(accountedImages(events)).toBe(1);
    await expectCountersAgree(left, events);

    // the gateway's deadline answered 504 while the work went on; the retry receives it
    const late = await start({ timeoutMs: 500 });
    late.fakes.images.workMs = 1_200;
    const first504 = await post(late, { model: 'x-image-2.0', prompt: 'late', size: '1024x1024' });
    expect(first504.status).toBe(504);
    await late.fakes.images.settled();
    await sleep(200);
    const taken = await post(late, { model: 'x-image-2.0', prompt: 'late', size: '1024x1024' });
    expect(taken.headers['x-kept-answer']).toBe('true');
    events = await settled(late, 2).catch(() => late.usage);
    expect(costOf(events)).toBeCloseTo(PRICES.qwen['1024x1024'] + FEE, 6);
    expect(ledger(events).find((event) => event.kept)).toMatchObject({ images: 1, kept: { images: 1 }, vendorWork: { images: 0 } });
    expect(vendorImages(events)).toBe(1);
    await expectCountersAgree(late, events);
  });

  it('a kept answer taken for a retry whose client left goes back to the store: the next retry gets it (openai SDK, short timeout, default retries), one generation', async () => {
    const gw = await start();
    const release = gw.fakes.images.hold();
    let attempts = 0;
    const client = new OpenAI({
      baseURL: `${gw.url}/v1`,
      apiKey: KEY_A,
      timeout: 1_000,
      fetch: async (input, init) => {
        attempts += 1;
        // the first try times out while the upstream works; its work ends once its client has left
        if (attempts === 1) init?.signal?.addEventListener('abort', () => void sleep(200).then(release));
        if (attempts === 2) {
          // the retry comes once the answer is kept, and its client leaves as soon as the request is sent
          await gw.fakes.images.settled();
          await sleep(300);
          await sendAndLeave(new Request(input, init));
          throw new TypeError('fetch failed: the client left');
        }
        if (attempts >= 3) await sleep(300);
        return fetch(input, init);
      },
    });
    const image = await client.images.generate({ model: 'x-image-2.0', prompt: 'taken and lost', size: '1024x1024' }).catch((error: unknown) => error);
    release();
    expect(attempts).toBe(3);
    expect(gw.fakes.images.started(), 'generations for one client call').toBe(1);
    expect(image).not.toBeInstanceOf(Error);
    expect(new Set(generationTags(JSON.stringify(image)))).toEqual(new Set(['generation-1-0']));
    // the first try's (vendor work, kept) and the delivering retry's; the retry that left received nothing and made nothing
    const events = await settled(gw, 2);
    expect(vendorImages(events)).toBe(1);
    expect(chargedImages(events)).toBe(1);
    expect(ledger(events).filter((event) => event.images > 0)).toMatchObject([{ images: 1, kept: { images: 1 } }]);
    expect(costOf(events)).toBeCloseTo(PRICES.qwen['1024x1024'] + FEE, 6);
    await expectCountersAgree(gw, events);
  });

  it('a fan-out (Gemini n: 2) with one call failing after its image was made: 1 delivered, the other made and absorbed, nothing dropped', async () => {
    const gw = await start();
    let failed = false;
    gw.fakes.gemini.failAfterMaking = () => !failed && (failed = true);
    const answer = await post(gw, { model: 'gemini-image', prompt: 'two cats', n: 2, response_format: 'b64_json' });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toHaveLength(1);
    const events = await settled(gw, 1);
    expect(gw.fakes.gemini.imagesMade()).toBe(2);
    expect(accountedImages(events), 'images + undelivered + absorbed = what Gemini made').toBe(2);
    expect(ledger(events)[0]).toMatchObject({ images: 1, absorbedImages: 1, vendorWork: { images: 2 } });
    expect(ledger(events)[0]!.vendorWork?.attempts).toHaveLength(2);
    expect(costOf(events)).toBeCloseTo(PRICES.gemini + FEE, 6);
    await expectCountersAgree(gw, events);
  });

  it('an upstream that made the image and answered 500: the event records the vendor work, absorbed by default, charged as undelivered with tenancy.chargeFailedWork', async () => {
    const gw = await start();
    scriptBy(gw, { 'made then 500': { failAfterWork: 500 } });
    const failedAnswer = await post(gw, { model: 'gpt-image-1', prompt: 'made then 500', size: '1024x1024' });
    expect(failedAnswer.status).toBeGreaterThanOrEqual(500);
    expect(failedAnswer.headers['x-should-retry'], 'the answer says the work may have been paid').toBe('false');
    const events = await settled(gw, 1);
    expect(gw.fakes.images.imagesMade()).toBe(1);
    expect(accountedImages(events), 'the events account for the image the vendor made').toBe(1);
    expect(ledger(events)[0]).toMatchObject({ images: 0, absorbedImages: 1, lostBy: 'upstream', vendorWork: { images: 1 } });
    expect(['made', 'unknown']).toContain(ledger(events)[0]!.vendorWork?.attempts[0]?.outcome);
    expect(chargedImages(events)).toBe(0);
    expect(costOf(events)).toBe(0);
    await expectCountersAgree(gw, events);

    // the documented option charges the tenant for it instead
    const charging = gw.variant({
      tenancy: { pricing: pricing, quotas: { limits: { imagesPerMinute: 1_000, budget: 100 } } },
      ...({ tenancy: { chargeFailedWork: true } } as Partial<GatewayOptions>),
    });
    await request(charging.app).post(OPENAI_IMAGES).set(auth).send({ model: 'gpt-image-1', prompt: 'made then 500, charged', size: '1024x1024' });
    await gw.fakes.images.settled();
    await vi.waitFor(() => expect(charging.usage).toHaveLength(1));
    expect(ledger(charging.usage)[0]).toMatchObject({ images: 0, undeliveredImages: 1, vendorWork: { images: 1 } });
    expect(ledger(charging.usage)[0]!.absorbedImages ?? 0, 'nothing absorbed when the tenant is charged').toBe(0);
    expect(costOf(charging.usage)).toBeCloseTo(PRICES.gpt['1024x1024'] + FEE, 6);
    expect(await quotaUsedBy(charging.router, 'tenant-a', 'images')).toBe(1);
  });

  it('per-request fees once: on a task submit and never on its terminal event (succeeded or failed); never on a video task query', async () => {
    const gw = await start();
    scriptBy(gw, { 'refused task': { refuse: 400 } });
    const ok = await post(gw, { model: 'x-image-2.0', prompt: 'a task', size: '1024x1024' }, { Prefer: 'respond-async' });
    expect(ok.status).toBe(202);
    expect((await imageTaskEnded(gw.app, ok.body.id as string, KEY_A)).status).toBe('succeeded');
    const bad = await post(gw, { model: 'x-image-2.0', prompt: 'refused task', size: '1024x1024' }, { Prefer: 'respond-async' });
    expect((await imageTaskEnded(gw.app, bad.body.id as string, KEY_A)).status).toBe('failed');
    await vi.waitFor(() => expect(taskEventsOf(gw, bad.body.id as string)).toHaveLength(1));
    const imageTask = gw.usage.filter((event) => event.route === 'images.generations');
    expect(costOf(imageTask), 'two submits, one image: two fees and one image').toBeCloseTo(PRICES.qwen['1024x1024'] + 2 * FEE, 6);
    for (const id of [ok.body.id as string, bad.body.id as string]) {
      const terminal = taskEventsOf(gw, id);
      expect(terminal).toHaveLength(1);
      expect(terminal[0]!.cost?.amount ?? 0, `${terminal[0]!.task?.status} terminal event: no fee`).toBeCloseTo(terminal[0]!.task?.status === 'succeeded' ? PRICES.qwen['1024x1024'] : 0, 6);
    }

    // a video task, polled to its end and then read three more times
    const created = await request(gw.app)
      .post('/api/v3/contents/generations/tasks')
      .set(auth)
      .send({ model: VIDEO_MODEL, content: [{ type: 'text', text: 'a cat' }], duration: 5 });
    expect(created.status).toBe(200);
    let status = '';
    for (let read = 0; read < 10 && status !== 'succeeded'; read += 1)
      status = (
        await request(gw.app)
          .get(`/api/v3/contents/generations/tasks/${created.body.id as string}`)
          .set(auth)
      ).body.status as string;
    expect(status).toBe('succeeded');
    for (let read = 0; read < 3; read += 1)
      await request(gw.app)
        .get(`/api/v3/contents/generations/tasks/${created.body.id as string}`)
        .set(auth);
    await vi.waitFor(() => expect(taskEventsOf(gw, created.body.id as string)).toHaveLength(1));
    const video = gw.usage.filter((event) => event.route === 'video.tasks');
    expect(costOf(video), 'one create fee and 5 s of video').toBeCloseTo(FEE + 5 * PRICES.videoSecond, 6);
    expect(vendorSeconds(video)).toBe(5);
    await expectCountersAgree(gw, gw.usage);
  });

  it('images are priced at the size asked when the answer names none, on sync answers and image tasks; undelivered images carry their sizes', async () => {
    const gw = await start();
    // the OpenAI-compatible answer names no size
    const sync = await post(gw, { model: 'gpt-image-1', prompt: 'a wide one', size: '1536x1024' });
    expect(sync.status).toBe(200);
    await vi.waitFor(() => expect(gw.usage).toHaveLength(1));
    expect(gw.usage[0]!.cost?.amount).toBeCloseTo(PRICES.gpt['1536x1024'] + FEE, 6);
    expect(sync.headers['x-request-cost']).toBe(`${gw.usage[0]!.cost?.amount} USD`);

    // DashScope's asynchronous synthesis reports a count, no size
    const task = await post(gw, { model: 'x-image-plus', prompt: 'a big one', size: '2048x2048' }, { Prefer: 'respond-async' });
    expect(task.status).toBe(202);
    expect((await imageTaskEnded(gw.app, task.body.id as string, KEY_A)).status).toBe('succeeded');
    await vi.waitFor(() => expect(taskEventsOf(gw, task.body.id as string)).toHaveLength(1));
    expect(taskEventsOf(gw, task.body.id as string)[0]!.cost?.amount).toBeCloseTo(PRICES.plus['2048x2048'], 6);

    // a running task cancelled: its image is charged undelivered, at the size asked
    const release = gw.fakes.images.hold();
    const cancelled = await post(gw, { model: 'x-image-2.0', prompt: 'cancelled while running', size: '2048x2048' }, { Prefer: 'respond-async' });
    await vi.waitFor(() => expect(gw.fakes.images.generations.some((generation) => generation.request.body.includes('cancelled while running'))).toBe(true));
    expect(
      (
        await request(gw.app)
          .post(`/v1/images/tasks/${cancelled.body.id as string}/cancel`)
          .set(auth)
      ).body.status,
    ).toBe('cancelled');
    release();
    await gw.fakes.images.settled();
    await vi.waitFor(() => expect(taskEventsOf(gw, cancelled.body.id as string)).toHaveLength(1));
    const terminal = ledger(taskEventsOf(gw, cancelled.body.id as string))[0]!;
    expect(terminal).toMatchObject({ images: 0, undeliveredImages: 1, undeliveredSizes: ['2048x2048'], lostBy: 'cancelled' });
    expect(terminal.cost?.amount).toBeCloseTo(PRICES.qwen['2048x2048'], 6);
    await expectCountersAgree(gw, gw.usage);
  });

  it('a DashScope asynchronous task cancelled while running, whose upstream task then fails: nothing made, nothing charged but the submit', async () => {
    const gw = await start();
    scriptBy(gw, { 'fails upstream': { taskFails: true } });
    const release = gw.fakes.images.hold();
    const task = await post(gw, { model: 'x-image-plus', prompt: 'fails upstream' }, { Prefer: 'respond-async' });
    expect(task.status).toBe(202);
    // running: submitted upstream, and its upstream task read at least once
    await vi.waitFor(() => expect(gw.fakes.images.requests.some((recorded) => recorded.method === 'GET' && recorded.path.startsWith('/api/v1/tasks/'))).toBe(true), { timeout: 10_000 });
    expect(
      (
        await request(gw.app)
          .post(`/v1/images/tasks/${task.body.id as string}/cancel`)
          .set(auth)
      ).body.status,
    ).toBe('cancelled');
    release();
    await gw.fakes.images.settled();
    expect(gw.fakes.images.imagesMade()).toBe(0);
    await vi.waitFor(() => expect(taskEventsOf(gw, task.body.id as string)).toHaveLength(1), { timeout: 10_000 });
    const terminal = ledger(taskEventsOf(gw, task.body.id as string))[0]!;
    expect(terminal.undeliveredImages ?? 0, 'undelivered images of a task whose upstream made nothing').toBe(0);
    expect(terminal).toMatchObject({ images: 0, vendorWork: { images: 0 } });
    expect(absorbedImages(gw.usage)).toBe(0);
    expect(costOf(gw.usage), 'the submit fee only').toBeCloseTo(FEE, 6);
    await expectCountersAgree(gw, gw.usage);
  });
});
