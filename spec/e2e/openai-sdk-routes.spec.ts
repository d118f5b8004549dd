// The official openai npm SDK on every synchronous route it calls: images.edit (one file, three files
// as image[]), chat.completions.create and responses.create (plain and streamed), and its error
// classes for multipart and upstream failures.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDashscope, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.js';
import { KEY_A, type TestGateway, createTestGateway, listen } from '../helpers/gateway-app.js';
import { TINY_PNG } from '../helpers/images.js';

let dashscope: FakeDashscope;
let llm: FakeLlm;
let gateway: TestGateway;
let server: { url: string; close(): Promise<void> };
let client: OpenAI;

// a GIF and a JPEG header are enough for the gateway's sniffer; the fake upstream never decodes them
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1');
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]);

beforeAll(async () => {
  dashscope = await startFakeDashscope();
  llm = await startFakeLlm();
  gateway = createTestGateway({
    resolveUpstream: ({ model }) => {
      if (model.startsWith('x-image-')) return { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-edit-plus' };
      if (model === 'chat-small') return { provider: 'openai', baseURL: llm.baseURL, apiKey: 'k', model: 'upstream-chat' };
      return null;
    },
  });
  server = await listen(gateway.app);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY_A, maxRetries: 0 });
});

afterAll(async () => {
  await server.close();
  await gateway.close();
  await dashscope.close();
  await llm.close();
});

const contentOf = (index = -1) =>
  (dashscope.apiRequests().at(index)?.json as { input: { messages: Array<{ content: Array<Record<string, string>> }> } }).input.messages[0]!.content;

describe('images.edit', () => {
  it('one file becomes one Data URL image item and the prompt the text item', async () => {
    const result = await client.images.edit({ model: 'x-image-edit', image: await toFile(TINY_PNG, 'cat.png', { type: 'image/png' }), prompt: 'add a hat', size: '1024x1024' });
    expect(result.data).toHaveLength(1);
    expect(contentOf()).toEqual([{ image: `data:image/png;base64,${TINY_PNG.toString('base64')}` }, { text: 'add a hat' }]);
    expect((dashscope.apiRequests().at(-1)?.json as { parameters: unknown }).parameters).toEqual({ size: '1024*1024' });
  });

  it('three files sent as image[] keep their order, typed from their bytes', async () => {
    const image = [
      await toFile(TINY_PNG, 'a.png', { type: 'image/png' }),
      await toFile(JPEG, 'b.png', { type: 'image/png' }),
      await toFile(GIF, 'c.bin', { type: 'application/octet-stream' }),
    ];
    const result = await client.images.edit({ model: 'x-image-edit', image, prompt: 'merge them', response_format: 'b64_json' });
    expect(Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64')).toEqual(TINY_PNG);
    expect(contentOf()).toEqual([
      { image: `data:image/png;base64,${TINY_PNG.toString('base64')}` },
      { image: `data:image/jpeg;base64,${JPEG.toString('base64')}` },
      { image: `data:image/gif;base64,${GIF.toString('base64')}` },
      { text: 'merge them' },
    ]);
  });

  it('raises BadRequestError "model is required" from a form without model', async () => {
    const before = dashscope.apiRequests().length;
    const error = await client.images.edit({ image: await toFile(TINY_PNG, 'a.png'), prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({ message: 'model is required', type: 'invalid_request_error', code: 'invalid_request_error', param: 'model' });
    expect(dashscope.apiRequests()).toHaveLength(before);
  });
});

describe('chat.completions.create', () => {
  it('plain', async () => {
    const completion = await client.chat.completions.create({ model: 'chat-small', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]?.message.content).toBe('Hello there');
    expect(completion.model).toBe('upstream-chat');
  });

  it('streamed: chunks arrive in order and the stream ends', async () => {
    const stream = await client.chat.completions.create({ model: 'chat-small', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const deltas: string[] = [];
    const finishes: Array<string | null | undefined> = [];
    for await (const chunk of stream) {
      deltas.push(chunk.choices[0]?.delta.content ?? '');
      finishes.push(chunk.choices[0]?.finish_reason);
    }
    expect(deltas).toEqual(['', 'Hel', 'lo', ' there', '']);
    expect(finishes.at(-1)).toBe('stop');
  });

  it('raises APIError when the upstream dies mid-stream', async () => {
    llm.next((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}\n\n');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const stream = await client.chat.completions.create({ model: 'chat-small', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const error = await (async () => {
      for await (const _chunk of stream) {
        // drain
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain('could not be reached');
  });

  it('raises RateLimitError for an upstream 429', async () => {
    llm.next((_req, res) => sendJson(res, 429, { error: { message: 'slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' } }));
    const error = await client.chat.completions.create({ model: 'chat-small', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('raises AuthenticationError for a bad key', async () => {
    const bad = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-nope', maxRetries: 0 });
    const error = await bad.chat.completions.create({ model: 'chat-small', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe('responses.create', () => {
  it('plain', async () => {
    const response = await client.responses.create({ model: 'chat-small', input: 'hi' });
    expect(response.output_text).toBe('Hello');
  });

  it('streamed: named events in order, ending on response.completed', async () => {
    const stream = await client.responses.create({ model: 'chat-small', input: 'hi', stream: true });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(types).toEqual(['response.created', 'response.output_item.added', 'response.output_text.delta', 'response.output_text.delta', 'response.output_text.done', 'response.completed']);
    expect(text).toBe('Hello');
  });

  it('raises BadRequestError "model is required"', async () => {
    const error = await client.responses.create({ input: 'hi' } as Parameters<typeof client.responses.create>[0]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain('model is required');
  });
});
