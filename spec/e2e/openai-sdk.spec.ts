// The official openai npm SDK against the mounted gateway, on every synchronous route it calls:
// images.generate, images.edit (one file, three files as image[]), chat.completions.create and
// responses.create (plain and streamed), and its error classes for bad keys, bad bodies, multipart and
// upstream failures.
import OpenAI, { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { dashscopeError, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';

// a GIF and a JPEG header are enough for the gateway's sniffer; the fake upstream never decodes them
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1');
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]);

const gateway = await gatewayWith({
  fakes: { dashscope: startFakeDashscope, llm: startFakeLlm },
  resolve: ({ model }, { dashscope, llm }) => {
    if (model === 'x-image-edit') return { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-edit-plus' };
    if (model.startsWith('x-image-')) return { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-2.0' };
    if (model === 'chat-small') return { provider: 'openai', baseURL: llm.baseURL, apiKey: 'k', model: 'upstream-chat' };
    return null;
  },
});
const { dashscope, llm } = gateway.fakes;
const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: KEY_A, maxRetries: 0 });

describe('openai SDK: images.generate', () => {
  it('generates with a top-level prompt and size', async () => {
    const result = await client.images.generate({ model: 'x-image-2.0', prompt: 'a paper crane', size: '1024x1024', n: 2 });
    expect(result.data).toHaveLength(2);
    expect(result.data?.[0]?.url).toBe(dashscope.resultUrl('image-1.png?Expires=1781778573&Signature=abc'));
    expect(typeof result.created).toBe('number');
    expect(dashscope.apiRequests().at(-1)?.json).toEqual({
      model: 'qwen-image-2.0',
      input: { messages: [{ role: 'user', content: [{ text: 'a paper crane' }] }] },
      parameters: { size: '1024*1024', n: 2 },
    });
  });

  it('returns b64_json that decodes to the image', async () => {
    const result = await client.images.generate({ model: 'x-image-2.0', prompt: 'x', response_format: 'b64_json' });
    expect(Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64')).toEqual(TINY_PNG);
  });

  it('passes the multimodal body through the SDK', async () => {
    const result = await client.images.generate({
      model: 'x-image-2.0',
      prompt: 'placeholder',
      // the spec's multimodal fields are not in the SDK's types; the SDK sends extra body fields as given
      ...({ input: { messages: [{ role: 'user', content: [{ image: 'https://images.example.com/a.png' }, { text: 'add snow' }] }] } } as object),
    });
    expect(result.data).toHaveLength(1);
    expect((dashscope.apiRequests().at(-1)?.json as { input: unknown }).input).toEqual({
      messages: [{ role: 'user', content: [{ image: 'https://images.example.com/a.png' }, { text: 'add snow' }] }],
    });
  });

  it('raises AuthenticationError for a bad key', async () => {
    const bad = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-wrong', maxRetries: 0 });
    const error = await bad.images.generate({ model: 'x-image-2.0', prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((error as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
  });

  it('raises BadRequestError "model is required" without a model', async () => {
    const error = await client.images.generate({ prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const apiError = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(apiError.error).toEqual({ message: 'model is required', type: 'invalid_request_error', code: 'invalid_request_error', param: 'model' });
  });

  it('raises RateLimitError when the upstream throttles', async () => {
    dashscope.next((_req, res) => dashscopeError(res, 429, 'Throttling.RateQuota', 'Requests rate limit exceeded'));
    const error = await client.images.generate({ model: 'x-image-2.0', prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('rate_limit_exceeded');
  });

  it('raises NotFoundError for a model the resolver does not route', async () => {
    const error = await client.images.generate({ model: 'dall-e-3', prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

const contentOf = (index = -1) => (dashscope.apiRequests().at(index)?.json as { input: { messages: Array<{ content: Array<Record<string, string>> }> } }).input.messages[0]!.content;

describe('images.edit', () => {
  it('one file becomes one Data URL image item and the prompt the text item', async () => {
    const result = await client.images.edit({ model: 'x-image-edit', image: await toFile(TINY_PNG, 'cat.png', { type: 'image/png' }), prompt: 'add a hat', size: '1024x1024' });
    expect(result.data).toHaveLength(1);
    expect(contentOf()).toEqual([{ image: `data:image/png;base64,${TINY_PNG.toString('base64')}` }, { text: 'add a hat' }]);
    expect((dashscope.apiRequests().at(-1)?.json as { parameters: unknown }).parameters).toEqual({ size: '1024*1024' });
  });

  it('three files sent as image[] keep their order, typed from their bytes', async () => {
    const image = [await toFile(TINY_PNG, 'a.png', { type: 'image/png' }), await toFile(JPEG, 'b.png', { type: 'image/png' }), await toFile(GIF, 'c.bin', { type: 'application/octet-stream' })];
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
    const bad = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-nope', maxRetries: 0 });
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
