// A host's own names for vendor models (docs/models.md "Which row a request follows"), driven by the
// official openai SDK: with no `models` option, a name the resolver sends to a vendor model follows that
// model's row: GET /v1/models describes it so, its requests are validated by that row's rules (a 400
// before any upstream call), and a `Prefer: respond-async` task of a name sent to qwen-image-plus runs
// on DashScope's own task API. A name no row describes passes through, and is listed on the endpoints
// whose routes the resolver sends it to an upstream that serves them (listing asks the resolver a
// bounded number of times, never an upstream); a `models` entry of the name wins.
import OpenAI from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { type ResolveUpstream, type RouteName, type Upstream, modelEntry } from '../../lib/index.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { DASHSCOPE_SYNTHESIS, type FakePaidImages, startFakePaidImages } from '../helpers/fake-paid-images.js';

/** The host's names, listed once: the resolver reads them and `models.list` lists them. */
const NAMES: Record<string, Pick<Upstream, 'provider' | 'model'>> = {
  'ds-plus': { provider: 'dashscope', model: 'qwen-image-plus' },
  'slow-image': { provider: 'openai', model: 'gpt-image-1' },
  banana: { provider: 'gemini', model: 'gemini-2.5-flash-image' },
  'house-model': { provider: 'openai', model: 'acme-house-model' },
};

function resolverOf(images: FakePaidImages): ResolveUpstream {
  return ({ model }) => {
    const named = NAMES[model];
    if (!named) return null;
    // the Gemini name is only ever refused here: its base is never called
    const baseURL = named.provider === 'dashscope' ? images.dashscopeBaseURL : named.provider === 'gemini' ? 'http://127.0.0.1:9/v1beta' : images.openaiBaseURL;
    return { ...named, baseURL, apiKey: 'sk-upstream' };
  };
}

const gateway = await gatewayWith({
  fakes: { images: startFakePaidImages },
  resolve: (input, { images }) => resolverOf(images)(input),
  models: { list: () => Object.keys(NAMES) },
  callbacks: { pollIntervalsMs: { image: [1000] } },
  resetEach: true,
});

const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: KEY_A, maxRetries: 0 });

interface Described {
  id: string;
  endpoints?: string[];
  serving?: Record<string, string>;
  supported_parameters?: string[];
  refused_parameters?: string[];
  limits?: Record<string, unknown>;
  streams?: boolean;
  owned_by: string;
}

async function listed(): Promise<Map<string, Described>> {
  const models = new Map<string, Described>();
  for await (const model of client.models.list()) models.set(model.id, model);
  return models;
}

describe('GET /v1/models: each host name described by the row of the model it is sent to', () => {
  it("lists the host's names in its order, each with its upstream row's endpoints, parameters, limits and streams", async () => {
    const models = await listed();
    expect([...models.keys()]).toEqual(['ds-plus', 'slow-image', 'banana', 'house-model']);
    const plus = modelEntry('qwen-image-plus')!;
    expect(models.get('ds-plus')).toEqual({
      id: 'ds-plus',
      object: 'model',
      created: 0,
      owned_by: 'gateway',
      // text to image only: the row lists no edits
      endpoints: ['/v1/images/generations'],
      serving: { '/v1/images/generations': 'translated' },
      supported_parameters: plus.supported_parameters,
      limits: plus.limits,
      streams: plus.streams,
    });
    const gpt = modelEntry('gpt-image-1')!;
    expect(models.get('slow-image')).toMatchObject({
      endpoints: ['/v1/images/generations', '/v1/images/edits'],
      serving: { '/v1/images/generations': 'passthrough', '/v1/images/edits': 'passthrough' },
      supported_parameters: gpt.supported_parameters,
      streams: true,
    });
    expect(models.get('banana')).toMatchObject({ endpoints: ['/v1/images/generations', '/v1/images/edits'], refused_parameters: modelEntry('gemini-2.5-flash-image')!.refused_parameters });
    // a model no row describes is listed on every endpoint the resolver sends it to an upstream that
    // serves it: an OpenAI-compatible one serves all but the video tasks
    expect(models.get('house-model')).toEqual({
      id: 'house-model',
      object: 'model',
      created: 0,
      owned_by: 'gateway',
      endpoints: ['/v1/images/generations', '/v1/images/edits', '/api/v3/images/generations', '/v1/chat/completions', '/v1/responses'],
    });
    // listing asks the host's resolver, never an upstream
    expect(gateway.fakes.images.requests).toHaveLength(0);
  });
});

describe('GET /v1/models: a host name no row describes', () => {
  /** Host names no catalogue row covers, each routed on some routes only. */
  const ROUTES: Record<string, Partial<Record<RouteName, Pick<Upstream, 'provider' | 'model'>>>> = {
    'house-chat': { 'chat.completions': { provider: 'openai', model: 'acme-chat-1' }, responses: { provider: 'openai', model: 'acme-chat-1' } },
    'house-video': { 'video.tasks': { provider: 'replicate', model: 'acme/house-video' } },
    // fal has no OpenAI-compatible API: a chat request would find nothing to serve it
    'house-fal': { 'images.generations': { provider: 'fal', model: 'acme/house-fal' }, 'chat.completions': { provider: 'fal', model: 'acme/house-fal' } },
    'house-nowhere': {},
  };

  it('is listed on each endpoint whose route the resolver answers an upstream that serves it, or as the hook gave it', async () => {
    const host = await gatewayWith({
      fakes: { images: startFakePaidImages },
      resolve: ({ model, route }, { images }) => {
        const routed = ROUTES[model]?.[route];
        return routed ? { ...routed, baseURL: images.openaiBaseURL, apiKey: 'sk-upstream' } : null;
      },
      models: { list: () => Object.keys(ROUTES) },
    });
    const own = new OpenAI({ baseURL: `${host.url}/v1`, apiKey: KEY_A, maxRetries: 0 });
    const models = [];
    for await (const model of own.models.list()) models.push(model);
    expect(models).toEqual([
      { id: 'house-chat', object: 'model', created: 0, owned_by: 'gateway', endpoints: ['/v1/chat/completions', '/v1/responses'] },
      // both video shapes share the route the resolver answered
      { id: 'house-video', object: 'model', created: 0, owned_by: 'gateway', endpoints: ['/api/v3/contents/generations/tasks', '/v1/videos'] },
      { id: 'house-fal', object: 'model', created: 0, owned_by: 'gateway', endpoints: ['/v1/images/generations'] },
      { id: 'house-nowhere', object: 'model', created: 0, owned_by: 'gateway' },
    ]);
    expect(host.fakes.images.requests).toHaveLength(0);
  });

  it('a listing asks the resolver once per route of each name, at most 16 calls at a time, and calls no upstream', async () => {
    const names = Array.from({ length: 40 }, (_, index) => `house-${index}`);
    const asked = new Map<string, number>();
    let inFlight = 0;
    let most = 0;
    const host = await gatewayWith({
      fakes: { images: startFakePaidImages },
      resolve: async ({ model, route }, { images }) => {
        asked.set(`${model} ${route}`, (asked.get(`${model} ${route}`) ?? 0) + 1);
        inFlight += 1;
        most = Math.max(most, inFlight);
        // a resolver that reads a database: it answers on a later turn of the event loop
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        return { provider: 'openai', baseURL: images.openaiBaseURL, apiKey: 'sk-upstream', model: `acme-${model}` };
      },
      models: { list: () => names },
    });
    const response = await request(host.app).get('/v1/models').set('Authorization', `Bearer ${KEY_A}`);
    expect(response.status).toBe(200);
    expect(response.body.data).toHaveLength(40);
    // six routes per name (the two video shapes are one route), each asked once
    const routes: RouteName[] = ['images.generations', 'images.edits', 'images.native', 'video.tasks', 'chat.completions', 'responses'];
    expect([...asked.keys()].sort()).toEqual(names.flatMap((name) => routes.map((route) => `${name} ${route}`)).sort());
    expect([...asked.values()].every((count) => count === 1)).toBe(true);
    expect(most).toBe(16);
    expect(host.fakes.images.requests).toHaveLength(0);
  });
});

describe("requests under a host name follow the upstream model's row", () => {
  it("a Prefer: respond-async task of a name sent to qwen-image-plus runs on DashScope's task API, submitted once", async () => {
    const images = gateway.fakes.images;
    images.workMs = 200;
    const submitted = await client.images.generate({ model: 'ds-plus', prompt: 'a lighthouse at dusk' }, { headers: { Prefer: 'respond-async' } }).withResponse();
    expect(submitted.response.status).toBe(202);
    const id = (submitted.data as unknown as { id: string }).id;
    let task: { status?: string; result?: { data: Array<{ url?: string }> } } = {};
    await expect
      .poll(
        async () => {
          task = await client.get(`/images/tasks/${id}`);
          return task.status;
        },
        { timeout: 15_000, interval: 100 },
      )
      .toBe('succeeded');
    expect(task.result?.data[0]?.url).toMatch(/^https?:\/\//);
    const posts = images.requests.filter((sent) => sent.method === 'POST');
    expect(posts.map((sent) => sent.path)).toEqual([DASHSCOPE_SYNTHESIS]);
    expect(posts[0]!.headers['x-dashscope-async']).toBe('enable');
    expect(posts[0]!.json).toMatchObject({ model: 'qwen-image-plus', input: { prompt: 'a lighthouse at dusk' } });
    expect(images.started()).toBe(1);
    await expect.poll(() => gateway.usage.filter((event) => event.task?.status === 'succeeded').length).toBe(1);
    expect(gateway.usage.find((event) => event.task?.status === 'succeeded')).toMatchObject({ model: 'ds-plus', provider: 'dashscope', images: 1 });
  });

  it("an n above the row's limit is a 400 naming the host's name, and no upstream is called", async () => {
    const before = gateway.fakes.images.started();
    const error = await client.images.generate({ model: 'ds-plus', prompt: 'two cats', n: 2 }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', param: 'parameters.n' });
    expect((error as Error).message).toContain("must be at most 1 for model 'ds-plus'");
    expect(gateway.fakes.images.started()).toBe(before);
    expect(gateway.fakes.images.requests).toHaveLength(0);
  });

  it('a field the upstream row refuses is a 400 naming the field, and no upstream is called', async () => {
    const error = await client.images
      .generate({ model: 'banana', prompt: 'a banana', parameters: { watermark: true } } as unknown as OpenAI.ImageGenerateParamsNonStreaming)
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: 'parameters.watermark' });
    expect((error as Error).message).toContain("Model 'banana' does not take 'watermark'");
    expect(gateway.fakes.images.requests).toHaveLength(0);
  });

  it('a name sent to gpt-image-1 is passed through as gpt-image-1 is: its own fields reach the upstream', async () => {
    const answer = await client.images.generate({ model: 'slow-image', prompt: 'a fox', quality: 'high', moderation: 'low' });
    expect(answer.data?.length).toBeGreaterThan(0);
    const sent = gateway.fakes.images.requests.filter((request) => request.method === 'POST');
    expect(sent.map((request) => request.path)).toEqual(['/v1/images/generations']);
    expect(sent[0]!.json).toMatchObject({ model: 'gpt-image-1', prompt: 'a fox', quality: 'high', moderation: 'low' });
  });

  it('a name the catalogue does not know passes through as sent, model renamed', async () => {
    const refused = await client.images
      .generate({ model: 'house-model', prompt: 'a house', n: 12, style: 'brutalist' } as unknown as OpenAI.ImageGenerateParamsNonStreaming)
      .catch((thrown: unknown) => thrown);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    // n 12 is above OpenAI's ceiling of 10: refused as any passthrough is; n 2 goes through with its own field
    expect(gateway.fakes.images.requests).toHaveLength(0);
    const answer = await client.images.generate({ model: 'house-model', prompt: 'a house', n: 2, style: 'brutalist' } as unknown as OpenAI.ImageGenerateParamsNonStreaming);
    expect(answer.data?.length).toBeGreaterThan(0);
    const sent = gateway.fakes.images.requests.filter((request) => request.method === 'POST');
    expect(sent[0]!.json).toEqual({ model: 'acme-house-model', prompt: 'a house', n: 2, style: 'brutalist' });
  });
});

describe('a models entry of the caller name wins over the upstream row', () => {
  it('ds-plus described as qwen-image-2.0 by a models entry takes n 2, and is listed so', async () => {
    const host = await gatewayWith({
      fakes: { images: startFakePaidImages },
      resolve: (input, { images }) => resolverOf(images)(input),
      models: { list: () => ['ds-plus'], catalogue: [{ ...modelEntry('qwen-image-2.0')!, id: 'ds-plus' }] },
    });
    const own = new OpenAI({ baseURL: `${host.url}/v1`, apiKey: KEY_A, maxRetries: 0 });
    const answer = await own.images.generate({ model: 'ds-plus', prompt: 'two cats', n: 2 });
    expect(answer.data).toHaveLength(2);
    expect(host.fakes.images.started()).toBe(1);
    const models = [];
    for await (const model of own.models.list()) models.push(model);
    expect(models[0]).toMatchObject({ id: 'ds-plus', limits: modelEntry('qwen-image-2.0')!.limits, endpoints: ['/v1/images/generations', '/v1/images/edits'] });
  });
});
