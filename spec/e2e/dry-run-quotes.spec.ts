// Quotes before work (docs/tenancy-and-billing.md "Quotes before work"): every billable create sent with
// `Prefer: dry-run` is checked as the real request would be (validation, the resolver, the quotas) and
// answered 200 with its quote: the most it may cost by the price table, what it would take from each
// quota, the money left. The fake upstreams count every call: a quote makes none. No quota counter
// moves, no task is created, no Idempotency-Key is taken, no usage event is emitted; a quote the real
// request's quotas would refuse is that same 429, bad input the same 400. The numbers are checked
// against what the real request then reserves (its RateLimit headers). With REDIS_URL set, the same
// against counters two instances share in Redis.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { type GatewayOptions, type TenancyOptions, type Quote, type QuotaLimits, type TaskRecord, memoryTaskStore } from '../../lib/index.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A, type TestGateway } from '../helpers/gateway-app.js';
import { type GatewayFixture, gatewayWith } from '../helpers/gateway-with.js';
import { imageTaskEnded } from '../helpers/image-task-ended.js';
import { TINY_PNG } from '../helpers/images.js';

const REDIS_URL = process.env.REDIS_URL;
const GENERATIONS = '/v1/images/generations';
const EDITS = '/v1/images/edits';
const NATIVE = '/api/v3/images/generations';
const VIDEO = '/api/v3/contents/generations/tasks';
const CALLER = { id: 'tenant-a' };
const SEEDANCE = 'doubao-seedance-1-5-pro-251215';
const auth = { Authorization: `Bearer ${KEY_A}` };
const DRY_RUN = { Prefer: 'dry-run' };

const PRICING: NonNullable<TenancyOptions['pricing']> = {
  currency: 'USD',
  models: {
    // a size no row names costs the default: with no size asked, the dearest is reserved
    'x-image-2.0*': { image: { default: 0.1, by: { '1024x1024': 0.04 } } },
    'x-image-edit': { image: 0.03 },
    'x-seedream': { image: 0.03 },
    'doubao-seedance-1-5-pro*': { videoSecond: { default: 0.05, by: { '720p': 0.02 } } },
  },
};
const LIMITS: QuotaLimits = { requestsPerMinute: 100, imagesPerMinute: 50, videoSecondsPerDay: 600, concurrentVideoTasks: 5, budget: 25 };

type Fakes = { images: typeof startFakePaidImages; ark: typeof startFakeArk };
type Fixture = GatewayFixture<Fakes> & { tasksCreated: string[] };

/** A gateway of its own for one test (fresh counters), on fakes that count every call, with a task store that counts creates. */
async function start(options: Partial<GatewayOptions> = {}): Promise<Fixture> {
  const store = memoryTaskStore();
  const tasksCreated: string[] = [];
  const createTask = store.createTask.bind(store);
  store.createTask = (record: TaskRecord) => {
    tasksCreated.push(record.id);
    return createTask(record);
  };
  const gw = await gatewayWith<Fakes>(
    {
      fakes: { images: startFakePaidImages, ark: startFakeArk },
      resolve: ({ model, route }, { images, ark }) => {
        if (route === 'video.tasks') return { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-key' };
        if (route === 'images.native') return { provider: 'ark', baseURL: images.arkBaseURL, apiKey: 'ark-key', model: 'doubao-seedream-4-0-250828' };
        if (model === 'x-image-edit') return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-edit-plus' };
        if (model.startsWith('x-image-2.0')) return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-2.0' };
        return null;
      },
      tenancy: { pricing: PRICING, quotas: { limits: LIMITS } },
      store,
    },
    options,
  );
  return Object.assign(gw, { tasksCreated });
}

/** What each of the caller's limits has left (the reset times tick with the clock; the counts do not). */
async function quotaLeft(gw: TestGateway): Promise<Array<{ name: string; limit: number; remaining: number }>> {
  return (await gw.router.quota(CALLER)).map(({ name, limit, remaining }) => ({ name, limit, remaining }));
}

/** Every call the fakes received: a quote adds none. */
const upstreamCalls = (gw: Fixture): number => gw.fakes.images.requests.length + gw.fakes.ark.requests.length;

const post = (app: TestGateway['app'], path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => request(app).post(path).set(auth).set(headers).send(body);

const editForm = (app: TestGateway['app'], fields: Record<string, string>, headers: Record<string, string> = {}) => {
  let req = request(app).post(EDITS).set(auth).set(headers);
  for (const [name, value] of Object.entries(fields)) req = req.field(name, value);
  return req.attach('image', TINY_PNG, { filename: 'in.png', contentType: 'image/png' });
};

/** What each limit's `RateLimit` member says remains after a real request's charge (`"images";r=48;t=60`). */
function remainingOf(res: request.Response): Record<string, number> {
  const header = String(res.headers.ratelimit ?? '');
  return Object.fromEntries([...header.matchAll(/"([^"]+)";r=(\d+)/g)].map((match) => [match[1]!, Number(match[2])]));
}

/** The quote of a 200 answer, with the headers every quote carries. */
function quoteOf(res: request.Response): Quote {
  expect(res.status, res.text.slice(0, 200)).toBe(200);
  expect(res.headers['preference-applied']).toBe('dry-run');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  // a quote charged nothing: no RateLimit fields of a charge
  expect(res.headers.ratelimit).toBeUndefined();
  return res.body as Quote;
}

/**
 * Quotes with `quote`, asserting that nothing moved (no upstream call, the same quota state, no usage
 * event, no task), then runs the real request with `real` and checks that it reserved what the quote said.
 */
async function quoteThenRun(gw: Fixture, quote: () => request.Test, real: () => request.Test): Promise<{ quote: Quote; real: request.Response }> {
  const calls = upstreamCalls(gw);
  const events = gw.usage.length;
  const before = await quotaLeft(gw);
  const quoted = quoteOf(await quote());
  expect(upstreamCalls(gw), 'upstream calls of the quote').toBe(calls);
  expect(await quotaLeft(gw), 'quota state after the quote').toEqual(before);
  expect(gw.usage.length, 'usage events of the quote').toBe(events);
  expect(gw.tasksCreated, 'tasks created by the quote').toEqual([]);

  const res = await real();
  expect(res.status, res.text.slice(0, 200)).toBeLessThan(300);
  const left = remainingOf(res);
  const limit = (name: string): number => before.find((state) => state.name === name)!.limit;
  // what the real request reserved, read from its RateLimit fields: the limit less what remains after its charge
  const reserved: Record<string, number> = {};
  for (const [name, remaining] of Object.entries(left)) reserved[name] = name === 'budget' ? limit(name) * 1_000_000 - remaining : limit(name) - remaining;
  expect(Math.round((quoted.cost?.amount ?? 0) * 1_000_000), 'the quote is what a budget reserves').toBe(reserved.budget);
  expect(quoted.budget_remaining?.amount).toBeCloseTo(left.budget! / 1_000_000, 6);
  expect({
    requests: quoted.reserved.requests,
    images: quoted.reserved.images,
    'video-seconds': quoted.reserved.video_seconds,
    'video-tasks': quoted.reserved.video_tasks,
  }).toEqual({ requests: reserved.requests, images: reserved.images, 'video-seconds': reserved['video-seconds'], 'video-tasks': reserved['video-tasks'] });
  return { quote: quoted, real: res };
}

describe('Prefer: dry-run on each billable create', () => {
  it('POST /v1/images/generations: the quote is what the request then reserves, and nothing ran', async () => {
    const gw = await start();
    const body = { model: 'x-image-2.0', prompt: 'a lighthouse', n: 2, size: '1024x1024' };
    const { quote } = await quoteThenRun(
      gw,
      () => post(gw.app, GENERATIONS, body, DRY_RUN),
      () => post(gw.app, GENERATIONS, body),
    );
    expect(quote).toEqual({
      object: 'quote',
      model: 'x-image-2.0',
      cost: { amount: 0.08, currency: 'USD' },
      reserved: { requests: 1, images: 2, budget: { amount: 0.08, currency: 'USD' } },
      budget_remaining: { amount: 24.92, currency: 'USD' },
    });
    expect(gw.fakes.images.started()).toBe(1);
  });

  it('with no size asked, the dearest image of the row is quoted, as a budget reserves it', async () => {
    const gw = await start();
    const body = { model: 'x-image-2.0', prompt: 'a lighthouse', n: 3 };
    const { quote } = await quoteThenRun(
      gw,
      () => post(gw.app, GENERATIONS, body, DRY_RUN),
      () => post(gw.app, GENERATIONS, body),
    );
    expect(quote.cost).toEqual({ amount: 0.3, currency: 'USD' });
  });

  it('POST /v1/images/edits (multipart)', async () => {
    const gw = await start();
    const fields = { model: 'x-image-edit', prompt: 'make it snow', n: '2' };
    const { quote } = await quoteThenRun(
      gw,
      () => editForm(gw.app, fields, DRY_RUN),
      () => editForm(gw.app, fields),
    );
    expect(quote).toMatchObject({ model: 'x-image-edit', cost: { amount: 0.06, currency: 'USD' }, reserved: { requests: 1, images: 2 } });
  });

  it('POST /api/v3/images/generations (native): an image group is quoted at its max_images', async () => {
    const gw = await start();
    const body = { model: 'x-seedream', prompt: 'a paper boat', sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 3 }, response_format: 'url' };
    const { quote } = await quoteThenRun(
      gw,
      () => post(gw.app, NATIVE, body, DRY_RUN),
      () => post(gw.app, NATIVE, body),
    );
    expect(quote).toMatchObject({ model: 'x-seedream', cost: { amount: 0.09, currency: 'USD' }, reserved: { requests: 1, images: 3 } });
  });

  it('an image task (Prefer: respond-async, dry-run): the quote of the submit, and no task', async () => {
    const gw = await start();
    const body = { model: 'x-image-2.0', prompt: 'a lighthouse', n: 2, size: '1024x1024' };
    const { quote, real } = await quoteThenRun(
      gw,
      () => post(gw.app, GENERATIONS, body, { Prefer: 'respond-async, dry-run' }),
      () => post(gw.app, GENERATIONS, body, { Prefer: 'respond-async' }),
    );
    expect(real.status).toBe(202);
    expect(quote.reserved).toEqual({ requests: 1, images: 2, budget: { amount: 0.08, currency: 'USD' } });
    expect((await imageTaskEnded(gw.app, String(real.body.id), KEY_A)).status).toBe('succeeded');
    expect(gw.tasksCreated).toHaveLength(1);
  });

  it('the /async aliases quote too: POST /v1/images/edits/async', async () => {
    const gw = await start();
    const fields = { model: 'x-image-edit', prompt: 'make it snow' };
    let req = request(gw.app).post(`${EDITS}/async`).set(auth).set(DRY_RUN);
    for (const [name, value] of Object.entries(fields)) req = req.field(name, value);
    const before = upstreamCalls(gw);
    const quote = quoteOf(await req.attach('image', TINY_PNG, { filename: 'in.png', contentType: 'image/png' }));
    expect(quote).toMatchObject({ cost: { amount: 0.03, currency: 'USD' }, reserved: { requests: 1, images: 1 } });
    expect(upstreamCalls(gw)).toBe(before);
    expect(gw.tasksCreated).toEqual([]);
  });

  it('POST /api/v3/contents/generations/tasks: seconds and resolution as the charge reads them', async () => {
    const gw = await start();
    const body = { model: SEEDANCE, content: [{ type: 'text', text: 'a cat on a skateboard' }], duration: 5, resolution: '1080p' };
    const { quote } = await quoteThenRun(
      gw,
      () => post(gw.app, VIDEO, body, DRY_RUN),
      () => post(gw.app, VIDEO, body),
    );
    // 1080p has no price of its own: the dearest of the row
    expect(quote).toEqual({
      object: 'quote',
      model: SEEDANCE,
      cost: { amount: 0.25, currency: 'USD' },
      reserved: { requests: 1, video_seconds: 5, video_tasks: 1, budget: { amount: 0.25, currency: 'USD' } },
      budget_remaining: { amount: 24.75, currency: 'USD' },
    });
    expect(gw.tasksCreated).toHaveLength(1);
  });

  it('a video of duration -1 is quoted at the model’s longest; frames and --dur count as the charge counts them', async () => {
    const gw = await start();
    const video = (extra: Record<string, unknown>, text = 'a cat') => post(gw.app, VIDEO, { model: SEEDANCE, content: [{ type: 'text', text }], resolution: '720p', ...extra }, DRY_RUN);
    expect(quoteOf(await video({ duration: -1 }))).toMatchObject({ cost: { amount: 0.24 }, reserved: { video_seconds: 12 } });
    expect(quoteOf(await video({ frames: 121 }))).toMatchObject({ cost: { amount: 0.1 }, reserved: { video_seconds: 5 } });
    expect(quoteOf(await video({}, 'a cat --dur 8'))).toMatchObject({ cost: { amount: 0.16 }, reserved: { video_seconds: 8 } });
    expect(upstreamCalls(gw)).toBe(0);
    expect(gw.tasksCreated).toEqual([]);
  });

  it('stream: true is quoted as the stream would be charged, as one JSON answer', async () => {
    const gw = await start();
    const body = { model: 'x-image-2.0', prompt: 'a lighthouse', n: 2, size: '1024x1024' };
    const streamed = quoteOf(await post(gw.app, GENERATIONS, { ...body, stream: true }, DRY_RUN));
    expect(streamed).toEqual(quoteOf(await post(gw.app, GENERATIONS, body, DRY_RUN)));
    expect(upstreamCalls(gw)).toBe(0);
    // a task cannot stream, quoted or not
    const both = await post(gw.app, GENERATIONS, { ...body, stream: true }, { Prefer: 'respond-async, dry-run' });
    expect(both.status).toBe(400);
    expect(both.body.error.param).toBe('stream');
  });
});

describe('a quote is refused as the real request would be', () => {
  it('over the budget: the same 429 naming the budget, and the real request gets it too', async () => {
    const gw = await start({ tenancy: { quotas: { limits: { budget: 0.1 } } } });
    const body = { model: 'x-image-2.0', prompt: 'a lighthouse', n: 2, size: '1024x1024' };
    // 0.08 of 0.10 spent, then 0.08 more may not be
    expect((await post(gw.app, GENERATIONS, body)).status).toBe(200);
    const calls = upstreamCalls(gw);
    const before = await quotaLeft(gw);
    const quoted = await post(gw.app, GENERATIONS, body, DRY_RUN);
    expect(quoted.status).toBe(429);
    expect(quoted.body.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit_error' });
    expect(quoted.body.error.message).toBe('Budget exceeded: 0.10 USD per 86400 s (budget); this request may cost up to 0.08 USD and 0.02 USD remain. Retry in 86400 s.');
    expect(quoted.headers['ratelimit-policy']).toBe('"budget";q=100000;w=86400');
    expect(quoted.headers['preference-applied']).toBeUndefined();
    const real = await post(gw.app, GENERATIONS, body);
    expect(real.status).toBe(429);
    expect(quoted.body).toEqual(real.body);
    expect(upstreamCalls(gw)).toBe(calls);
    expect(await quotaLeft(gw)).toEqual(before);
  });

  it('more than the whole budget, and a quota of another kind (concurrent video tasks)', async () => {
    const gw = await start({ tenancy: { quotas: { limits: { budget: 0.1, concurrentVideoTasks: 1 } } } });
    const whole = await post(gw.app, GENERATIONS, { model: 'x-image-2.0', prompt: 'x', n: 4, size: '1024x1024' }, DRY_RUN);
    expect([whole.status, whole.body.error.message]).toEqual([429, 'This request may cost up to 0.16 USD, more than your whole budget of 0.10 USD per 86400 s.']);
    const video = { model: SEEDANCE, content: [{ type: 'text', text: 'a cat' }], duration: 4, resolution: '720p' };
    expect((await post(gw.app, VIDEO, video)).status).toBe(200);
    const quoted = await post(gw.app, VIDEO, video, DRY_RUN);
    const real = await post(gw.app, VIDEO, video);
    expect(quoted.status).toBe(429);
    expect(quoted.body.error.message).toMatch(/video tasks running at once/);
    expect(quoted.body).toEqual(real.body);
    expect(gw.fakes.ark.requests.filter((call) => call.method === 'POST')).toHaveLength(1);
  });

  it('bad input: the same 400 as the real request, and no upstream call', async () => {
    const gw = await start();
    const cases: Array<[string, () => request.Test]> = [
      ['n as text', () => post(gw.app, GENERATIONS, { model: 'x-image-2.0', prompt: 'x', n: 'two' }, DRY_RUN)],
      ['no model', () => post(gw.app, NATIVE, { prompt: 'x' }, DRY_RUN)],
      ['video lengths that disagree', () => post(gw.app, VIDEO, { model: SEEDANCE, content: [{ type: 'text', text: 'a cat --dur 8' }], duration: 5 }, DRY_RUN)],
      ['an edit with no image', () => request(gw.app).post(EDITS).set(auth).set(DRY_RUN).field('model', 'x-image-edit').field('prompt', 'x')],
    ];
    for (const [name, send] of cases) {
      const res = await send();
      expect([name, res.status, res.body.error?.type]).toEqual([name, 400, 'invalid_request_error']);
    }
    const real = await post(gw.app, GENERATIONS, { model: 'x-image-2.0', prompt: 'x', n: 'two' });
    expect((await cases[0]![1]()).body).toEqual(real.body);
    // a model the resolver does not route: the same 404
    const unrouted = await post(gw.app, GENERATIONS, { model: 'x-unknown', prompt: 'x' }, DRY_RUN);
    expect([unrouted.status, unrouted.body.error.code]).toEqual([404, 'model_not_found']);
    expect(upstreamCalls(gw)).toBe(0);
    // the real request's event only: a refused quote bills nothing either
    expect(gw.usage.map((event) => event.status)).toEqual([400]);
  });
});

describe('what a quote leaves alone', () => {
  it('takes no Idempotency-Key: the real request with the key runs once, and a later quote is still a quote', async () => {
    const gw = await start();
    const body = { model: 'x-image-2.0', prompt: 'a lighthouse', size: '1024x1024' };
    const key = { 'Idempotency-Key': 'order-4711-cover' };
    quoteOf(await post(gw.app, GENERATIONS, body, { ...key, ...DRY_RUN }));
    const real = await post(gw.app, GENERATIONS, body, key);
    expect(real.status).toBe(200);
    expect(real.headers['idempotent-replayed']).toBeUndefined();
    const again = quoteOf(await post(gw.app, GENERATIONS, body, { ...key, ...DRY_RUN }));
    expect(again.budget_remaining).toEqual({ amount: 24.92, currency: 'USD' });
    expect(gw.fakes.images.started()).toBe(1);
    // a malformed key is refused as for the real request
    expect((await post(gw.app, GENERATIONS, body, { 'Idempotency-Key': 'not a key', ...DRY_RUN })).status).toBe(400);
  });

  it('without quotas or prices: nothing reserved, no budget, and an unpriced model costs null', async () => {
    const gw = await start({ tenancy: { quotas: undefined, pricing: { currency: 'EUR', models: { 'x-image-2.0': { image: 0.05, request: 0.01 } } } } });
    const priced = quoteOf(await post(gw.app, GENERATIONS, { model: 'x-image-2.0', prompt: 'x', n: 2 }, DRY_RUN));
    expect(priced).toEqual({ object: 'quote', model: 'x-image-2.0', cost: { amount: 0.11, currency: 'EUR' }, reserved: {}, budget_remaining: null });
    const unpriced = quoteOf(await post(gw.app, GENERATIONS, { model: 'x-image-2.0-turbo', prompt: 'x' }, DRY_RUN));
    expect(unpriced).toMatchObject({ cost: null, reserved: {}, budget_remaining: null });
    expect(upstreamCalls(gw)).toBe(0);
  });

  it('an unpriced model under a budget reserves no money, and the budget left is still told', async () => {
    const gw = await start({ tenancy: { pricing: { currency: 'USD', models: {} } } });
    const quote = quoteOf(await post(gw.app, GENERATIONS, { model: 'x-image-2.0', prompt: 'x' }, DRY_RUN));
    expect(quote).toEqual({ object: 'quote', model: 'x-image-2.0', cost: null, reserved: { requests: 1, images: 1 }, budget_remaining: { amount: 25, currency: 'USD' } });
  });

  it('a route that gives no quote ignores the preference (RFC 7240) and says none was applied', async () => {
    const gw = await gatewayWith({ fakes: { llm: startFakeLlm }, resolve: (_input, { llm }) => ({ provider: 'openai', baseURL: llm.baseURL, apiKey: 'llm-key' }) });
    const res = await post(gw.app, '/v1/chat/completions', { model: 'x-chat', messages: [{ role: 'user', content: 'hi' }] }, DRY_RUN);
    expect(res.status).toBe(200);
    expect(res.headers['preference-applied']).toBeUndefined();
    expect(res.body.object).toBe('chat.completion');
    expect(gw.fakes.llm.requests).toHaveLength(1);
    expect(gw.usage).toHaveLength(1);
  });

  it('an unknown preference is ignored: the request runs', async () => {
    const gw = await start();
    const res = await post(gw.app, GENERATIONS, { model: 'x-image-2.0', prompt: 'x' }, { Prefer: 'dry-run-later' });
    expect(res.status).toBe(200);
    expect(res.headers['preference-applied']).toBeUndefined();
    expect(gw.fakes.images.started()).toBe(1);
  });
});

describe('the official openai SDK', () => {
  it('sends the preference as a header and reads the quote as JSON', async () => {
    const gw = await start();
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A, maxRetries: 0 });
    const { data, response } = await client.images.generate({ model: 'x-image-2.0', prompt: 'a lighthouse', n: 2, size: '1024x1024' }, { headers: { Prefer: 'dry-run' } }).withResponse();
    expect(response.headers.get('preference-applied')).toBe('dry-run');
    expect(data as unknown as Quote).toMatchObject({ object: 'quote', cost: { amount: 0.08, currency: 'USD' }, reserved: { images: 2 } });
    const posted = await client.post<Quote>('/images/generations', { body: { model: 'x-image-2.0', prompt: 'a lighthouse' }, headers: { Prefer: 'dry-run' } });
    expect(posted).toMatchObject({ object: 'quote', reserved: { requests: 1, images: 1 } });
    expect(upstreamCalls(gw)).toBe(0);
  });
});

describe.runIf(Boolean(REDIS_URL))('quotes against counters in Redis', () => {
  it('two instances: a quote reads what the other spent, moves nothing in Redis, and is refused as the real request', async () => {
    const prefix = `gw-dry-${randomBytes(4).toString('hex')}:quota:`;
    const clients = [new Redis(REDIS_URL!, { maxRetriesPerRequest: 1 }), new Redis(REDIS_URL!, { maxRetriesPerRequest: 1 })];
    const inspector = new Redis(REDIS_URL!);
    for (const client of clients) client.on('error', () => {});
    try {
      const limits: QuotaLimits = { imagesPerMinute: 10, budget: 0.2 };
      const a = await start({ tenancy: { quotas: { limits, redis: clients[0]!, prefix } } });
      const b = await start({ tenancy: { quotas: { limits, redis: clients[1]!, prefix } } });
      const body = { model: 'x-image-2.0', prompt: 'a lighthouse', n: 2, size: '1024x1024' };
      const counters = async (): Promise<Record<string, string | null>> => {
        const keys = (await inspector.keys(`${prefix}*`)).sort();
        return Object.fromEntries(await Promise.all(keys.map(async (key) => [key, await inspector.get(key)] as const)));
      };

      // nothing counted yet: a quote creates no key
      quoteOf(await post(b.app, GENERATIONS, body, DRY_RUN));
      expect(await counters()).toEqual({});
      expect((await post(a.app, GENERATIONS, body)).status).toBe(200);
      const spent = await counters();
      expect(Object.keys(spent).length).toBeGreaterThan(0);

      const quote = quoteOf(await post(b.app, GENERATIONS, body, DRY_RUN));
      expect(quote).toMatchObject({ reserved: { images: 2, budget: { amount: 0.08 } }, budget_remaining: { amount: 0.04, currency: 'USD' } });
      expect(await counters()).toEqual(spent);
      expect(await quotaLeft(b)).toEqual(await quotaLeft(a));

      // 0.12 left: four images may cost 0.16
      const refused = await post(b.app, GENERATIONS, { ...body, n: 4 }, DRY_RUN);
      expect(refused.status).toBe(429);
      expect(refused.body.error.message).toMatch(/^Budget exceeded: 0\.20 USD/);
      expect(refused.body).toEqual((await post(a.app, GENERATIONS, { ...body, n: 4 })).body);
      expect(await counters()).toEqual(spent);
      expect(a.fakes.images.started() + b.fakes.images.started()).toBe(1);
    } finally {
      const keys = await inspector.keys(`${prefix}*`);
      if (keys.length > 0) await inspector.del(...keys);
      inspector.disconnect();
      for (const client of clients) client.disconnect();
    }
  });

  it('Redis unreachable: the quote is the 503 of the real request', async () => {
    const client = new Redis('redis://127.0.0.1:9', { maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect().catch(() => undefined);
      const gw = await start({ tenancy: { quotas: { limits: { imagesPerMinute: 5 }, redis: client } } });
      const res = await post(gw.app, GENERATIONS, { model: 'x-image-2.0', prompt: 'x' }, DRY_RUN);
      expect([res.status, res.body.error.code]).toEqual([503, 'quota_unavailable']);
      expect(upstreamCalls(gw)).toBe(0);
    } finally {
      client.disconnect();
    }
  });
});
