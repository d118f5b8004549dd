// The contract of the built-in checker (docs/content-safety.md "The built-in checker"): `openAIModeration`
// against a moderation service that checks requests as the API does (examples/simulated-moderation.ts:
// fields, part types, one image per call, Data URLs only, their size), typed by the openai SDK's own
// ModerationCreateParams; its answer mapped to the checker's verdict; and the gateway refusing with it.
import OpenAI, { toFile } from 'openai';
import type { ModerationCreateParams, ModerationCreateResponse, ModerationImageURLInput } from 'openai/resources/moderations';
import { afterAll, describe, expect, it } from 'vitest';
import { type ModerationCheckInput, type ModerationImage, openAIModeration } from '../../lib/index.js';
import { startSimulatedModeration } from '../../examples/simulated-moderation.js';
import { startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { BLUE_PNG, RED_PNG, solidPng } from '../helpers/solid-png.js';

const simulator = await startSimulatedModeration();
afterAll(() => simulator.close());

function imageOf(bytes: Buffer, mediaType = 'image/png'): ModerationImage {
  return { mediaType, bytes, dataUrl: () => `data:${mediaType};base64,${bytes.toString('base64')}` };
}

const base = { caller: { id: 'tenant-a' }, route: 'images.generations', model: 'x-image-2.0', signal: new AbortController().signal } satisfies Omit<ModerationCheckInput, 'stage'>;

describe('the request the checker sends', () => {
  it('text: POST /moderations with the omni model and one text part, the key as a bearer token', async () => {
    const check = openAIModeration({ apiKey: 'sk-moderation', baseURL: simulator.baseURL });
    const verdict = await check({ ...base, stage: 'prompt', text: 'a massacre at dawn' });
    // what was sent equals a value the openai SDK's own ModerationCreateParams type accepts
    const expected: ModerationCreateParams = { model: 'omni-moderation-latest', input: [{ type: 'text', text: 'a massacre at dawn' }] };
    expect(simulator.received.at(-1)).toEqual(expected);
    expect(verdict.flagged).toBe(true);
    expect(verdict.categories).toEqual(['violence']);
    expect(verdict.scores?.violence).toBeGreaterThan(0.9);
    expect(check.checkerName).toBe('openai-moderation');
  });

  it('images: one call per image, each a Data URL image_url part, merged (flagged if any is)', async () => {
    const check = openAIModeration({ apiKey: 'sk-moderation', baseURL: `${simulator.baseURL}/`, model: 'omni-moderation-2024-09-26' });
    const before = simulator.received.length;
    const verdict = await check({ ...base, stage: 'inputImages', images: [imageOf(BLUE_PNG), imageOf(RED_PNG)] });
    const sent = simulator.received.slice(before);
    const asSdk = (png: Buffer): ModerationCreateParams => {
      const part: ModerationImageURLInput = { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } };
      return { model: 'omni-moderation-2024-09-26', input: [part] };
    };
    // the calls run in parallel: either order
    expect(sent).toHaveLength(2);
    expect(sent).toEqual(expect.arrayContaining([asSdk(BLUE_PNG), asSdk(RED_PNG)]));
    expect(verdict).toMatchObject({ flagged: true, categories: ['violence/graphic'] });
    expect(simulator.refusals).toEqual([]);
  });

  it('an image over the size limit, or of a type the model does not read, is never sent: the check fails', async () => {
    const check = openAIModeration({ apiKey: 'sk-moderation', baseURL: simulator.baseURL });
    const before = simulator.received.length;
    await expect(check({ ...base, stage: 'outputImages', images: [imageOf(Buffer.alloc(20 * 1024 * 1024 + 1))] })).rejects.toThrow(/larger than/);
    await expect(check({ ...base, stage: 'outputImages', images: [imageOf(Buffer.from('II*\0'), 'image/tiff')] })).rejects.toThrow(/image\/tiff/);
    expect(simulator.received.length).toBe(before);
  });

  it('an API error fails the check with the status only (never the body), so onCheckerError decides', async () => {
    const check = openAIModeration({ apiKey: '', baseURL: simulator.baseURL });
    await expect(check({ ...base, stage: 'prompt', text: 'hello' })).rejects.toThrow('the moderation API answered HTTP 401');
  });
});

describe('the simulated service checks requests as the API does', () => {
  it('takes what the official SDK sends, and answers what the SDK types', async () => {
    const sdk = new OpenAI({ apiKey: 'sk-moderation', baseURL: simulator.baseURL });
    const answer: ModerationCreateResponse = await sdk.moderations.create({
      model: 'omni-moderation-latest',
      input: [
        { type: 'text', text: 'a counterfeit bill' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${solidPng([250, 10, 10], 16).toString('base64')}` } },
      ],
    });
    expect(answer.results).toHaveLength(1);
    expect(answer.results[0]!.flagged).toBe(true);
    expect(answer.results[0]!.categories.illicit).toBe(true);
    expect(answer.results[0]!.categories['violence/graphic']).toBe(true);
    expect(answer.results[0]!.category_applied_input_types['violence/graphic']).toEqual(['image']);
  });

  it.each([
    ['an unknown field', { input: 'x', extra: 1 }, /Unrecognized request argument/],
    ['a part of an unknown type', { input: [{ type: 'audio', audio: 'x' }] }, /type must be/],
    ['a caller URL instead of a Data URL', { input: [{ type: 'image_url', image_url: { url: 'https://images.example.com/a.png' } }] }, /Data URL/],
    ['two images in one call', { input: [1, 2].map(() => ({ type: 'image_url', image_url: { url: `data:image/png;base64,${BLUE_PNG.toString('base64')}` } })) }, /one image/],
    ['no input', { model: 'omni-moderation-latest' }, /'input' is a required property/],
  ])('refuses %s', async (_name, body, message) => {
    const res = await fetch(`${simulator.baseURL}/moderations`, { method: 'POST', headers: { authorization: 'Bearer sk', 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(message);
  });
});

describe('the gateway with the built-in checker', () => {
  it('refuses a flagged prompt and a red upload with the categories the service named; the upstream is never called', async () => {
    const gw = await gatewayWith({
      fakes: { images: startFakePaidImages },
      resolve: (_input, { images }) => ({ provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-2.0' }),
      moderation: { check: openAIModeration({ apiKey: 'sk-moderation', baseURL: simulator.baseURL }) },
    });
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${gw.url}/v1` });
    const byPrompt = await client.images.generate({ model: 'x-image-2.0', prompt: 'a massacre' }).catch((error: unknown) => error as InstanceType<typeof OpenAI.APIError>);
    expect(byPrompt).toBeInstanceOf(OpenAI.BadRequestError);
    expect((byPrompt as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'content_policy_violation', param: 'prompt', categories: ['violence'] });
    const byImage = await client.images
      .edit({ model: 'x-image-2.0', prompt: 'a calm sea', image: await toFile(RED_PNG, 'red.png', { type: 'image/png' }) })
      .catch((error: unknown) => error as InstanceType<typeof OpenAI.APIError>);
    expect((byImage as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'content_policy_violation', param: 'image', categories: ['violence/graphic'] });
    expect(gw.fakes.images.started()).toBe(0);
    const clean = await client.images.edit({ model: 'x-image-2.0', prompt: 'a calm sea', image: await toFile(BLUE_PNG, 'blue.png', { type: 'image/png' }) });
    expect(clean.data).toHaveLength(1);
    expect(gw.fakes.images.started()).toBe(1);
  });
});
