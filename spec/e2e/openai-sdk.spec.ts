// The official openai npm SDK against the mounted gateway: images.generate and its error classes.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashscopeError, type FakeDashscope, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { KEY_A, type TestGateway, createTestGateway, listen } from '../helpers/gateway-app.js';
import { TINY_PNG } from '../helpers/images.js';

let dashscope: FakeDashscope;
let gateway: TestGateway;
let server: { url: string; close(): Promise<void> };
let client: OpenAI;

beforeAll(async () => {
  dashscope = await startFakeDashscope();
  gateway = createTestGateway({
    resolveUpstream: ({ model }) => (model.startsWith('x-image-') ? { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-2.0' } : null),
  });
  server = await listen(gateway.app);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY_A, maxRetries: 0 });
});

afterAll(async () => {
  await server.close();
  await gateway.close();
  await dashscope.close();
});

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
    const bad = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-wrong', maxRetries: 0 });
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
