// Hostile callers, lying upstreams and operator mistakes against the Azure OpenAI, Gemini and Vertex AI
// adapters (docs/providers/azure.md, docs/providers/gemini.md), through the official openai SDK and raw
// HTTP: nothing bad is sent upstream, nothing is charged that was not delivered, no key is told.
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import pino from 'pino';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { localResultStorage } from '../../lib/storage.js';
import { AZURE_API_VERSION, AZURE_KEY, AZURE_TOKEN, azureCallOf, azureError, startFakeAzure } from '../helpers/fake-azure.js';
import { GEMINI_KEY, VERTEX_TOKEN, geminiError, geminiImageAnswer, startFakeGemini } from '../helpers/fake-gemini.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';
import { quotaUsed } from '../helpers/paid-work.js';
import { imageTaskEnded } from '../helpers/image-task-ended.js';

const MODEL = 'gemini-3-pro-image-preview';
const lines: string[] = [];

const gw = await gatewayWith({
  fakes: { gemini: startFakeGemini, azure: startFakeAzure },
  resolve: ({ model }, { gemini, azure }) => {
    const vertex = { provider: 'vertex', baseURL: gemini.vertexBaseURL, project: 'my-project', location: 'us-central1', model: MODEL, timeoutMs: 300 } as const;
    // a token function that never answers, then a working upstream
    if (model === 'vertex-hangs')
      return [
        { ...vertex, getAccessToken: () => new Promise<string>(() => undefined) },
        { ...vertex, getAccessToken: () => VERTEX_TOKEN },
      ];
    if (model === 'vertex-crlf') return { ...vertex, getAccessToken: () => `${VERTEX_TOKEN}\r\nx-injected: 1` };
    // the deployment form with no deployment nor model: the caller's model names the deployment
    if (model === 'vertex-image') return { ...vertex, getAccessToken: () => VERTEX_TOKEN };
    if (model === 'az-token') return { provider: 'azure', baseURL: azure.endpoint, token: () => AZURE_TOKEN, apiVersion: AZURE_API_VERSION, model: 'gpt-image-1' };
    if (model === 'az-edit') return { provider: 'azure', baseURL: azure.endpoint, apiKey: AZURE_KEY, apiVersion: AZURE_API_VERSION, model: 'gpt-image-1' };
    if (model.startsWith('az') || model === '..' || model === '.') return { provider: 'azure', baseURL: azure.endpoint, apiKey: AZURE_KEY, apiVersion: AZURE_API_VERSION };
    return { provider: 'gemini', baseURL: gemini.baseURL, apiKey: GEMINI_KEY, model: MODEL };
  },
  logger: pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) }),
  tenancy: { quotas: { limits: { imagesPerMinute: 100_000 } } },
  resetEach: true,
});
const { gemini, azure } = gw.fakes;
const post = (body: Record<string, unknown>) => request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);

const native = (image: string) =>
  request(gw.app)
    .post('/v1/images/generations')
    .set('Authorization', `Bearer ${KEY_A}`)
    .send({ model: MODEL, input: { messages: [{ role: 'user', content: [{ text: 'x' }, { image }] }] } });
const eventStream = (res: ServerResponse, ...events: Array<Record<string, unknown>>): void => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join(''));
};

describe('Gemini: hostile input never reaches Gemini', () => {
  it('a nested object or an unknown value in generationConfig.imageConfig is a 400 naming it, no call made', async () => {
    for (const [imageConfig, param] of [
      [{ aspectRatio: { a: 1 } }, 'generationConfig.imageConfig.aspectRatio'],
      [{ aspectRatio: '7:3' }, 'generationConfig.imageConfig.aspectRatio'],
      [{ imageSize: ['2K'] }, 'generationConfig.imageConfig.imageSize'],
      [{ imageSize: '8K' }, 'generationConfig.imageConfig.imageSize'],
    ] as const) {
      const res = await post({ model: MODEL, prompt: 'x', generationConfig: { imageConfig } });
      expect(res.status, JSON.stringify(imageConfig)).toBe(400);
      expect(res.body.error.param).toBe(param);
    }
    expect(gemini.apiRequests()).toHaveLength(0);
  });

  it('safetySettings of other shapes, or longer than Gemini has categories, is a 400, no call made', async () => {
    const one = { category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' };
    for (const safetySettings of [Array(5000).fill(one), [1], [{ ...one, extra: { deep: true } }], [{ category: { a: 1 }, threshold: 'BLOCK_NONE' }]]) {
      const res = await post({ model: MODEL, prompt: 'x', safetySettings });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toMatch(/^safetySettings/);
    }
    expect(gemini.apiRequests()).toHaveLength(0);
    // the vendor's own shape still goes through as it is
    expect((await post({ model: MODEL, prompt: 'x', safetySettings: [one] })).status).toBe(200);
  });

  it('prototype keys, a huge n, and sizes that are no size are 400s, no call made', async () => {
    const proto = await request(gw.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .set('content-type', 'application/json')
      .send(`{"model":"${MODEL}","prompt":"x","generationConfig":{"__proto__":{"responseModalities":["TEXT"]},"constructor":{}}}`);
    expect(proto.status).toBe(400);
    expect((await post({ model: MODEL, prompt: 'x', n: 1000 })).status).toBe(400);
    for (const size of ['1e9x1', '0x0', '１０２４x１０２４', 'auto ', '-1x-1', '1000000x1']) expect((await post({ model: MODEL, prompt: 'x', size })).status, size).toBe(400);
    expect((await post({ model: MODEL, prompt: 'x', generationConfig: { responseModalities: ['TEXT'] } })).status).toBe(400);
    expect(gemini.apiRequests()).toHaveLength(0);
  });

  it('an image URL is a 400 (never fetched by the gateway); a data: URL that is not an image is a 400', async () => {
    for (const image of ['https://example.com/a.png', 'data:text/html;base64,PGh0bWw+', 'data:image/png;base64,PGh0bWw+PC9odG1sPg==']) {
      const res = await native(image);
      expect(res.status, image).toBe(400);
    }
    expect(gemini.apiRequests()).toHaveLength(0);
  });
});

describe('Gemini: lying answers', () => {
  it('inlineData that is not base64 of an image is a 502, never handed on, reported as not delivered', async () => {
    for (const data of ['<html>not base64</html>', Buffer.from('<html>an error page</html>').toString('base64')]) {
      gemini.next((_req, res) => sendJson(res, 200, { candidates: [{ content: { parts: [{ inlineData: { mimeType: 'image/png', data } }] }, finishReason: 'STOP' }] }));
      const res = await post({ model: MODEL, prompt: 'x', response_format: 'b64_json' });
      expect(res.status).toBe(502);
      expect(res.text).not.toContain('html');
      expect(res.body.error.code).toBe('upstream_bad_response');
    }
    // Gemini answered (and billed): the charge stands as for any unusable answer (docs/tenancy-and-billing.md "Retries")
    await vi.waitFor(() => expect(gw.usage.filter((event) => event.route === 'images.generations').map((event) => event.images)).toEqual([0, 0]));
  });

  it('a thought image only, no candidates, or an error in a 200 body: 502, not charged', async () => {
    const before = await quotaUsed(gw.router, 'images');
    const png = TINY_PNG.toString('base64');
    for (const body of [
      { candidates: [{ content: { parts: [{ thought: true, inlineData: { mimeType: 'image/png', data: png } }] }, finishReason: 'STOP' }] },
      { candidates: [] },
      { error: { code: 500, status: 'INTERNAL', message: 'x' } },
    ]) {
      gemini.next((_req, res) => sendJson(res, 200, body));
      expect((await post({ model: MODEL, prompt: 'x' })).status).toBe(502);
    }
    expect((await quotaUsed(gw.router, 'images')) - before).toBe(0);
  });

  it('a 429 with Retry-After as an HTTP date keeps the wait; an HTML 503 is a 502', async () => {
    gemini.next((_req, res) => geminiError(res, 429, 'RESOURCE_EXHAUSTED', 'quota', undefined, { 'retry-after': new Date(Date.now() + 120_000).toUTCString() }));
    const limited = await post({ model: MODEL, prompt: 'x' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(60);
    gemini.next((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<html>Service Unavailable</html>');
    });
    const html = await post({ model: MODEL, prompt: 'x' });
    expect(html.status).toBe(502);
    expect(html.text).not.toContain('<html>');
  });

  it('the official SDK does not retry, and Gemini does not make again, a fan-out that failed after work began', async () => {
    gemini.next((_req, res) => geminiError(res, 500, 'INTERNAL', 'x'));
    gemini.next((_req, res) => geminiError(res, 500, 'INTERNAL', 'x'));
    const retrying = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });
    const failed = await retrying.images.generate({ model: MODEL, prompt: 'x', n: 2, response_format: 'b64_json' }).then(
      () => undefined,
      (error: unknown) => error as { status?: number },
    );
    expect(failed?.status).toBe(502);
    expect(gemini.apiRequests()).toHaveLength(2);
  });

  it('a key quoted by Gemini in its error is never told', async () => {
    gemini.next((_req, res) => geminiError(res, 400, 'INVALID_ARGUMENT', `bad request for key ${GEMINI_KEY}`));
    const res = await post({ model: MODEL, prompt: 'x' });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain(GEMINI_KEY);
  });
});

describe('tokens quoted back', () => {
  it("a Vertex token quoted in Vertex's error is never told", async () => {
    gemini.next((_req, res) => geminiError(res, 400, 'INVALID_ARGUMENT', `token ${VERTEX_TOKEN} cannot be used here`));
    const res = await post({ model: 'vertex-image', prompt: 'x' });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain(VERTEX_TOKEN);
  });

  it("an Entra token quoted in Azure's error, or in a stream's error event, is never told", async () => {
    azure.next((_req, res) => azureError(res, 400, 'invalid_request_error', `token ${AZURE_TOKEN} has no access to this deployment`));
    const res = await post({ model: 'az-token', prompt: 'x' });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain(AZURE_TOKEN);
    azure.next((_req, res) => eventStream(res, { type: 'error', error: { type: 'server_error', code: 'server_error', message: `token ${AZURE_TOKEN}`, param: null } }));
    const streamed = await post({ model: 'az-token', prompt: 'x', stream: true });
    expect(streamed.text).toContain('[redacted]');
    expect(streamed.text).not.toContain(AZURE_TOKEN);
  });
});

describe('Vertex AI: operator mistakes', () => {
  it("a getAccessToken that never answers is given up within the upstream's timeout, no call made: the next upstream serves it", async () => {
    const res = await post({ model: 'vertex-hangs', prompt: 'x', response_format: 'b64_json' });
    expect(res.status).toBe(200);
    // one call: the second upstream's; the first sent nothing
    expect(gemini.apiRequests()).toHaveLength(1);
    expect(gemini.apiRequests()[0]!.headers.authorization).toBe(`Bearer ${VERTEX_TOKEN}`);
  });

  it("a token with a line break is the operator's 502 upstream_auth_failed, no call made, the token not told", async () => {
    const res = await post({ model: 'vertex-crlf', prompt: 'x' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('upstream_auth_failed');
    expect(res.text).not.toContain(VERTEX_TOKEN);
    expect(gemini.apiRequests()).toHaveLength(0);
  });
});

describe("Azure: the caller's model never leaves the deployment path", () => {
  it("a model of '.' or '..' (a dot segment) is a 400 naming model, Azure not called", async () => {
    for (const model of ['..', '.']) {
      const res = await post({ model, prompt: 'x' });
      expect(res.status, model).toBe(400);
      expect(res.body.error.param).toBe('model');
    }
    expect(azure.requests).toHaveLength(0);
  });

  it("'/', '%2F' and '?api-version=' in a model stay inside the deployment segment", async () => {
    for (const model of ['az/../x', 'az%2F..', 'az?api-version=1']) {
      const res = await post({ model, prompt: 'x', response_format: 'b64_json' });
      expect(res.status, model).toBe(200);
      const call = azureCallOf(azure.requests.at(-1)!);
      expect(call).toMatchObject({ form: 'deployment', deployment: model, apiVersion: AZURE_API_VERSION });
    }
  });

  it('an uploaded file name with CRLF does not add a part header to the form Azure gets', async () => {
    const res = await request(gw.app)
      .post('/v1/images/edits')
      .set('Authorization', `Bearer ${KEY_A}`)
      .field('model', 'az-edit')
      .field('prompt', 'x')
      .attach('image', TINY_PNG, { filename: 'a\r\nX-Evil: 1\r\n.png', contentType: 'image/png' });
    expect(res.status).toBe(200);
    const sent = azure.requests.at(-1)!.body.toString('latin1');
    expect(sent).not.toMatch(/\r\nX-Evil: 1\r\n/);
  });
});

describe('Azure: lying streams', () => {
  it('a stream that ends without a completed event ends with an error event, and is charged nothing', async () => {
    const before = await quotaUsed(gw.router, 'images');
    azure.next((_req, res) => eventStream(res, { type: 'image_generation.partial_image', b64_json: TINY_PNG.toString('base64'), partial_image_index: 0 }));
    const res = await post({ model: 'az-d', prompt: 'x', stream: true, partial_images: 1 });
    expect(res.status).toBe(200);
    // the stream's last event says no image came: the SDKs raise it, never a silent success
    expect(res.text.trimEnd().split('\n\n').at(-1)).toMatch(/^event: error\ndata: .*"code":"upstream_no_image"/);
    expect((await quotaUsed(gw.router, 'images')) - before).toBe(0);
  });

  it('the official SDK iterating such a stream gets an error, not an empty success', async () => {
    azure.next((_req, res) => eventStream(res, { type: 'image_generation.partial_image', b64_json: TINY_PNG.toString('base64'), partial_image_index: 0 }));
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A, maxRetries: 0 });
    const seen: string[] = [];
    const failure = await (async () => {
      const stream = await client.images.generate({ model: 'az-d', prompt: 'x', stream: true, partial_images: 1 });
      for await (const event of stream) seen.push(event.type);
    })().catch((error: unknown) => error);
    expect(seen).toEqual(['image_generation.partial_image']);
    expect(failure).toBeInstanceOf(Error);
  });

  it('an error event quoting the resource key is relayed without it, and charged nothing', async () => {
    const before = await quotaUsed(gw.router, 'images');
    azure.next((_req, res) => eventStream(res, { type: 'error', error: { type: 'server_error', code: 'server_error', message: `boom for ${AZURE_KEY}`, param: null } }));
    const res = await post({ model: 'az-d', prompt: 'x', stream: true });
    expect(res.text).toContain('error');
    expect(res.text).not.toContain(AZURE_KEY);
    expect((await quotaUsed(gw.router, 'images')) - before).toBe(0);
  });
});

describe('the fake Gemini is as strict as Google', () => {
  it('refuses an unknown field, a snake_case twin, bytes that are not base64 and a nested imageConfig value', async () => {
    const parts = [{ text: 'x' }];
    const made = gemini.imagesMade();
    for (const body of [
      { contents: [{ parts }], n: 2 },
      { contents: [{ parts }], generation_config: {} },
      { contents: [{ parts: [{ inlineData: { mimeType: 'image/png', data: '<html>' } }] }] },
      { contents: [{ parts }], generationConfig: { imageConfig: { aspectRatio: { a: 1 } } } },
    ]) {
      const res = await fetch(`${gemini.baseURL}/models/${MODEL}:generateContent`, {
        method: 'POST',
        headers: { 'x-goog-api-key': GEMINI_KEY, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: { status: string } }).error.status).toBe('INVALID_ARGUMENT');
    }
    expect(gemini.imagesMade()).toBe(made);
  });
});

describe('Gemini: a caller who leaves mid fan-out', () => {
  it("the n calls go on, and the client's retry gets their images: Gemini makes them once", async () => {
    const held: Array<() => void> = [];
    for (let index = 0; index < 3; index += 1) gemini.next((_req, res) => void held.push(() => sendJson(res, 200, geminiImageAnswer())));
    const body = JSON.stringify({ model: MODEL, prompt: 'three cats, once', n: 3, response_format: 'b64_json' });
    const controller = new AbortController();
    const headers = { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' };
    const sent = fetch(`${gw.url}/v1/images/generations`, { method: 'POST', headers, body, signal: controller.signal }).catch(() => undefined);
    await expect.poll(() => held.length).toBe(3);
    const charged = await quotaUsed(gw.router, 'images');
    controller.abort();
    await sent;
    // as postAndLeave (spec/helpers/paid-work.ts): a retry sent while the gateway still sees the client is new work
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const release of held) release();
    // the retry the official SDK would send: the same body, answered by the work already made
    const retried = await request(gw.app).post('/v1/images/generations').set(headers).send(body);
    expect(retried.status).toBe(200);
    expect(retried.body.data).toHaveLength(3);
    expect(gemini.apiRequests()).toHaveLength(3);
    expect(await quotaUsed(gw.router, 'images')).toBe(charged);
  });
});

describe('the fake Azure is as strict as Azure', () => {
  it("refuses a field the image API does not know; through the gateway that is the caller's 400, charged nothing", async () => {
    const before = await quotaUsed(gw.router, 'images');
    const res = await post({ model: 'az-d', prompt: 'x', watermark: true });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('Unrecognized request argument supplied: watermark');
    expect(azure.started()).toBe(0);
    expect((await quotaUsed(gw.router, 'images')) - before).toBe(0);
  });
});

describe('Gemini: Idempotency-Key with fan-out', () => {
  it('a retry with the same key replays the n images: no second fan-out, no second charge', async () => {
    const key = `fan-out-${Date.now()}`;
    const body = { model: MODEL, prompt: 'two dogs', n: 2, response_format: 'url' };
    const before = await quotaUsed(gw.router, 'images');
    const first = await post(body).set('Idempotency-Key', key);
    expect(first.status).toBe(200);
    const again = await post(body).set('Idempotency-Key', key);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(gemini.apiRequests()).toHaveLength(2);
    expect((await quotaUsed(gw.router, 'images')) - before).toBe(2);
  });
});

describe('Gemini: streams and image tasks charge the images delivered', () => {
  it('a stream of n 3 with one call refused: two completed events, charged two', async () => {
    const before = await quotaUsed(gw.router, 'images');
    gemini.next((_req, res) => geminiError(res, 500, 'INTERNAL', 'An internal error has occurred.'));
    const res = await post({ model: MODEL, prompt: 'x', n: 3, stream: true });
    expect(res.status).toBe(200);
    expect(res.text.match(/event: image_generation\.completed/g)).toHaveLength(2);
    expect(gemini.apiRequests()).toHaveLength(3);
    expect((await quotaUsed(gw.router, 'images')) - before).toBe(2);
  });

  it('an image task of n 2 with one call rate limited: succeeded with one image, charged one', async () => {
    const stored = await gatewayWith({
      fakes: { gemini: startFakeGemini },
      resolve: (_input, fakes) => ({ provider: 'gemini', baseURL: fakes.gemini.baseURL, apiKey: GEMINI_KEY, model: MODEL }),
      storage: localResultStorage({ directory: tempDir('gemini-hostile-tasks-'), secret: 'gemini-hostile-task-secret-0123456789' }),
      callbacks: { pollIntervalsMs: { image: [1000] } },
      tenancy: { quotas: { limits: { imagesPerMinute: 100 } } },
    });
    stored.fakes.gemini.next((_req, res) => geminiError(res, 429, 'RESOURCE_EXHAUSTED', 'quota', undefined, { 'retry-after': '30' }));
    const submitted = await request(stored.url).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Prefer', 'respond-async').send({ model: MODEL, prompt: 'x', n: 2 });
    expect(submitted.status).toBe(202);
    const task = await imageTaskEnded(stored.url, String(submitted.body.id), KEY_A);
    expect(task.status).toBe('succeeded');
    expect((task.result as { data: unknown[] }).data).toHaveLength(1);
    expect(stored.fakes.gemini.apiRequests()).toHaveLength(2);
    await expect.poll(() => quotaUsed(stored.router, 'images')).toBe(1);
  });
});

describe('no key in any log line', () => {
  it('the Gemini key, the Azure key and Entra token, and the Vertex token were never logged', () => {
    // the failures above were logged (the upstreams that failed, the answers given)
    expect(lines.some((line) => line.includes('upstream failed'))).toBe(true);
    const all = lines.join('\n');
    for (const secret of [GEMINI_KEY, AZURE_KEY, AZURE_TOKEN, VERTEX_TOKEN]) expect(all).not.toContain(secret);
  });
});
