// The model catalogue end to end (docs/models.md): GET /v1/models walked pair by pair (every listed
// model answers a minimal valid request on every listed endpoint), the catalogue and the validator in
// agreement (every supported parameter of a translated or native endpoint accepted, every refused one a
// 400 naming the model and the parameter with no upstream call), Seedream on /v1/images/generations in
// both request shapes, and Seedance lengths.
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { useSkippingClock } from '../../lib/testing/index.js';
import { DEFAULT_MODEL_CATALOGUE, type ModelEntry } from '../../lib/index.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { ARK_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { GEMINI_KEY, startFakeGemini } from '../helpers/fake-gemini.js';
import { FAL_KEY, startFakeFal } from '../helpers/fake-fal.js';
import { REPLICATE_TOKEN, startFakeReplicate } from '../helpers/fake-replicate.js';
import { startFakeVeo } from '../helpers/fake-veo.js';
import { TINY_PNG_DATA_URL } from '../helpers/images.js';
import { type ListedModel, minimalBody, sendTo, walkModels } from '../helpers/model-walk.js';
import type { Upstream } from '../../lib/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { localResultStorage } from '../../lib/storage.js';

// the pauses between reads of queued work take no time (docs/contributing.md "The clock of the specs")
const skippingClock = useSkippingClock();
afterAll(() => skippingClock.restore());

const catalogue = new Map(DEFAULT_MODEL_CATALOGUE.map((entry) => [entry.id.replace(/\*$/, ''), entry]));
// Replicate's prefix rows as a model of each (the adapter maps fields by the full `owner/name`)
const REPLICATE_MODELS: Record<string, string> = {
  'black-forest-labs/flux-kontext-': 'black-forest-labs/flux-kontext-pro',
  'kwaivgi/kling-': 'kwaivgi/kling-v2.1',
  'minimax/hailuo-': 'minimax/hailuo-02',
};

const gateway = await gatewayWith({
  fakes: { images: startFakePaidImages, ark: startFakeArk, gemini: startFakeGemini, fal: startFakeFal, replicate: startFakeReplicate, veo: startFakeVeo },
  // every default row routed to a fake of its provider, under its own name: the resolver is the routing authority
  resolve: ({ model, route }, fakes): Upstream | null => {
    const entry = catalogue.get(model);
    if (!entry) return null;
    if (route === 'video.tasks' && entry.provider === 'gemini') return { provider: 'gemini', baseURL: fakes.veo.baseURL, apiKey: GEMINI_KEY };
    if (entry.provider === 'fal') return { provider: 'fal', baseURL: fakes.fal.origin, apiKey: FAL_KEY };
    if (entry.provider === 'replicate') return { provider: 'replicate', baseURL: fakes.replicate.baseURL, apiKey: REPLICATE_TOKEN, model: REPLICATE_MODELS[model] ?? model };
    if (route === 'video.tasks') return entry.provider === 'ark' ? { provider: 'ark', baseURL: fakes.ark.baseURL, apiKey: 'ark-key' } : null;
    if (entry.provider === 'ark') return { provider: 'ark', baseURL: fakes.images.arkBaseURL, apiKey: 'ark-key' };
    if (entry.provider === 'openai') return { provider: 'openai', baseURL: fakes.images.openaiBaseURL, apiKey: 'oa-key' };
    if (entry.provider === 'gemini') return { provider: 'gemini', baseURL: fakes.gemini.baseURL, apiKey: GEMINI_KEY };
    return { provider: 'dashscope', baseURL: fakes.images.dashscopeBaseURL, apiKey: 'ds-key' };
  },
  resetEach: true,
});

const auth = { Authorization: `Bearer ${KEY_A}` };
// Veo's videos are kept in storage (docs/providers/gemini.md "Video (Veo)"): its rows are sent to an
// instance with storage (without it a Veo create is refused), the others to the one without
const withStorage = gateway.variant({
  storage: localResultStorage({ directory: tempDir('catalogue-results-'), secret: 'a-results-signing-secret-of-more-than-32-chars' }),
});
const appFor = (model: Pick<ListedModel, 'id'>) => (model.id.startsWith('veo-') ? withStorage.app : gateway.app);

const send = (model: Pick<ListedModel, 'id' | 'limits'>, endpoint: string, body?: Record<string, unknown>): request.Test => sendTo(appFor(model), KEY_A, model, endpoint, body);

describe('GET /v1/models: the walk', () => {
  it('describes every default row the resolver routes, and every listed pair answers a minimal valid request', async () => {
    const { models, pairs, failures } = await walkModels(gateway.app, KEY_A, appFor);
    expect(models.map((model) => model.id)).toEqual([...catalogue.keys()]);
    expect(pairs).toBeGreaterThan(50);
    expect(failures).toEqual([]);
    // every pair reached an upstream: the video creates at the fake Ark, the image calls at the image fake
    // both video shapes (the task route and OpenAI's /v1/videos) create one task each
    const videoEndpoints = (model: ListedModel) => model.endpoints.filter((endpoint) => endpoint === '/api/v3/contents/generations/tasks' || endpoint === '/v1/videos').length;
    const videoPairs = models.reduce((sum, model) => sum + videoEndpoints(model), 0);
    const falSubmits = gateway.fakes.fal.requests.filter((sent) => sent.method === 'POST');
    const falVideos = falSubmits.filter((sent) => /video|veo/.test(sent.path)).length;
    const replicateVideos = models.filter((model) => catalogue.get(model.id)?.provider === 'replicate').reduce((sum, model) => sum + videoEndpoints(model), 0);
    expect(gateway.fakes.ark.requests.filter((sent) => sent.method === 'POST').length + falVideos + replicateVideos + gateway.fakes.veo.operationsStarted()).toBe(videoPairs);
    const replicatePredictions = gateway.fakes.replicate.created();
    expect(
      gateway.fakes.images.requests.filter((sent) => sent.method === 'POST').length + gateway.fakes.gemini.requests.length + falSubmits.length - falVideos + replicatePredictions - replicateVideos,
    ).toBe(pairs - videoPairs);
  });
});

/** A value each supported parameter takes, for the model's limits. */
function sampleOf(name: string, entry: ModelEntry): unknown {
  const limits = entry.limits ?? {};
  const size = (separator: string): string => {
    if (limits.tiers && !limits.pixels) return limits.tiers[0]!;
    if (limits.sizes) return limits.sizes[0]!.replace('x', separator);
    const side = limits.pixels ? Math.ceil(Math.sqrt(limits.pixels.min)) : 1024;
    return `${side}${separator}${side}`;
  };
  const n = Math.min(2, limits.n?.max ?? 1);
  const samples: Record<string, unknown> = {
    prompt: 'a cat',
    input: { messages: [{ role: 'user', content: [...Array.from({ length: limits.reference_images?.min ?? 0 }, () => ({ image: TINY_PNG_DATA_URL })), { text: 'a cat' }] }] },
    response_format: 'url',
    size: size('x'),
    n,
    'parameters.size': size('*'),
    'parameters.n': n,
    'parameters.watermark': false,
    'parameters.prompt_extend': true,
    'parameters.negative_prompt': 'blurry',
    'parameters.seed': 42,
    'parameters.enable_sequential': true,
    'parameters.thinking_mode': true,
    'parameters.bbox_list': [[[0, 0, 10, 10]]],
    image: TINY_PNG_DATA_URL,
    seed: 42,
    watermark: false,
    optimize_prompt_options: { mode: 'standard' },
    sequential_image_generation: 'auto',
    sequential_image_generation_options: { max_images: 2 },
    stream: false,
    output_format: 'png',
    quality: 'high',
    background: 'auto',
    moderation: 'auto',
    output_compression: 80,
    partial_images: 0,
    user: 'end-user-1',
    input_fidelity: 'high',
    complexity: 'low',
    content: [{ type: 'text', text: 'a cat' }],
    duration: limits.durations?.min,
    frames: 121,
    resolution: '720p',
    ratio: '16:9',
    camera_fixed: false,
    generate_audio: false,
    return_last_frame: true,
    safety_identifier: 'end-user-1',
    service_tier: 'default',
    execution_expires_after: 3600,
    draft: false,
    priority: 0,
    tools: [],
    generationConfig: { temperature: 0.5, imageConfig: { aspectRatio: '16:9' } },
    safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }],
    guidance_scale: 3.5,
    num_inference_steps: entry.provider === 'replicate' ? 4 : 28,
    enable_safety_checker: true,
    // fal takes it as a string, Replicate as a number
    safety_tolerance: entry.provider === 'replicate' ? 2 : '2',
    negative_prompt: 'blurry',
    negativePrompt: 'blurry',
    personGeneration: 'allow_adult',
    enhancePrompt: true,
    acceleration: 'regular',
    enhance_prompt: false,
    raw: false,
    strength: 0.9,
    // Replicate's own input fields (docs/providers/replicate.md)
    output_quality: 80,
    go_fast: true,
    megapixels: '1',
    guidance: 3,
    prompt_strength: 0.8,
    prompt_upsampling: true,
    image_prompt_strength: 0.1,
    safety_filter_level: 'block_only_high',
    mode: 'standard',
    cfg_scale: 0.5,
    prompt_optimizer: true,
  };
  return samples[name];
}

// fields of another request shape or that need a setup of their own (an uploaded mask, a public
// callback host): covered by the edit and callback specs
const NOT_IN_A_JSON_BODY = new Set(['mask', 'callback_url']);

// fields that only mean something beside another: partial images are for streamed answers
const NEEDS: Record<string, Record<string, unknown>> = { partial_images: { stream: true } };

function withParameter(body: Record<string, unknown>, name: string, value: unknown): Record<string, unknown> {
  if (!name.startsWith('parameters.')) return { ...body, ...NEEDS[name], [name]: value };
  const parameters = { ...((body.parameters as Record<string, unknown> | undefined) ?? {}), [name.slice('parameters.'.length)]: value };
  // the contract shape for parameters: a text item when the base body is the OpenAI shape
  return body.input ? { ...body, parameters } : { ...body, input: { messages: [{ role: 'user', content: [{ text: 'a cat' }] }] }, parameters };
}

const JSON_ENDPOINTS = ['/v1/images/generations', '/api/v3/images/generations', '/api/v3/contents/generations/tasks'];
const agreement = [...catalogue.entries()].flatMap(([id, entry]) =>
  JSON_ENDPOINTS.filter((endpoint) => entry.endpoints[endpoint as keyof ModelEntry['endpoints']] !== undefined).map((endpoint) => ({ id, endpoint, entry })),
);

describe('the catalogue and the validator agree', () => {
  it.each(agreement)(
    '$id on $endpoint: every supported parameter accepted, every refused one a 400',
    async ({ id, endpoint, entry }) => {
      const model = { id, limits: entry.limits };
      const base = minimalBody(model, endpoint);
      const refusedHere: string[] = [];
      for (const name of entry.supported_parameters) {
        if (NOT_IN_A_JSON_BODY.has(name)) continue;
        // the contract's fields belong to the /v1 route; on the native route a model takes Ark's own
        if (endpoint === '/api/v3/images/generations' && (name === 'input' || name.startsWith('parameters.') || name === 'n')) continue;
        const value = sampleOf(name, entry);
        expect(value, `a sample value for '${name}'`).not.toBeUndefined();
        const response = await send(model, endpoint, withParameter(base, name, value));
        if (response.status !== 200) refusedHere.push(`${name}: ${response.status} ${JSON.stringify(response.body)}`);
      }
      expect(refusedHere).toEqual([]);
      const calls =
        gateway.fakes.images.requests.length +
        gateway.fakes.ark.requests.length +
        gateway.fakes.gemini.requests.length +
        gateway.fakes.fal.requests.length +
        gateway.fakes.replicate.requests.length +
        gateway.fakes.veo.requests.length;
      for (const name of entry.refused_parameters ?? []) {
        const response = await send(model, endpoint, { ...base, [name]: name === 'sequential_image_generation' ? 'auto' : { max_images: 2 } });
        expect(response.status).toBe(400);
        expect(response.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request_error', param: name });
        expect(response.body.error.message).toContain(`Model '${id}' does not take '${name}'`);
      }
      // a refused request never reached an upstream
      expect(
        gateway.fakes.images.requests.length +
          gateway.fakes.ark.requests.length +
          gateway.fakes.gemini.requests.length +
          gateway.fakes.fal.requests.length +
          gateway.fakes.replicate.requests.length +
          gateway.fakes.veo.requests.length,
      ).toBe(calls);
      // one request per parameter: a queued vendor (fal) is read after its first pause, so allow for many
    },
    90_000,
  );

  it("a size outside a model's pixel range is a 400 naming the model, and the upstream is not called", async () => {
    const response = await request(gateway.app).post('/v1/images/generations').set(auth).send({ model: 'qwen-image-2.0', prompt: 'a cat', size: '4096x4096' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: {
        message: "size '4096x4096' has 16777216 pixels; model 'qwen-image-2.0' takes 262144 to 4194304 pixels (width x height)",
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        param: 'size',
      },
    });
    const tier = await request(gateway.app).post('/api/v3/images/generations').set(auth).send({ model: 'doubao-seedream-4-5', prompt: 'a cat', size: '1K' });
    expect(tier.status).toBe(400);
    expect(tier.body.error.message).toBe("size '1K' is not a size model 'doubao-seedream-4-5' takes: use one of 2K, 4K or an explicit width x height");
    expect(gateway.fakes.images.requests).toHaveLength(0);
  });
});

describe('Seedream on POST /v1/images/generations', () => {
  it('takes the OpenAI request shape: prompt, size, n, response_format, and Ark fields at the top level', async () => {
    const response = await request(gateway.app)
      .post('/v1/images/generations')
      .set(auth)
      .send({ model: 'doubao-seedream-4-0', prompt: 'three cats', size: '2048x2048', n: 3, response_format: 'url', watermark: false });
    expect(response.status).toBe(200);
    expect(response.body.data).toHaveLength(3);
    expect(response.body.data[0]).toEqual({ url: expect.stringMatching(/^https:\/\/ark-content\.example\/generation-\d+-0\.png$/), b64_json: '', revised_prompt: '' });
    const sent = gateway.fakes.images.requests.find((item) => item.path === ARK_IMAGES)!;
    expect(sent.json).toEqual({
      model: 'doubao-seedream-4-0',
      prompt: 'three cats',
      size: '2048x2048',
      sequential_image_generation: 'auto',
      sequential_image_generation_options: { max_images: 3 },
      response_format: 'url',
      watermark: false,
    });
    expect(gateway.usage.at(-1)).toMatchObject({ provider: 'ark', images: 3, imageSizes: ['1024x1024', '1024x1024', '1024x1024'], upstreamUsage: { generated_images: 3 } });
  });

  it("takes the contract's multimodal shape: text and image items, parameters with '*' sizes", async () => {
    const response = await request(gateway.app)
      .post('/v1/images/generations')
      .set(auth)
      .send({
        model: 'doubao-seedream-4-5',
        prompt: 'placeholder',
        input: { messages: [{ role: 'user', content: [{ image: TINY_PNG_DATA_URL }, { image: TINY_PNG_DATA_URL }, { text: 'the cat of image 1 in the room of image 2' }] }] },
        parameters: { size: '2048*2048', watermark: false, seed: 7 },
      });
    expect(response.status).toBe(200);
    expect(response.body.data).toHaveLength(1);
    const sent = gateway.fakes.images.requests.find((item) => item.path === ARK_IMAGES)!;
    expect(sent.json).toEqual({
      model: 'doubao-seedream-4-5',
      prompt: 'the cat of image 1 in the room of image 2',
      image: [TINY_PNG_DATA_URL, TINY_PNG_DATA_URL],
      size: '2048x2048',
      watermark: false,
      seed: 7,
      response_format: 'url',
    });
  });

  it('Seedream 5.0 pro: sequential_image_generation is a 400 naming the model, in either shape', async () => {
    for (const body of [
      { model: 'doubao-seedream-5-0-pro', prompt: 'a cat', sequential_image_generation: 'auto' },
      { model: 'doubao-seedream-5-0-pro', input: { messages: [{ role: 'user', content: [{ text: 'a cat' }] }] }, parameters: { sequential_image_generation: 'auto' } },
    ]) {
      const response = await request(gateway.app).post('/v1/images/generations').set(auth).send(body);
      expect(response.status).toBe(400);
      expect(response.body.error.message).toContain("Model 'doubao-seedream-5-0-pro' does not take 'sequential_image_generation'");
    }
    expect(gateway.fakes.images.requests).toHaveLength(0);
  });
});

describe('the catalogue decides how an endpoint is served', () => {
  it('an Ark model listed as passthrough goes to Ark as the caller sent it, not translated', async () => {
    // the host's entry replaces the default row of the same id
    const raw = gateway.variant({
      models: { catalogue: [{ id: 'doubao-seedream-4-5*', provider: 'ark', endpoints: { '/v1/images/generations': 'passthrough' }, supported_parameters: ['prompt', 'n'], streams: false }] },
    });
    const response = await request(raw.app).post('/v1/images/generations').set(auth).send({ model: 'doubao-seedream-4-5', prompt: 'a cat', n: 2, vendor_field: 'kept' });
    expect(response.status).toBe(200);
    const sent = gateway.fakes.images.requests.find((item) => item.path === ARK_IMAGES)!;
    // the body as sent, model renamed (here: kept), no sequential group made of `n`
    expect(sent.json).toEqual({ model: 'doubao-seedream-4-5', prompt: 'a cat', n: 2, vendor_field: 'kept' });
    // and relayed as the upstream answered (Ark's own body, `size` per image)
    expect(response.body.data[0]).toMatchObject({ size: '1024x1024' });
  });
});

describe('Seedance lengths', () => {
  it.each([
    { model: 'doubao-seedance-2-5', duration: -1, status: 200 },
    { model: 'doubao-seedance-1-5-pro', duration: -1, status: 200 },
    { model: 'doubao-seedance-1-0-pro', duration: -1, status: 400 },
    { model: 'doubao-seedance-1-0-pro', duration: 13, status: 400 },
    { model: 'doubao-seedance-2-0', duration: 15, status: 200 },
  ])('$model with duration $duration: $status', async ({ model, duration, status }) => {
    const response = await request(gateway.app)
      .post('/api/v3/contents/generations/tasks')
      .set(auth)
      .send({ model, content: [{ type: 'text', text: 'a cat' }], duration });
    expect(response.status).toBe(status);
    if (status === 400) expect(response.body.error).toMatchObject({ param: 'duration', message: expect.stringContaining(`model '${model}'`) });
    expect(gateway.fakes.ark.requests.filter((sent) => sent.method === 'POST')).toHaveLength(status === 200 ? 1 : 0);
  });
});
