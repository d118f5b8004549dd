// The gateway against OpenAI's own description of its API (docs/service-contract.md "OpenAI's API
// description"): what a client of the OpenAI SDKs reads, and what an OpenAI-compatible upstream receives,
// checked with ajv against the pinned copy of OpenAI's published OpenAPI document in spec/fixtures/ (how
// ajv reads that document's quirks: spec/helpers/openai-openapi.ts). A host Express app with the router
// mounted, in front of fake upstreams on port 0: an OpenAI-compatible image upstream that answers
// b64_json and streams its events, one that answers URLs, DashScope (answers translated by the
// gateway), and an OpenAI-compatible chat and Responses upstream. Checked: the success bodies of
// images.generate and images.edit (b64_json and url), chat completions (plain and streamed) and
// responses; the image stream events, relayed and written by the gateway; the error bodies (400, 401,
// 404, 429, 503, and a stream's error event); the request bodies the upstream receives. Where the
// gateway differs from the document on purpose, the spec asserts that difference alone, citing the page
// of docs/ that says so.
import request, { type Response as TestResponse } from 'supertest';
import { describe, expect, it } from 'vitest';
import type { ResolveUpstreamInput, Upstream } from '../../lib/index.js';
import { chatChunks, responseEvents, startFakeLlm, writeSlowly } from '../helpers/fake-llm.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { OPENAI_EDITS, OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';
import { openAIDocument } from '../helpers/openai-openapi.js';

const openai = openAIDocument();

type Fakes = {
  paid: Awaited<ReturnType<typeof startFakePaidImages>>;
  urls: Awaited<ReturnType<typeof startFakeOpenAI>>;
  llm: Awaited<ReturnType<typeof startFakeLlm>>;
};

function resolve({ model }: ResolveUpstreamInput, { paid, urls, llm }: Fakes): Upstream | null {
  // an OpenAI-compatible image upstream answering b64_json, and streaming OpenAI's image events
  if (model === 'gpt-image-1') return { provider: 'openai', baseURL: paid.openaiBaseURL, apiKey: 'oa-key' };
  // an OpenAI-compatible image upstream answering URLs (generations) and b64_json (edits)
  if (model === 'dall-e-3') return { provider: 'openai', baseURL: urls.baseURL, apiKey: 'oa-key' };
  if (model === 'x-image-2.0') return { provider: 'dashscope', baseURL: paid.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-2.0' };
  if (model === 'x-image-edit') return { provider: 'dashscope', baseURL: paid.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-edit-plus' };
  if (model === 'chat-small') return { provider: 'openai', baseURL: llm.baseURL, apiKey: 'llm-key', model: 'upstream-chat-small' };
  return null;
}

const gw = await gatewayWith({ fakes: { paid: startFakePaidImages, urls: startFakeOpenAI, llm: startFakeLlm }, resolve, resetEach: true });
const { paid, llm } = gw.fakes;
// the chat fake streams one chunk per delay: none is needed here
llm.chunkDelayMs = 0;

const AUTH = { authorization: `Bearer ${KEY_A}` };

/** What OpenAI answers to `POST /responses`, after the document's example of that operation (its paths are not in the pinned copy). */
const RESPONSE_BODY = {
  id: 'resp_1',
  object: 'response',
  created_at: 1741476542,
  status: 'completed',
  completed_at: 1741476543,
  error: null,
  incomplete_details: null,
  instructions: null,
  max_output_tokens: null,
  model: 'upstream-chat-small',
  output: [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }] }],
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  store: true,
  temperature: 1,
  text: { format: { type: 'text' } },
  tool_choice: 'auto',
  tools: [],
  top_p: 1,
  truncation: 'disabled',
  usage: { input_tokens: 36, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 38 },
  // two changes to the example, which its own schema refuses: `logprobs` above (required of output_text),
  // and no `user: null` (typed a string)
  metadata: {},
};

const postJson = (path: string, body: object) => request(gw.app).post(path).set(AUTH).send(body);

/** A multipart image edit, as the SDKs send it: `image` for one file, `image[]` for several. */
function postEdit(fields: Record<string, string>, files = 1): request.Test {
  let call = request(gw.app).post('/v1/images/edits').set(AUTH);
  for (const [name, value] of Object.entries(fields)) call = call.field(name, value);
  for (let index = 0; index < files; index += 1) call = call.attach(files === 1 ? 'image' : 'image[]', TINY_PNG, { filename: `in-${index}.png`, contentType: 'image/png' });
  return call;
}

interface SseEvent {
  event: string | undefined;
  data: string;
}

/** The events of an SSE body, comments (`: keep-alive`) left out. */
function sseEvents(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .map((block) => block.split('\n').filter((line) => line !== '' && !line.startsWith(':')))
    .filter((lines) => lines.length > 0)
    .map((lines) => ({
      event: lines.find((line) => line.startsWith('event: '))?.slice('event: '.length),
      data: lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n'),
    }));
}

/** A streamed answer's text, read whole (supertest buffers text/event-stream as text). */
async function streamed(call: request.Test): Promise<{ status: number; events: SseEvent[] }> {
  const response = await call.buffer(true).parse((res, done) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.on('end', () => done(null, text));
  });
  return { status: response.status, events: sseEvents(response.body as string) };
}

/** The fields of a multipart body as the document's form schema names them: files as text, `name[]` as the array `name`. */
async function formFields(body: Buffer, contentType: string): Promise<Record<string, unknown>> {
  const form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
  const fields: Record<string, unknown> = {};
  for (const [name, value] of form.entries()) {
    const text = typeof value === 'string' ? value : `<${value.type} file, ${value.size} bytes>`;
    if (name.endsWith('[]')) {
      const key = name.slice(0, -2);
      fields[key] = [...((fields[key] as string[] | undefined) ?? []), text];
    } else fields[name] = text;
  }
  return fields;
}

/** The error body of `response`: status and code as expected, and conforming to the document's ErrorResponse. */
function expectError(response: TestResponse, status: number, code: string, param: string | null): void {
  expect(response.status).toBe(status);
  expect(openai.problems('ErrorResponse', response.body)).toEqual([]);
  expect(response.body.error).toMatchObject({ code, param });
}

describe('the pinned document', () => {
  it("is OpenAI's OpenAPI 3.1 description, version 2.3.0, at a named commit of openai/openai-openapi", () => {
    expect(openai.source).toMatchObject({ repository: 'openai/openai-openapi', path: 'openapi.json', openapi: '3.1.0', version: '2.3.0' });
    expect(openai.source.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it('is read as a validator: it refuses what it should (an error object without param)', () => {
    expect(openai.problems('ErrorResponse', { error: { message: 'm', type: 't', code: null, param: null } })).toEqual([]);
    expect(openai.problems('ErrorResponse', { error: { message: 'm', type: 't', code: null } })).toEqual(["/error must have required property 'param'"]);
    // nullable (OpenAPI 3.0's spelling in the 3.1 document) admits null and nothing else
    expect(openai.problems('CreateImageRequest', { prompt: 'p', response_format: null })).toEqual([]);
    expect(openai.problems('CreateImageRequest', { prompt: 'p', response_format: 'gif' })).not.toEqual([]);
  });
});

describe('success bodies', () => {
  // where the fakes' short answers leave out fields OpenAI always sends, the upstream answers OpenAI's own
  // example from the document, so what is checked is what the gateway makes of a conforming answer
  const PNG_BASE64 = TINY_PNG.toString('base64');

  it('the upstream answers used here conform themselves', () => {
    expect(openai.problems('ImagesResponse', { ...openai.example('ImagesResponse'), data: [{ b64_json: PNG_BASE64 }] })).toEqual([]);
    expect(openai.problems('CreateChatCompletionResponse', openai.example('CreateChatCompletionResponse'))).toEqual([]);
    expect(openai.problems('Response', RESPONSE_BODY)).toEqual([]);
  });

  it.each([
    ['an OpenAI-compatible upstream, b64_json', { model: 'gpt-image-1', prompt: 'a paper crane' }, 'b64_json'],
    ['an OpenAI-compatible upstream, url', { model: 'dall-e-3', prompt: 'a paper crane' }, 'url'],
    ['DashScope, url', { model: 'x-image-2.0', prompt: 'a paper crane', n: 2, size: '1024x1024' }, 'url'],
    ['DashScope, b64_json', { model: 'x-image-2.0', prompt: 'a paper crane', response_format: 'b64_json' }, 'b64_json'],
  ] as const)('images.generate on %s: ImagesResponse', async (_name, body, filled) => {
    // gpt-image's answer as the document gives it (usage, size, quality, background, output_format), with real image bytes
    if (body.model === 'gpt-image-1') paid.next((_req, res) => sendJson(res, 200, { ...openai.example('ImagesResponse'), data: [{ b64_json: PNG_BASE64 }] }));
    const response = await postJson('/v1/images/generations', body);
    expect(response.status).toBe(200);
    expect(openai.problems('ImagesResponse', response.body)).toEqual([]);
    expect(response.body.data.length).toBeGreaterThan(0);
    for (const image of response.body.data) expect(image[filled]).not.toBe('');
  });

  it.each([
    ['an OpenAI-compatible upstream (b64_json)', { model: 'dall-e-3', prompt: 'add snow' }, 'b64_json'],
    ['DashScope, b64_json (the default of edits)', { model: 'x-image-edit', prompt: 'add snow' }, 'b64_json'],
    ['DashScope, url', { model: 'x-image-edit', prompt: 'add snow', response_format: 'url' }, 'url'],
  ] as const)('images.edit on %s: ImagesResponse', async (_name, fields, filled) => {
    const response = await postEdit(fields);
    expect(response.status).toBe(200);
    expect(openai.problems('ImagesResponse', response.body)).toEqual([]);
    expect(response.body.data).toHaveLength(1);
    expect(response.body.data[0][filled]).not.toBe('');
  });

  it('chat completions: CreateChatCompletionResponse', async () => {
    llm.next((_req, res) => sendJson(res, 200, openai.example('CreateChatCompletionResponse')));
    const response = await postJson('/v1/chat/completions', { model: 'chat-small', messages: [{ role: 'user', content: 'Say hello' }] });
    expect(response.status).toBe(200);
    expect(openai.problems('CreateChatCompletionResponse', response.body)).toEqual([]);
  });

  it('streamed chat completions: every chunk a CreateChatCompletionStreamResponse, then [DONE]', async () => {
    const { status, events } = await streamed(postJson('/v1/chat/completions', { model: 'chat-small', messages: [{ role: 'user', content: 'Say hello' }], stream: true }));
    expect(status).toBe(200);
    expect(events.at(-1)?.data).toBe('[DONE]');
    const chunks = events.slice(0, -1);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(openai.problems('CreateChatCompletionStreamResponse', JSON.parse(chunk.data))).toEqual([]);
  });

  it('responses: Response', async () => {
    llm.next((_req, res) => sendJson(res, 200, RESPONSE_BODY));
    const response = await postJson('/v1/responses', { model: 'chat-small', input: 'Say hello' });
    expect(response.status).toBe(200);
    expect(openai.problems('Response', response.body)).toEqual([]);
  });
});

describe('image stream events', () => {
  /** Each event's data conforms to `schema`, and its SSE name is its `type`. */
  function expectEvents(events: SseEvent[], schema: 'ImageGenStreamEvent' | 'ImageEditStreamEvent', types: string[]): void {
    expect(events.map((event) => event.event)).toEqual(types);
    for (const event of events) {
      const data = JSON.parse(event.data);
      expect(data.type).toBe(event.event);
      expect(openai.problems(schema, data)).toEqual([]);
    }
  }

  it('relayed from an OpenAI-compatible upstream: image_generation.partial_image, then image_generation.completed', async () => {
    const { status, events } = await streamed(postJson('/v1/images/generations', { model: 'gpt-image-1', prompt: 'a paper crane', stream: true, partial_images: 2 }));
    expect(status).toBe(200);
    expectEvents(events, 'ImageGenStreamEvent', ['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
  });

  it('relayed from an OpenAI-compatible upstream: image_edit.partial_image, then image_edit.completed', async () => {
    const { status, events } = await streamed(postEdit({ model: 'gpt-image-1', prompt: 'add snow', stream: 'true', partial_images: '1' }));
    expect(status).toBe(200);
    expectEvents(events, 'ImageEditStreamEvent', ['image_edit.partial_image', 'image_edit.completed']);
  });

  it('written by the gateway for DashScope: one image_generation.completed per image, usage included', async () => {
    const { status, events } = await streamed(postJson('/v1/images/generations', { model: 'x-image-2.0', prompt: 'a lantern', stream: true, n: 2 }));
    expect(status).toBe(200);
    expectEvents(events, 'ImageGenStreamEvent', ['image_generation.completed', 'image_generation.completed']);
  });

  it('written by the gateway for DashScope: image_edit.completed', async () => {
    const { status, events } = await streamed(postEdit({ model: 'x-image-edit', prompt: 'add a hat', stream: 'true' }));
    expect(status).toBe(200);
    expectEvents(events, 'ImageEditStreamEvent', ['image_edit.completed']);
  });

  it("a size outside OpenAI's list is echoed as asked: the event breaks the document's size enum, and nothing else", async () => {
    // docs/routes.md "Streamed images": `size` is `WxH` when known, else the size asked for; DashScope's
    // sizes are not OpenAI's three, and the event says the size the image has rather than a wrong one
    const { events } = await streamed(postJson('/v1/images/generations', { model: 'x-image-2.0', prompt: 'a lantern', stream: true, size: '1664x928' }));
    expect(events).toHaveLength(1);
    const data = JSON.parse(events[0]!.data);
    expect(data.size).toBe('1664x928');
    expect(openai.errors('ImageGenCompletedEvent', data).map(({ instancePath, keyword }) => ({ instancePath, keyword }))).toEqual([{ instancePath: '/size', keyword: 'enum' }]);
  });
});

describe('error bodies', () => {
  it('400, a missing model: param "model"; nothing is sent upstream', async () => {
    const response = await postJson('/v1/images/generations', { prompt: 'a paper crane' });
    expectError(response, 400, 'invalid_request_error', 'model');
    expect(paid.requests).toHaveLength(0);
  });

  it('400, no prompt for an OpenAI-compatible upstream: param "prompt"; nothing is sent upstream', async () => {
    const response = await postJson('/v1/images/generations', { model: 'gpt-image-1', n: 1 });
    expectError(response, 400, 'invalid_request_error', 'prompt');
    expect(paid.requests).toHaveLength(0);
  });

  it('400 from an OpenAI-compatible upstream: its own param is kept', async () => {
    paid.next((_req, res) => sendJson(res, 400, { error: { message: "Invalid value: 'huge'.", type: 'invalid_request_error', param: 'size', code: 'invalid_value' } }));
    const response = await postJson('/v1/images/generations', { model: 'gpt-image-1', prompt: 'a paper crane', size: 'huge' });
    expect(response.status).toBe(400);
    expect(openai.problems('ErrorResponse', response.body)).toEqual([]);
    expect(response.body.error.param).toBe('size');
  });

  it('401, an unknown key; nothing is sent upstream', async () => {
    const response = await request(gw.app).post('/v1/images/generations').set('authorization', 'Bearer sk-nobody').send({ model: 'gpt-image-1', prompt: 'x' });
    expectError(response, 401, 'invalid_api_key', null);
    expect(paid.requests).toHaveLength(0);
  });

  it('404, a model the resolver does not know, and a path the gateway does not serve', async () => {
    expectError(await postJson('/v1/images/generations', { model: 'no-such-model', prompt: 'x' }), 404, 'model_not_found', 'model');
    expectError(await request(gw.app).get('/v1/no-such-route').set(AUTH), 404, 'not_found', null);
    expect(paid.requests).toHaveLength(0);
  });

  it('429 when the upstream throttles, then 503 upstream_unavailable while it rests; the second call is not sent', async () => {
    const routed = gw.variant({ routing: { breaker: { failures: 1, minCallers: 1 } } });
    paid.next((_req, res) => sendJson(res, 429, { error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, { 'retry-after': '30' }));
    const body = { model: 'gpt-image-1', prompt: 'a paper crane' };
    expectError(await request(routed.app).post('/v1/images/generations').set(AUTH).send(body), 429, 'rate_limit_exceeded', null);
    expectError(await request(routed.app).post('/v1/images/generations').set(AUTH).send(body), 503, 'upstream_unavailable', null);
    expect(paid.apiRequests()).toHaveLength(1);
  });

  it('an image stream cut by the upstream: the error event carries an error object', async () => {
    paid.next((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const partial = { type: 'image_generation.partial_image', b64_json: TINY_PNG.toString('base64'), partial_image_index: 0 };
      res.write(`event: ${partial.type}\ndata: ${JSON.stringify(partial)}\n\n`);
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const { events } = await streamed(postJson('/v1/images/generations', { model: 'gpt-image-1', prompt: 'x', stream: true, partial_images: 1 }));
    expect(events.at(-1)?.event).toBe('error');
    const data = JSON.parse(events.at(-1)!.data);
    expect(openai.problems('ErrorResponse', data)).toEqual([]);
  });

  it('a chat stream cut by the upstream: the last chunk is an error object', async () => {
    llm.next((_req, res) => writeSlowly(llm, res, chatChunks('m', ['a', 'b', 'c']), { dieAfter: 2 }));
    const { events } = await streamed(postJson('/v1/chat/completions', { model: 'chat-small', messages: [{ role: 'user', content: 'hi' }], stream: true }));
    expect(openai.problems('ErrorResponse', JSON.parse(events.at(-1)!.data))).toEqual([]);
  });

  it('a Responses stream cut by the upstream: the error event is a ResponseErrorEvent', async () => {
    llm.next((_req, res) => writeSlowly(llm, res, responseEvents('m', ['a', 'b']), { dieAfter: 2 }));
    const { events } = await streamed(postJson('/v1/responses', { model: 'chat-small', input: 'hi', stream: true }));
    expect(events.at(-1)?.event).toBe('error');
    expect(openai.problems('ResponseErrorEvent', JSON.parse(events.at(-1)!.data))).toEqual([]);
  });
});

describe('request bodies an OpenAI-compatible upstream receives', () => {
  it.each([
    ['plain', { model: 'gpt-image-1', prompt: 'a paper crane' }],
    ['with the settings the SDKs send', { model: 'gpt-image-1', prompt: 'a paper crane', n: 2, size: '1024x1024', quality: 'high', background: 'opaque', output_format: 'png', user: 'u-1' }],
    ['streamed', { model: 'gpt-image-1', prompt: 'a paper crane', stream: true, partial_images: 1 }],
  ])('images.generate, %s: CreateImageRequest', async (_name, body) => {
    const response = await postJson('/v1/images/generations', body);
    expect(response.status).toBe(200);
    const sent = paid.apiRequests().filter((item) => item.path === OPENAI_IMAGES);
    expect(sent).toHaveLength(1);
    expect(openai.problems('CreateImageRequest', sent[0]!.json)).toEqual([]);
  });

  it.each([
    ['one image', { model: 'gpt-image-1', prompt: 'add snow' }, 1],
    ['two images, with settings', { model: 'gpt-image-1', prompt: 'add snow', n: '2', size: '1024x1024', quality: 'low' }, 2],
    ['streamed', { model: 'gpt-image-1', prompt: 'add snow', stream: 'true', partial_images: '1' }, 1],
  ])('images.edit, %s: the form is a CreateImageEditRequest', async (_name, fields, files) => {
    const response = await postEdit(fields, files);
    expect(response.status).toBe(200);
    const sent = paid.apiRequests().filter((item) => item.path === OPENAI_EDITS);
    expect(sent).toHaveLength(1);
    const form = await formFields(sent[0]!.body, sent[0]!.headers['content-type']!);
    expect(openai.formProblems('CreateImageEditRequest', form)).toEqual([]);
    // one file is the field `image`, several the array `image` (sent as `image[]`): both forms the document allows
    if (files === 1) expect(typeof form.image).toBe('string');
    else expect(form.image).toHaveLength(files);
  });

  it('chat completions, plain and streamed: CreateChatCompletionRequest', async () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello' },
    ];
    expect((await postJson('/v1/chat/completions', { model: 'chat-small', messages, temperature: 0.2 })).status).toBe(200);
    expect((await streamed(postJson('/v1/chat/completions', { model: 'chat-small', messages, stream: true }))).status).toBe(200);
    const sent = llm.apiRequests();
    expect(sent).toHaveLength(2);
    for (const item of sent) expect(openai.problems('CreateChatCompletionRequest', item.json)).toEqual([]);
  });

  it('responses: CreateResponse', async () => {
    expect((await postJson('/v1/responses', { model: 'chat-small', input: 'Say hello', instructions: 'Be brief.' })).status).toBe(200);
    const sent = llm.apiRequests();
    expect(sent).toHaveLength(1);
    expect(openai.problems('CreateResponse', sent[0]!.json)).toEqual([]);
  });
});
