// Prices of a host's own model names (docs/tenancy-and-billing.md "Which price a request follows"),
// driven by the official openai SDK: with no `models` option and a `tenancy.pricing` table keyed only by vendor
// model ids, a request under a host name is priced as the upstream model the resolver chose: its usage
// event's cost is the fake's images made × that model's price, a money budget reserves by it before the
// call and refuses (no upstream call) when it is over, and a video task under a host name is priced by
// its upstream model when it ends. A price of the caller's own name wins over the upstream model's.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { GatewayOptions, TenancyOptions, ResolveUpstream, Upstream } from '../../lib/index.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { type FakeArk, startFakeArk } from '../helpers/fake-ark.js';
import { type FakePaidImages, startFakePaidImages } from '../helpers/fake-paid-images.js';

const CALLER = { id: 'tenant-a' };
const TASKS = '/api/v3/contents/generations/tasks';

/** The host's names for vendor models, listed once: the resolver reads them and `models.list` lists them. */
const NAMES: Record<string, Pick<Upstream, 'provider' | 'model'>> = {
  'ds-plus': { provider: 'dashscope', model: 'qwen-image-plus' },
  'slow-image': { provider: 'openai', model: 'gpt-image-1' },
  'house-video': { provider: 'ark', model: 'doubao-seedance-1-5-pro-251215' },
};

/** Prices by vendor model id only: none of the host's names is in it. */
const VENDOR_PRICES: NonNullable<TenancyOptions['pricing']> = {
  currency: 'USD',
  models: {
    'qwen-image-plus': { image: 0.03 },
    'gpt-image-1': { image: 0.05 },
    'doubao-seedance-1-5-pro*': { videoSecond: { default: 0.05, by: { '720p': 0.02 } } },
  },
};

type Fakes = { images: typeof startFakePaidImages; ark: typeof startFakeArk };

function resolverOf(images: FakePaidImages, ark: FakeArk): ResolveUpstream {
  return ({ model }) => {
    const named = NAMES[model];
    if (!named) return null;
    const baseURL = named.provider === 'dashscope' ? images.dashscopeBaseURL : named.provider === 'ark' ? ark.baseURL : images.openaiBaseURL;
    return { ...named, baseURL, apiKey: 'sk-upstream' };
  };
}

/** A gateway of the test's own (fresh counters), the host's names listed, priced as given. */
function start(options: Partial<GatewayOptions> = {}) {
  return gatewayWith<Fakes>(
    {
      fakes: { images: startFakePaidImages, ark: startFakeArk },
      resolve: (input, { images, ark }) => resolverOf(images, ark)(input),
      models: { list: () => Object.keys(NAMES) },
      tenancy: { pricing: VENDOR_PRICES },
    },
    options,
  );
}

const clientOf = (url: string, maxRetries?: number) => new OpenAI({ baseURL: `${url}/v1`, apiKey: KEY_A, ...(maxRetries !== undefined ? { maxRetries } : {}) });

describe('a host name is priced as the upstream model the resolver chose, when the table lacks the name', () => {
  it("a generation under 'ds-plus' costs the images made × qwen-image-plus's price", async () => {
    const gw = await start();
    const { data: answer, response } = await clientOf(gw.url).images.generate({ model: 'ds-plus', prompt: 'a lighthouse at dusk' }).withResponse();
    expect(answer.data).toHaveLength(1);
    // the answer announces the cost its event will report
    expect(response.headers.get('x-request-cost')).toBe('0.03 USD');
    await expect.poll(() => gw.usage.length).toBe(1);
    const [event] = gw.usage;
    expect(event).toMatchObject({ model: 'ds-plus', provider: 'dashscope', upstreamModel: 'qwen-image-plus', images: 1 });
    expect(gw.fakes.images.imagesMade()).toBe(1);
    expect(event!.cost).toEqual({ amount: gw.fakes.images.imagesMade() * 0.03, currency: 'USD' });
  });

  it("n 2 under 'slow-image' costs the images made × gpt-image-1's price", async () => {
    const gw = await start();
    const answer = await clientOf(gw.url).images.generate({ model: 'slow-image', prompt: 'two foxes', n: 2 });
    expect(answer.data).toHaveLength(2);
    await expect.poll(() => gw.usage.length).toBe(1);
    expect(gw.usage[0]).toMatchObject({ model: 'slow-image', upstreamModel: 'gpt-image-1', images: 2 });
    expect(gw.fakes.images.imagesMade()).toBe(2);
    expect(gw.usage[0]!.cost?.amount).toBeCloseTo(gw.fakes.images.imagesMade() * 0.05, 6);
  });

  it("a price of the caller's own name wins over the upstream model's", async () => {
    const gw = await start({ tenancy: { pricing: { currency: 'USD', models: { ...VENDOR_PRICES.models, 'ds-plus': { image: 0.2 } } } } });
    await clientOf(gw.url).images.generate({ model: 'ds-plus', prompt: 'a lighthouse' });
    await expect.poll(() => gw.usage.length).toBe(1);
    expect(gw.fakes.images.imagesMade()).toBe(1);
    expect(gw.usage[0]!.cost).toEqual({ amount: 0.2, currency: 'USD' });
  });
});

describe("a money budget reserves a host name's request by its upstream model's price", () => {
  it('reserves and settles 0.03 per ds-plus image, and refuses with a 429 naming the budget when less is left, calling no upstream', async () => {
    const gw = await start({ tenancy: { quotas: { limits: { budget: 0.05 } } } });
    // the refusal's window is a day long: the test reads the first 429 rather than wait out retries
    const client = clientOf(gw.url, 0);
    await client.images.generate({ model: 'ds-plus', prompt: 'a lighthouse' });
    const budget = async () => (await gw.router.quota(CALLER)).find((state) => state.name === 'budget')!;
    await expect.poll(async () => (await budget()).remaining).toBeCloseTo(0.02, 6);
    const refused = await client.images.generate({ model: 'ds-plus', prompt: 'another lighthouse' }).catch((thrown: unknown) => thrown);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect((refused as Error).message).toContain('budget');
    // one generation made, and paid: the refused request reached no upstream
    expect(gw.fakes.images.started()).toBe(1);
    expect(gw.usage.reduce((sum, event) => sum + (event.cost?.amount ?? 0), 0)).toBeCloseTo(gw.fakes.images.imagesMade() * 0.03, 6);
  });

  it("a dry run quotes the upstream model's price for a host name", async () => {
    const gw = await start({ tenancy: { quotas: { limits: { budget: 5 } } } });
    const quoted = await clientOf(gw.url).post<{ cost?: { amount: number; currency: string } }>('/images/generations', {
      body: { model: 'slow-image', prompt: 'two foxes', n: 2 },
      headers: { Prefer: 'dry-run' },
    });
    expect(quoted.cost).toEqual({ amount: 0.1, currency: 'USD' });
    expect(gw.fakes.images.requests).toHaveLength(0);
  });
});

describe('an image task under a host name is priced by its upstream model', () => {
  it("a Prefer: respond-async 'ds-plus' task, run on DashScope's own task API, ends costing its images × qwen-image-plus's price", async () => {
    const gw = await start({ callbacks: { pollIntervalsMs: { image: [1000] } }, tenancy: { quotas: { limits: { budget: 1 } } } });
    const client = clientOf(gw.url);
    const submitted = await client.images.generate({ model: 'ds-plus', prompt: 'a lighthouse at dusk' }, { headers: { Prefer: 'respond-async' } }).withResponse();
    expect(submitted.response.status).toBe(202);
    const id = (submitted.data as unknown as { id: string }).id;
    await expect.poll(async () => (await client.get<{ status: string }>(`/images/tasks/${id}`)).status, { timeout: 15_000, interval: 100 }).toBe('succeeded');
    await expect.poll(() => gw.usage.find((event) => event.task?.status === 'succeeded')).toBeDefined();
    const terminal = gw.usage.find((event) => event.task?.status === 'succeeded')!;
    expect(terminal).toMatchObject({ model: 'ds-plus', provider: 'dashscope', upstreamModel: 'qwen-image-plus', images: 1 });
    expect(gw.fakes.images.imagesMade()).toBe(1);
    expect(terminal.cost).toEqual({ amount: gw.fakes.images.imagesMade() * 0.03, currency: 'USD' });
    // the budget reserved at submit settles to that cost
    await expect.poll(async () => (await gw.router.quota(CALLER)).find((state) => state.name === 'budget')?.remaining).toBeCloseTo(1 - 0.03, 6);
  });
});

describe('a video task under a host name is priced by its upstream model', () => {
  it("reserves 5 s at 720p by the Seedance row's price, and its terminal event costs what Ark made", async () => {
    const gw = await start({ tenancy: { quotas: { limits: { budget: 1 } } } });
    // Ark's task routes are at the root, beside the OpenAI-shaped /v1
    const root = new OpenAI({ baseURL: gw.url, apiKey: KEY_A });
    const created = await root.post<{ id: string }>(TASKS, { body: { model: 'house-video', content: [{ type: 'text', text: 'a cat' }], duration: 5, resolution: '720p' } });
    expect(gw.fakes.ark.requests.filter((sent) => sent.method === 'POST')[0]!.json).toMatchObject({ model: 'doubao-seedance-1-5-pro-251215' });
    const budget = async () => (await gw.router.quota(CALLER)).find((state) => state.name === 'budget')!;
    expect((await budget()).remaining).toBeCloseTo(1 - 5 * 0.02, 6);
    await expect.poll(async () => (await root.get<{ status: string }>(`${TASKS}/${created.id}`)).status, { timeout: 15_000, interval: 100 }).toBe('succeeded');
    await expect.poll(() => gw.usage.find((event) => event.task?.status === 'succeeded')).toBeDefined();
    const terminal = gw.usage.find((event) => event.task?.status === 'succeeded')!;
    // the fake Ark made 5 s at 720p
    expect(terminal).toMatchObject({ model: 'house-video', upstreamModel: 'doubao-seedance-1-5-pro-251215', video: { seconds: 5, resolution: '720p' } });
    expect(terminal.cost).toEqual({ amount: 0.1, currency: 'USD' });
    await expect.poll(async () => (await budget()).remaining).toBeCloseTo(0.9, 6);
  });
});
