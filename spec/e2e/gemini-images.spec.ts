// The Gemini API behind the OpenAI image routes (docs/providers/gemini.md), read by the official openai SDK: a
// text-to-image call (the bytes Gemini sent, unchanged), an edit as inlineData parts, `n` as n calls
// charged per image delivered, each class of Gemini error, a streamed request (the completed-event
// form) and an asynchronous image task; then Vertex AI (the same bodies, a bearer token from the host's
// function). The fake counts the paid calls it starts.
import OpenAI, { toFile } from 'openai';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { modelEntry } from '../../lib/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { localResultStorage } from '../../lib/storage.js';
import { GEMINI_KEY, VERTEX_TOKEN, geminiError, geminiImageAnswer, startFakeGemini } from '../helpers/fake-gemini.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_GIF, TINY_JPEG, TINY_PNG } from '../helpers/images.js';
import { quotaUsed } from '../helpers/paid-work.js';
import { imageTaskEnded } from '../helpers/image-task-ended.js';
import { failureOf } from '../helpers/sdk-failure.js';

const MODEL = 'gemini-3-pro-image-preview';
const GENERATE_PATH = `/v1beta/models/${MODEL}:generateContent`;

const gw = await gatewayWith({
  fakes: { gemini: startFakeGemini },
  resolve: ({ model }, { gemini }) => {
    const vertex = { provider: 'vertex', baseURL: gemini.vertexBaseURL, project: 'my-project', location: 'us-central1', model: MODEL } as const;
    if (model === 'vertex-image') return { ...vertex, getAccessToken: () => Promise.resolve(VERTEX_TOKEN) };
    if (model === 'vertex-no-token') return { ...vertex, getAccessToken: () => Promise.reject(new Error(`metadata server down, token ${VERTEX_TOKEN}`)) };
    if (model === 'vertex-no-project') return { ...vertex, project: '', getAccessToken: () => VERTEX_TOKEN };
    if (model === 'gemini-wrong-key') return { provider: 'gemini', baseURL: gemini.baseURL, apiKey: 'not-the-key', model: MODEL };
    return { provider: 'gemini', baseURL: gemini.baseURL, apiKey: GEMINI_KEY, model: MODEL };
  },
  tenancy: { quotas: { limits: { imagesPerMinute: 100_000 } } },
  resetEach: true,
});
const { gemini } = gw.fakes;
const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A, maxRetries: 0 });

describe('text to image', () => {
  it('sends generateContent with the key in x-goog-api-key and answers the bytes Gemini sent as b64_json', async () => {
    gemini.next((_req, res) => sendJson(res, 200, geminiImageAnswer(TINY_GIF, 'A paper crane on a desk.')));
    const result = await client.images.generate({ model: 'gemini-3-pro-image', prompt: 'a paper crane', size: '1536x1024', response_format: 'b64_json' });
    expect(result.data).toHaveLength(1);
    expect(Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64').equals(TINY_GIF)).toBe(true);
    expect(result.data?.[0]?.revised_prompt).toBe('A paper crane on a desk.');
    const sent = gemini.apiRequests();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.path).toBe(GENERATE_PATH);
    expect(sent[0]!.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(sent[0]!.headers.authorization).toBeUndefined();
    expect(sent[0]!.json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'a paper crane' }] }],
      generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '3:2', imageSize: '2K' } },
    });
  });

  it('answers a url request without storage with the image as b64_json (Gemini sends no URL)', async () => {
    const result = await client.images.generate({ model: MODEL, prompt: 'a lighthouse', size: '1024x1024' });
    expect(result.data?.[0]?.url).toBe('');
    expect(Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64').equals(TINY_PNG)).toBe(true);
    // 1024 on the longer side is Gemini's default 1K: only the ratio is sent
    expect((gemini.apiRequests()[0]!.json as { generationConfig: unknown }).generationConfig).toEqual({ responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1' } });
  });

  it("passes the allow-listed generationConfig and safetySettings; the caller's imageConfig wins over size", async () => {
    const safetySettings = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }];
    await client.images.generate({
      model: MODEL,
      prompt: 'a city at dusk',
      size: '1024x1024',
      // Gemini's own fields are not in the SDK's types; the SDK sends extra body fields as given
      ...({ generationConfig: { temperature: 0.4, responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '21:9', imageSize: '4K' } }, safetySettings } as object),
    });
    expect(gemini.apiRequests()[0]!.json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'a city at dusk' }] }],
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], temperature: 0.4, imageConfig: { aspectRatio: '21:9', imageSize: '4K' } },
      safetySettings,
    });
  });

  it.each([
    ['a size with no Gemini ratio', { size: '3000x1000' }, 'size'],
    ['a field Gemini does not take', { quality: 'high' }, 'quality'],
    ['a generationConfig key outside the allow-list', { generationConfig: { candidateCount: 2 } }, 'generationConfig.candidateCount'],
    ['a contract parameter Gemini has nothing for', { parameters: { negative_prompt: 'blur' } }, 'parameters.negative_prompt'],
    ['more images than the fan-out bound', { n: 5 }, 'parameters.n'],
  ])('%s is a 400 naming it, and Gemini is not called', async (_name, extra, param) => {
    const charged = await quotaUsed(gw.router, 'images');
    const res = await request(gw.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: MODEL, prompt: 'x', ...extra });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe(param);
    expect(res.body.error.code).toBe('invalid_request_error');
    expect(gemini.apiRequests()).toHaveLength(0);
    expect(await quotaUsed(gw.router, 'images')).toBe(charged);
  });
});

describe('edits', () => {
  it('sends the uploaded files as inlineData parts (bare base64 and their type), then the prompt', async () => {
    const images = [await toFile(TINY_PNG, 'a.png', { type: 'image/png' }), await toFile(TINY_JPEG, 'b.jpg', { type: 'image/jpeg' })];
    const result = await client.images.edit({ model: MODEL, image: images, prompt: 'put them side by side', response_format: 'b64_json' });
    expect(Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64').equals(TINY_PNG)).toBe(true);
    expect(gemini.apiRequests()[0]!.json).toEqual({
      contents: [
        {
          role: 'user',
          parts: [
            { inlineData: { mimeType: 'image/png', data: TINY_PNG.toString('base64') } },
            { inlineData: { mimeType: 'image/jpeg', data: TINY_JPEG.toString('base64') } },
            { text: 'put them side by side' },
          ],
        },
      ],
      generationConfig: { responseModalities: ['IMAGE'] },
    });
  });

  it('refuses a mask with a 400 naming mask, before any call', async () => {
    const error = await failureOf(
      client.images.edit({ model: MODEL, image: await toFile(TINY_PNG, 'a.png', { type: 'image/png' }), mask: await toFile(TINY_PNG, 'm.png', { type: 'image/png' }), prompt: 'x' }),
    );
    expect(error.status).toBe(400);
    expect(error.param).toBe('mask');
    expect(gemini.apiRequests()).toHaveLength(0);
  });

  it('sends a Data URL image of the contract shape as inlineData', async () => {
    const dataUrl = `data:image/gif;base64,${TINY_GIF.toString('base64')}`;
    const res = await request(gw.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: MODEL, input: { messages: [{ role: 'user', content: [{ text: 'animate it' }, { image: dataUrl }] }] } });
    expect(res.status).toBe(200);
    const parts = (gemini.apiRequests()[0]!.json as { contents: Array<{ parts: unknown[] }> }).contents[0]!.parts;
    expect(parts).toEqual([{ text: 'animate it' }, { inlineData: { mimeType: 'image/gif', data: TINY_GIF.toString('base64') } }]);
  });
});

describe('n: one call per image, charged per image delivered', () => {
  it('n 3 is three calls and three images, charged three', async () => {
    const [charged, made] = [await quotaUsed(gw.router, 'images'), gemini.imagesMade()];
    const result = await client.images.generate({ model: MODEL, prompt: 'three cats', n: 3, response_format: 'b64_json' });
    expect(result.data).toHaveLength(3);
    expect(gemini.apiRequests()).toHaveLength(3);
    // no call carries an `n` of its own: Gemini has none
    for (const sent of gemini.apiRequests()) expect(JSON.stringify(sent.json)).not.toContain('"n"');
    expect(gemini.imagesMade() - made).toBe(3);
    expect((await quotaUsed(gw.router, 'images')) - charged).toBe(3);
    await vi.waitFor(() => expect(gw.usage.at(-1)?.images).toBe(3));
    // the tokens of the three calls, under the names the pricing reads
    expect(gw.usage.at(-1)?.upstreamUsage).toEqual({ input_tokens: 21, output_tokens: 3870 });
  });

  it('when one of three calls fails, the two images made are answered and charged, the third given back', async () => {
    const [charged, made] = [await quotaUsed(gw.router, 'images'), gemini.imagesMade()];
    gemini.next((_req, res) => geminiError(res, 500, 'INTERNAL', 'An internal error has occurred.'));
    const result = await client.images.generate({ model: MODEL, prompt: 'three cats', n: 3, response_format: 'b64_json' });
    expect(gemini.apiRequests()).toHaveLength(3);
    expect(result.data).toHaveLength(2);
    expect(gemini.imagesMade() - made).toBe(2);
    expect((await quotaUsed(gw.router, 'images')) - charged).toBe(2);
  });
});

describe('Gemini errors', () => {
  it("400 INVALID_ARGUMENT is the caller's 400", async () => {
    gemini.next((_req, res) => geminiError(res, 400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.'));
    const error = await failureOf(client.images.generate({ model: MODEL, prompt: 'x' }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toEqual({
      message: 'The upstream rejected the request: Request contains an invalid argument. (gemini code INVALID_ARGUMENT)',
      type: 'invalid_request_error',
      code: 'invalid_request_error',
      param: null,
    });
  });

  it("a key Google refuses (400 API_KEY_INVALID) is the operator's 502, never the caller's 400 or 401", async () => {
    const error = await failureOf(client.images.generate({ model: 'gemini-wrong-key', prompt: 'x' }));
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_auth_failed');
    expect(error.message).not.toContain('not-the-key');
  });

  it("403 PERMISSION_DENIED is the operator's 502", async () => {
    gemini.next((_req, res) => geminiError(res, 403, 'PERMISSION_DENIED', 'The caller does not have permission'));
    const error = await failureOf(client.images.generate({ model: MODEL, prompt: 'x' }));
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_auth_failed');
  });

  it('429 RESOURCE_EXHAUSTED is a 429 with the Retry-After of its RetryInfo', async () => {
    gemini.next((_req, res) => geminiError(res, 429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota.', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' }]));
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: MODEL, prompt: 'x' });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('rate_limit_exceeded');
    expect(res.headers['retry-after']).toBe('37');
  });

  it('a blocked prompt (promptFeedback.blockReason) is a 400 content_policy_violation', async () => {
    gemini.next((_req, res) => sendJson(res, 200, { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, responseId: 'blocked-1' }));
    const error = await failureOf(client.images.generate({ model: MODEL, prompt: 'x' }));
    expect(error.status).toBe(400);
    expect(error.code).toBe('content_policy_violation');
    expect(error.message).toContain('PROHIBITED_CONTENT');
  });

  it('a refused image (finishReason IMAGE_SAFETY) is a 400 content_policy_violation', async () => {
    gemini.next((_req, res) => sendJson(res, 200, { candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'IMAGE_SAFETY' }], responseId: 'refused-1' }));
    const error = await failureOf(client.images.generate({ model: MODEL, prompt: 'x' }));
    expect(error.status).toBe(400);
    expect(error.code).toBe('content_policy_violation');
  });

  it('an answer with text and no image is a 502 naming the finishReason', async () => {
    gemini.next((_req, res) => sendJson(res, 200, { candidates: [{ content: { role: 'model', parts: [{ text: 'I cannot draw that.' }] }, finishReason: 'STOP' }] }));
    const error = await failureOf(client.images.generate({ model: MODEL, prompt: 'x' }));
    expect(error.status).toBe(502);
    expect(error.message).toContain('finishReason STOP');
  });

  it('500 INTERNAL is a 502 upstream_error', async () => {
    gemini.next((_req, res) => geminiError(res, 500, 'INTERNAL', 'An internal error has occurred.'));
    const error = await failureOf(client.images.generate({ model: MODEL, prompt: 'x' }));
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_error');
  });
});

describe('streamed and asynchronous', () => {
  it('stream: true is answered in the completed-event form with the bytes Gemini sent', async () => {
    gemini.next((_req, res) => sendJson(res, 200, geminiImageAnswer(TINY_JPEG)));
    const stream = await client.images.generate({ model: MODEL, prompt: 'a kite', stream: true });
    const events: Array<{ type: string; b64_json: string }> = [];
    for await (const event of stream) events.push(event);
    expect(events.map((event) => event.type)).toEqual(['image_generation.completed']);
    expect(Buffer.from(events[0]!.b64_json, 'base64').equals(TINY_JPEG)).toBe(true);
    // Gemini is not asked to stream: one ordinary generateContent call
    expect(gemini.apiRequests().map((sent) => sent.path)).toEqual([GENERATE_PATH]);
  });

  it('with storage, an image task succeeds with the image stored (Gemini sends no URL), and a url request gets the stored URL without the bytes', async () => {
    const stored = await gatewayWith({
      fakes: { gemini: startFakeGemini },
      resolve: (_input, fakes) => ({ provider: 'gemini', baseURL: fakes.gemini.baseURL, apiKey: GEMINI_KEY, model: MODEL }),
      storage: localResultStorage({ directory: tempDir('gemini-tasks-'), secret: 'gemini-task-results-secret-0123456789' }),
      callbacks: { pollIntervalsMs: { image: [1000] } },
    });
    const submitted = await request(stored.url).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Prefer', 'respond-async').send({ model: MODEL, prompt: 'a harbour' });
    expect(submitted.status).toBe(202);
    const task = await imageTaskEnded(stored.url, String(submitted.body.id), KEY_A);
    expect(task.status).toBe('succeeded');
    const url = String((task.result as { data: Array<{ url: string }> }).data[0]!.url);
    const image = await fetch(url);
    expect(Buffer.from(await image.arrayBuffer()).equals(TINY_PNG)).toBe(true);
    expect(stored.fakes.gemini.imagesMade()).toBe(1);
    // the synchronous route with storage: a url request gets the stored URL alone, the bytes left out
    const sync = await request(stored.url).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: MODEL, prompt: 'a harbour', response_format: 'url' });
    expect(sync.status).toBe(200);
    expect(sync.body.data[0].b64_json).toBe('');
    expect(Buffer.from(await (await fetch(String(sync.body.data[0].url))).arrayBuffer()).equals(TINY_PNG)).toBe(true);
    // and a b64_json request gets both, the bytes and their stored URL
    const bytes = await request(stored.url).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: MODEL, prompt: 'a harbour', response_format: 'b64_json' });
    expect(Buffer.from(String(bytes.body.data[0].b64_json), 'base64').equals(TINY_PNG)).toBe(true);
  });
});

describe('Vertex AI', () => {
  it("sends the same body to the publisher-model path with the host function's token as a bearer", async () => {
    const result = await client.images.generate({ model: 'vertex-image', prompt: 'a paper crane', size: '1024x1536', n: 2, response_format: 'b64_json' });
    expect(result.data).toHaveLength(2);
    expect(Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64').equals(TINY_PNG)).toBe(true);
    const sent = gemini.apiRequests();
    expect(sent.map((call) => call.path)).toEqual(Array(2).fill(`/v1/projects/my-project/locations/us-central1/publishers/google/models/${MODEL}:generateContent`));
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${VERTEX_TOKEN}`);
    expect(sent[0]!.headers['x-goog-api-key']).toBeUndefined();
    expect(sent[0]!.json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'a paper crane' }] }],
      generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '2:3', imageSize: '2K' } },
    });
  });

  it("a token function that fails is the operator's 502, with no call made and nothing of its error or token told", async () => {
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'vertex-no-token', prompt: 'x' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('upstream_auth_failed');
    expect(JSON.stringify(res.body)).not.toContain(VERTEX_TOKEN);
    expect(JSON.stringify(res.body)).not.toContain('metadata server');
    expect(gemini.apiRequests()).toHaveLength(0);
  });

  it('an upstream without a project is the operator mistake: a 500, no call made', async () => {
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'vertex-no-project', prompt: 'x' });
    expect(res.status).toBe(500);
    expect(gemini.apiRequests()).toHaveLength(0);
  });

  it("GET /v1/models lists a Gemini row for Vertex once the host's row names provider vertex", async () => {
    const vertex = await gatewayWith({
      fakes: { gemini: startFakeGemini },
      resolve: ({ model }, fakes) => (model.startsWith('gemini-3-pro-image') ? { provider: 'vertex', baseURL: fakes.gemini.vertexBaseURL, project: 'p', getAccessToken: () => VERTEX_TOKEN } : null),
      models: { catalogue: [{ ...modelEntry('gemini-3-pro-image')!, provider: 'vertex' }] },
    });
    const listed = await request(vertex.app).get('/v1/models').set('Authorization', `Bearer ${KEY_A}`);
    expect((listed.body.data as Array<{ id: string }>).map((model) => model.id)).toContain('gemini-3-pro-image');
    // and its rules still apply: a refused field never reaches Vertex
    const refused = await request(vertex.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'gemini-3-pro-image-preview', prompt: 'x', watermark: true });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe('watermark');
    expect(vertex.fakes.gemini.apiRequests()).toHaveLength(0);
  });
});
