// The tenant identifier sent to vendors, end to end (docs/security.md "Tenant identifier sent to
// vendors"): with `tenancy.safetyIdentifier` on, every model of the catalogue walked on every endpoint it lists
// reaches its vendor's fake with the identifier in the field that vendor documents and nothing where it
// documents none; the official openai SDK's chat, responses (plain and streamed) and image calls reach
// OpenAI, Azure, Ark and DashScope the same way; one tenant always has one value, two tenants two; a
// caller's own field gives way; no caller id is ever sent; an upstream that refuses
// `safety_identifier` with a 400 is asked once more with `user`, remembered, and paid once.
import OpenAI, { toFile } from 'openai';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_CATALOGUE, safetyIdentifierOf, type Upstream } from '../../lib/index.js';
import { localResultStorage } from '../../lib/storage.js';
import { useSkippingClock } from '../../lib/testing/index.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { AZURE_KEY, formOf, startFakeAzure } from '../helpers/fake-azure.js';
import { FAL_KEY, startFakeFal } from '../helpers/fake-fal.js';
import { GEMINI_KEY, startFakeGemini } from '../helpers/fake-gemini.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { startFakePaidImages } from '../helpers/fake-paid-images.js';
import { REPLICATE_TOKEN, startFakeReplicate } from '../helpers/fake-replicate.js';
import type { RecordedRequest } from '../helpers/fake-upstream.js';
import { startFakeVeo } from '../helpers/fake-veo.js';
import { TINY_PNG } from '../helpers/images.js';
import { type ListedModel, walkModels } from '../helpers/model-walk.js';
import { tempDir } from '../helpers/temp-dir.js';

// the pauses between reads of queued work (fal's queue, Replicate's predictions) take no time
// (docs/contributing.md "The clock of the specs"): no fake here holds a job while it is read
const skippingClock = useSkippingClock();
afterAll(() => skippingClock.restore());

const SECRET = 'safety-identifier-secret-of-the-e2e-specs-0123456789';
const TENANTS = { [KEY_A]: 'tenant-a', [KEY_B]: 'tenant-b' } as const;
const identifierOf = (key: keyof typeof TENANTS): string => safetyIdentifierOf(TENANTS[key], SECRET);
type Field = 'safety_identifier' | 'user' | undefined;

/** The top-level fields a request sent: its JSON object, or its multipart form's text fields. */
async function fieldsOf(sent: RecordedRequest): Promise<Record<string, unknown>> {
  if (String(sent.headers['content-type']).startsWith('multipart/form-data')) {
    const form = await formOf(sent);
    return Object.fromEntries([...form.entries()].filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  }
  return typeof sent.json === 'object' && sent.json !== null && !Array.isArray(sent.json) ? (sent.json as Record<string, unknown>) : {};
}

/**
 * What every recorded request of a fake sent for one tenant: the identifier in `fieldOf`'s field (and
 * the other field absent), no identifier at all where the vendor takes none, no caller id in any body
 * or header. Answers how many requests carried the identifier.
 */
async function checkSent(requests: readonly RecordedRequest[], key: keyof typeof TENANTS, fieldOf: (sent: RecordedRequest) => Field): Promise<number> {
  const identifier = identifierOf(key);
  let carried = 0;
  for (const sent of requests) {
    const where = `${sent.method} ${sent.path}`;
    for (const id of Object.values(TENANTS)) {
      expect(sent.body.toString('latin1'), where).not.toContain(id);
      expect(JSON.stringify(sent.headers), where).not.toContain(id);
    }
    if (sent.method !== 'POST') continue;
    const field = fieldOf(sent);
    const fields = await fieldsOf(sent);
    expect({ where, safety_identifier: fields.safety_identifier, user: fields.user }).toStrictEqual({
      where,
      safety_identifier: field === 'safety_identifier' ? identifier : undefined,
      user: field === 'user' ? identifier : undefined,
    });
    if (field) carried += 1;
    else expect(sent.body.toString('latin1'), where).not.toContain(identifier);
  }
  return carried;
}

const catalogue = new Map(DEFAULT_MODEL_CATALOGUE.map((entry) => [entry.id.replace(/\*$/, ''), entry]));
const REPLICATE_MODELS: Record<string, string> = {
  'black-forest-labs/flux-kontext-': 'black-forest-labs/flux-kontext-pro',
  'kwaivgi/kling-': 'kwaivgi/kling-v2.1',
  'minimax/hailuo-': 'minimax/hailuo-02',
};
// each default row routed to a fake of its provider, as the model catalogue's walk does
const gateway = await gatewayWith({
  fakes: { images: startFakePaidImages, ark: startFakeArk, gemini: startFakeGemini, fal: startFakeFal, replicate: startFakeReplicate, veo: startFakeVeo },
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
  tenancy: { safetyIdentifier: { secret: SECRET } },
  resetEach: true,
});
// Veo's videos are kept in storage: its rows go to an instance with storage, as in the catalogue walk
const withStorage = gateway.variant({ storage: localResultStorage({ directory: tempDir('safety-identifier-results-'), secret: 'a-results-signing-secret-of-more-than-32-chars' }) });
const appFor = (model: ListedModel) => (model.id.startsWith('veo-') ? withStorage.app : gateway.app);
const { fakes } = gateway;

describe('every catalogue model on every endpoint it lists', () => {
  // OpenAI's image endpoints take `user`; Ark's video tasks `safety_identifier`; DashScope, Seedream,
  // Gemini and Veo, fal and Replicate document none
  const imagesField = (sent: RecordedRequest): Field => (sent.path.startsWith('/v1/images/') ? 'user' : undefined);
  const arkField = (sent: RecordedRequest): Field => (sent.path === '/api/v3/contents/generations/tasks' ? 'safety_identifier' : undefined);
  const none = (): Field => undefined;

  it.each([
    { key: KEY_A, tenant: 'tenant-a' },
    { key: KEY_B, tenant: 'tenant-b' },
  ] as const)('walked by $tenant: the vendor field of each request, and no caller id anywhere', async ({ key }) => {
    const { pairs, failures } = await walkModels(gateway.app, key, appFor);
    expect(failures).toEqual([]);
    expect(pairs).toBeGreaterThan(50);
    const carriedByImages = await checkSent(fakes.images.requests, key, imagesField);
    const carriedByArk = await checkSent(fakes.ark.requests, key, arkField);
    expect(carriedByImages).toBeGreaterThan(0);
    expect(carriedByArk).toBeGreaterThan(0);
    for (const fake of [fakes.gemini, fakes.fal, fakes.replicate, fakes.veo]) await checkSent(fake.requests, key, none);
    // the fakes that take no field were reached too: nothing above was vacuous
    expect(fakes.gemini.requests.length * fakes.fal.requests.length * fakes.replicate.requests.length * fakes.veo.requests.length).toBeGreaterThan(0);
  });

  it('two tenants have two identifiers', () => {
    expect(identifierOf(KEY_A)).not.toBe(identifierOf(KEY_B));
  });
});

const sdk = await gatewayWith({
  fakes: { llm: startFakeLlm, picky: startFakeLlm, openai: startFakeOpenAI, azure: startFakeAzure, paid: startFakePaidImages },
  resolve: ({ model, route }, { llm, picky, openai, azure, paid }): Upstream | null => {
    if (route === 'images.native') return { provider: 'ark', baseURL: `${llm.origin}/api/v3`, apiKey: 'ark-key', model: 'doubao-seedream-4-0-250828' };
    if (model === 'gpt-image-1-mini') return { provider: 'openai', baseURL: paid.openaiBaseURL, apiKey: 'oa-key' };
    if (model === 'oa-chat') return { provider: 'openai', baseURL: llm.baseURL, apiKey: 'oa-key', model: 'upstream-chat' };
    if (model === 'ark-chat') return { provider: 'ark', baseURL: `${llm.origin}/api/v3`, apiKey: 'ark-key', model: 'doubao-seed-1-6' };
    if (model === 'qwen-plus') return { provider: 'dashscope', baseURL: `${llm.origin}/api/v1`, apiKey: 'ds-key' };
    if (model === 'az-chat' || model === 'az-image') return { provider: 'azure', baseURL: azure.endpoint, apiKey: AZURE_KEY, model: model === 'az-image' ? 'gpt-image-1' : 'gpt-4o' };
    if (model.startsWith('picky-')) return { provider: 'openai', baseURL: picky.baseURL, apiKey: 'oa-key' };
    if (model === 'gpt-image-1') return { provider: 'openai', baseURL: openai.baseURL, apiKey: 'oa-key' };
    return null;
  },
  tenancy: { safetyIdentifier: { secret: SECRET } },
});
const { llm, picky, openai, azure, paid } = sdk.fakes;
picky.refuses.add('safety_identifier');
const clients = { [KEY_A]: new OpenAI({ baseURL: `${sdk.url}/v1`, apiKey: KEY_A }), [KEY_B]: new OpenAI({ baseURL: `${sdk.url}/v1`, apiKey: KEY_B }) };
const a = clients[KEY_A];
const lastSent = async (fake: { requests: RecordedRequest[] }) => fieldsOf(fake.requests.at(-1)!);

describe('the official openai SDK: chat, responses and images', () => {
  it('OpenAI chat completions and responses, plain and streamed: safety_identifier, the same for one tenant, another for the other', async () => {
    const seen: Record<string, unknown[]> = { [KEY_A]: [], [KEY_B]: [] };
    for (const key of [KEY_A, KEY_B] as const) {
      const client = clients[key];
      const chat = await client.chat.completions.create({ model: 'oa-chat', messages: [{ role: 'user', content: 'Hi' }] });
      expect(chat.choices[0]?.message.content).toBe('Hello there');
      seen[key]!.push(await lastSent(llm));
      const stream = await client.chat.completions.create({ model: 'oa-chat', messages: [{ role: 'user', content: 'Hi' }], stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toBe('Hello there');
      seen[key]!.push(await lastSent(llm));
      const response = await client.responses.create({ model: 'oa-chat', input: 'Hi' });
      expect(response.output_text).toBe('Hello');
      seen[key]!.push(await lastSent(llm));
      const events = await client.responses.create({ model: 'oa-chat', input: 'Hi', stream: true });
      for await (const _event of events) void _event;
      seen[key]!.push(await lastSent(llm));
    }
    for (const key of [KEY_A, KEY_B] as const) {
      for (const fields of seen[key]!) expect(fields).toMatchObject({ model: 'upstream-chat', safety_identifier: identifierOf(key) });
      for (const fields of seen[key]!) expect(fields).not.toHaveProperty('user');
    }
    for (const sent of llm.requests) for (const id of Object.values(TENANTS)) expect(sent.body.toString('latin1')).not.toContain(id);
  });

  it("a caller's own user and safety_identifier give way to the gateway's (they could name another tenant)", async () => {
    await a.chat.completions.create({ model: 'oa-chat', messages: [{ role: 'user', content: 'Hi' }], user: 'tenant-b', safety_identifier: 'tenant-b' });
    expect(await lastSent(llm)).toMatchObject({ safety_identifier: identifierOf(KEY_A) });
    expect(await lastSent(llm)).not.toHaveProperty('user');
  });

  it('Ark: user on chat completions, nothing on responses; DashScope compatible mode: nothing', async () => {
    await a.chat.completions.create({ model: 'ark-chat', messages: [{ role: 'user', content: 'Hi' }], user: 'end-user-7' });
    const arkChat = await lastSent(llm);
    expect(llm.requests.at(-1)?.path).toBe('/api/v3/chat/completions');
    expect(arkChat).toMatchObject({ model: 'doubao-seed-1-6', user: identifierOf(KEY_A) });
    expect(arkChat).not.toHaveProperty('safety_identifier');
    await a.responses.create({ model: 'ark-chat', input: 'Hi', safety_identifier: 'end-user-7' });
    expect(llm.requests.at(-1)?.path).toBe('/api/v3/responses');
    expect(await lastSent(llm)).not.toHaveProperty('safety_identifier');
    expect(await lastSent(llm)).not.toHaveProperty('user');
    await a.chat.completions.create({ model: 'qwen-plus', messages: [{ role: 'user', content: 'Hi' }], user: 'end-user-7' });
    expect(llm.requests.at(-1)?.path).toBe('/compatible-mode/v1/chat/completions');
    expect(await lastSent(llm)).not.toHaveProperty('safety_identifier');
    expect(await lastSent(llm)).not.toHaveProperty('user');
  });

  it('OpenAI images: user on generations and on a multipart edit', async () => {
    await a.images.generate({ model: 'gpt-image-1', prompt: 'a paper crane', user: 'tenant-b' });
    expect(await lastSent(openai)).toStrictEqual({ model: 'gpt-image-1', prompt: 'a paper crane', user: identifierOf(KEY_A) });
    await clients[KEY_B].images.edit({ model: 'gpt-image-1', image: await toFile(TINY_PNG, 'cat.png', { type: 'image/png' }), prompt: 'add a hat', user: 'tenant-a' });
    const form = await formOf(openai.requests.at(-1)!);
    expect(form.getAll('user')).toStrictEqual([identifierOf(KEY_B)]);
    expect(form.get('safety_identifier')).toBeNull();
    expect(form.get('image')).toBeInstanceOf(Blob);
  });

  it('OpenAI images streamed, and an asynchronous image task: user, from the task run as from the request', async () => {
    const stream = await a.images.generate({ model: 'gpt-image-1-mini', prompt: 'a paper crane', stream: true, partial_images: 1 });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types.at(-1)).toBe('image_generation.completed');
    expect(await lastSent(paid)).toMatchObject({ stream: true, user: identifierOf(KEY_A) });
    const submitted = await request(sdk.app)
      .post('/v1/images/generations/async')
      .set('Authorization', `Bearer ${KEY_B}`)
      .send({ model: 'gpt-image-1-mini', prompt: 'a paper crane', user: 'tenant-a' });
    expect(submitted.status).toBe(202);
    await expect.poll(() => paid.apiRequests().length, { timeout: 10_000 }).toBe(2);
    expect(await fieldsOf(paid.apiRequests()[1]!)).toMatchObject({ prompt: 'a paper crane', user: identifierOf(KEY_B) });
  });

  it("Ark's native image route: no field (Seedream documents none), the caller's own dropped", async () => {
    const answered = await request(sdk.app).post('/api/v3/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'seedream', prompt: 'a paper crane', user: 'tenant-b' });
    expect(answered.status).toBe(200);
    expect(llm.requests.at(-1)?.path).toBe('/api/v3/images/generations');
    const sent = await lastSent(llm);
    expect(sent).toMatchObject({ model: 'doubao-seedream-4-0-250828', prompt: 'a paper crane' });
    expect(sent).not.toHaveProperty('user');
    expect(sent).not.toHaveProperty('safety_identifier');
  });

  it('Azure OpenAI: safety_identifier on chat, user on images (a field its image API refuses would be a 400)', async () => {
    await a.chat.completions.create({ model: 'az-chat', messages: [{ role: 'user', content: 'Hi' }] });
    expect(await lastSent(azure)).toMatchObject({ safety_identifier: identifierOf(KEY_A) });
    const image = await a.images.generate({ model: 'az-image', prompt: 'a paper crane' });
    expect(image.data).toHaveLength(1);
    expect(await lastSent(azure)).toMatchObject({ user: identifierOf(KEY_A) });
    expect(await lastSent(azure)).not.toHaveProperty('safety_identifier');
  });

  it('an upstream that refuses safety_identifier with a 400: asked once more with user, remembered, its work paid once', async () => {
    const before = { sent: picky.requests.length, paid: picky.paidWork(), usage: sdk.usage.length };
    const chat = await a.chat.completions.create({ model: 'picky-chat', messages: [{ role: 'user', content: 'Hi' }] });
    expect(chat.choices[0]?.message.content).toBe('Hello there');
    const tried = await Promise.all(picky.requests.slice(before.sent).map(fieldsOf));
    expect(tried.map((fields) => [fields.safety_identifier, fields.user])).toStrictEqual([
      [identifierOf(KEY_A), undefined],
      [undefined, identifierOf(KEY_A)],
    ]);
    // the refused call did no work; the retry is the one paid call and the one usage event
    expect(picky.paidWork() - before.paid).toBe(1);
    const events = sdk.usage.slice(before.usage);
    expect(events.map((event) => [event.route, event.model, event.status])).toStrictEqual([['chat.completions', 'picky-chat', 200]]);
    expect(events[0]?.vendorWork?.attempts.map((attempt) => [attempt.provider, attempt.outcome])).toStrictEqual([['openai', 'made']]);

    // remembered: the next call of that upstream goes with user at once, for every tenant
    const again = picky.requests.length;
    await clients[KEY_B].chat.completions.create({ model: 'picky-chat', messages: [{ role: 'user', content: 'Hi' }] });
    expect((await Promise.all(picky.requests.slice(again).map(fieldsOf))).map((fields) => [fields.safety_identifier, fields.user])).toStrictEqual([[undefined, identifierOf(KEY_B)]]);
    expect(picky.paidWork() - before.paid).toBe(2);
  });

  it('a stream refused the same way before it opened: asked once more with user, streamed once', async () => {
    const before = { sent: picky.requests.length, paid: picky.paidWork(), usage: sdk.usage.length };
    const stream = await a.chat.completions.create({ model: 'picky-stream', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello there');
    const tried = await Promise.all(picky.requests.slice(before.sent).map(fieldsOf));
    expect(tried.map((fields) => [fields.safety_identifier, fields.user])).toStrictEqual([
      [identifierOf(KEY_A), undefined],
      [undefined, identifierOf(KEY_A)],
    ]);
    expect(picky.paidWork() - before.paid).toBe(1);
    await expect.poll(() => sdk.usage.length - before.usage, { timeout: 10_000 }).toBe(1);
    expect(sdk.usage.at(-1)).toMatchObject({ route: 'chat.completions', model: 'picky-stream', status: 200 });
  });

  it('an upstream that refuses user as well: the 400 is the answer, after two calls and no work', async () => {
    picky.refuses.add('user');
    try {
      const before = { sent: picky.requests.length, paid: picky.paidWork() };
      const failed = await a.chat.completions.create({ model: 'picky-other', messages: [{ role: 'user', content: 'Hi' }] }).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(OpenAI.BadRequestError);
      expect(picky.requests.length - before.sent).toBe(2);
      expect(picky.paidWork() - before.paid).toBe(0);
    } finally {
      picky.refuses.delete('user');
    }
  });

  it('with the option off, bodies pass as they came: no identifier, the caller’s user as sent', async () => {
    const off = sdk.variant({ tenancy: { safetyIdentifier: false } });
    const answered = await request(off.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'oa-chat', messages: [{ role: 'user', content: 'Hi' }], user: 'end-user-7' });
    expect(answered.status).toBe(200);
    const sent = await lastSent(llm);
    expect(sent).toMatchObject({ user: 'end-user-7' });
    expect(sent).not.toHaveProperty('safety_identifier');
  });
});
