// POST /v1/images/generations end to end: a host Express app with the router mounted, driven by
// supertest, in front of a fake DashScope (upstreams §1) and a fake OpenAI-compatible upstream.
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import type { Upstream } from '../../lib/index.js';
import { DASHSCOPE_PATH, dashscopeError, dashscopeSuccess, type FakeDashscope, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { openaiError, startFakeOpenAI } from '../helpers/fake-openai.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A, createTestGateway } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { UPSTREAM_KEY, imageUpstream } from '../helpers/image-model-map.js';
import { PUBLIC_IMAGE_URL, TINY_PNG, TINY_PNG_DATA_URL } from '../helpers/images.js';
import { rawRequest } from '../helpers/raw-client.js';

let resolverCalls = 0;
const gateway = await gatewayWith({
  fakes: { dashscope: startFakeDashscope, openai: startFakeOpenAI },
  resolve: ({ model }, { dashscope, openai }): Upstream | null => {
    resolverCalls += 1;
    if (model === 'qwen-direct') return { provider: 'dashscope', baseURL: dashscope.origin, apiKey: UPSTREAM_KEY };
    return imageUpstream(model, { dashscope, openai });
  },
  resetEach: true,
});
const { dashscope, openai } = gateway.fakes;

function textMessage(text: string, images: string[] = []) {
  return { messages: [{ role: 'user', content: [...images.map((image) => ({ image })), { text }] }] };
}

function post(body: unknown, key = KEY_A) {
  return request(gateway.app)
    .post('/v1/images/generations')
    .set('Authorization', `Bearer ${key}`)
    .send(body as object);
}

afterEach(() => {
  resolverCalls = 0;
});

describe('text-to-image', () => {
  it('translates to DashScope and answers the spec §2.4 body', async () => {
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([dashscope.resultUrl('a.png')], 'req-t2i-1')));
    const before = Math.floor(Date.now() / 1000);
    const res = await post({
      model: 'x-image-2.0',
      prompt: 'placeholder',
      input: textMessage('A winter street in Beijing'),
      parameters: { size: '1664*928', n: 1, watermark: false, prompt_extend: true, negative_prompt: 'blurry', seed: 233 },
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      created: expect.any(Number),
      data: [{ url: dashscope.resultUrl('a.png'), b64_json: '', revised_prompt: '' }],
      extra: { request_id: 'req-t2i-1' },
    });
    expect(res.body.created).toBeGreaterThanOrEqual(before);
    expect(res.body.created).toBeLessThanOrEqual(before + 5);

    const [sent] = dashscope.apiRequests();
    expect(sent?.method).toBe('POST');
    expect(sent?.path).toBe(DASHSCOPE_PATH);
    expect(sent?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(sent?.headers['content-type']).toBe('application/json');
    expect(sent?.headers['x-dashscope-async']).toBeUndefined();
    expect(sent?.json).toEqual({
      model: 'qwen-image-2.0',
      input: { messages: [{ role: 'user', content: [{ text: 'A winter street in Beijing' }] }] },
      parameters: { size: '1664*928', n: 1, watermark: false, prompt_extend: true, negative_prompt: 'blurry', seed: 233 },
    });
  });

  it('flattens every image of every choice into data[], keeping text as revised_prompt', async () => {
    dashscope.next((_req, res) =>
      sendJson(res, 200, {
        output: {
          choices: [
            { finish_reason: 'stop', message: { role: 'assistant', content: [{ image: 'https://r.example/1.png' }, { image: 'https://r.example/2.png' }] } },
            { finish_reason: 'stop', message: { role: 'assistant', content: [{ text: 'a rewritten prompt' }, { image: 'https://r.example/3.png' }] } },
          ],
        },
        request_id: 'req-multi',
      }),
    );
    const res = await post({ model: 'x-image-2.0', input: textMessage('three cats'), parameters: { n: 3 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      created: expect.any(Number),
      data: [
        { url: 'https://r.example/1.png', b64_json: '', revised_prompt: '' },
        { url: 'https://r.example/2.png', b64_json: '', revised_prompt: '' },
        { url: 'https://r.example/3.png', b64_json: '', revised_prompt: 'a rewritten prompt' },
      ],
      extra: { request_id: 'req-multi' },
    });
  });

  it('downloads and encodes each image for response_format b64_json', async () => {
    const res = await post({ model: 'x-image-2.0', input: textMessage('a red square'), parameters: { n: 2 }, response_format: 'b64_json' });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    for (const item of res.body.data as Array<{ url: string; b64_json: string }>) {
      expect(item.b64_json).toBe(TINY_PNG.toString('base64'));
      expect(item.url).toMatch(/\/results\/image-\d\.png/);
    }
    // the gateway-only field never goes upstream
    expect(dashscope.apiRequests()[0]?.json).toEqual({
      model: 'qwen-image-2.0',
      input: { messages: [{ role: 'user', content: [{ text: 'a red square' }] }] },
      parameters: { n: 2 },
    });
    expect(dashscope.requests.filter((r) => r.path.startsWith('/results/'))).toHaveLength(2);
  });

  it('reads an OpenAI-client body (top-level prompt, size, n) as text-to-image', async () => {
    const res = await post({ model: 'x-image-plus', prompt: 'a lighthouse', size: '1328x1328', n: 1, quality: 'hd', user: 'u-1' });
    expect(res.status).toBe(200);
    expect(dashscope.apiRequests()[0]?.json).toEqual({
      model: 'qwen-image-plus',
      input: { messages: [{ role: 'user', content: [{ text: 'a lighthouse' }] }] },
      parameters: { size: '1328*1328', n: 1 },
    });
  });

  it('lets parameters win over the top-level compatibility fields and passes unknown parameters through', async () => {
    const res = await post({ model: 'x-image-2.0', input: textMessage('x'), size: '512x512', n: 2, parameters: { size: '1024*1024', n: 1, vendor_flag: 'on' } });
    expect(res.status).toBe(200);
    expect((dashscope.apiRequests()[0]?.json as { parameters: unknown }).parameters).toEqual({ size: '1024*1024', n: 1, vendor_flag: 'on' });
  });

  it('adds /api/v1 to a bare DashScope origin and sends the caller model name when the resolver gives none', async () => {
    const res = await post({ model: 'qwen-direct', input: textMessage('a boat') });
    expect(res.status).toBe(200);
    expect(dashscope.apiRequests()[0]?.path).toBe(DASHSCOPE_PATH);
    expect((dashscope.apiRequests()[0]?.json as { model: string }).model).toBe('qwen-direct');
  });
});

describe('image editing on the same route', () => {
  it('single-image edit sends the image item then the text item, in order', async () => {
    const res = await post({ model: 'x-image-edit', input: textMessage('make it night', [PUBLIC_IMAGE_URL]), parameters: { watermark: false } });
    expect(res.status).toBe(200);
    expect(dashscope.apiRequests()[0]?.json).toEqual({
      model: 'qwen-image-edit-plus',
      input: { messages: [{ role: 'user', content: [{ image: PUBLIC_IMAGE_URL }, { text: 'make it night' }] }] },
      parameters: { watermark: false },
    });
  });

  it('multi-image edit accepts up to three URL or Data URL images', async () => {
    const images = [PUBLIC_IMAGE_URL, TINY_PNG_DATA_URL, 'http://cdn.example.org/bg.jpg'];
    const res = await post({ model: 'x-image-edit', input: textMessage('the girl in image 1 wears the dress in image 2', images), parameters: { size: '1024*1536' } });
    expect(res.status).toBe(200);
    const sent = dashscope.apiRequests()[0]?.json as { input: { messages: Array<{ content: unknown[] }> } };
    expect(sent.input.messages[0]?.content).toEqual([...images.map((image) => ({ image })), { text: 'the girl in image 1 wears the dress in image 2' }]);
  });

  it('x-image-2.0 edits too', async () => {
    const res = await post({ model: 'x-image-2.0', input: textMessage('add a hat', [PUBLIC_IMAGE_URL]) });
    expect(res.status).toBe(200);
  });
});

const bad = (message: string, param?: string) => ({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param: param ?? null } });

describe('validation: 400 with the error object, and neither resolver nor upstream is called', () => {
  const cases: Array<[string, unknown, number, unknown]> = [
    ['missing model', { input: textMessage('x') }, 400, bad('model is required', 'model')],
    ['model not a string', { model: 7, input: textMessage('x') }, 400, bad('model is required', 'model')],
    ['empty model', { model: '', input: textMessage('x') }, 400, bad('model is required', 'model')],
    [
      'no input and no prompt',
      { model: 'x-image-2.0' },
      400,
      bad('input.messages is required: send input.messages[0].content[] with one { "text": ... } item (and up to 3 { "image": ... } items), or a top-level prompt for text-to-image', 'input.messages'),
    ],
    [
      'two messages',
      { model: 'x-image-2.0', input: { messages: [textMessage('a').messages[0], textMessage('b').messages[0]] } },
      400,
      bad('input.messages must hold exactly one message ({ role: "user", content: [...] })', 'input.messages'),
    ],
    ['assistant role', { model: 'x-image-2.0', input: { messages: [{ role: 'assistant', content: [{ text: 'x' }] }] } }, 400, bad("input.messages[0].role must be 'user'", 'input.messages[0].role')],
    [
      'item with text and image',
      { model: 'x-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'x', image: PUBLIC_IMAGE_URL }] }] } },
      400,
      bad("input.messages[0].content[0] must have exactly one of 'text' (the prompt) or 'image' (a URL or Data URL)", 'input.messages[0].content[0]'),
    ],
    [
      'legacy images field',
      { model: 'x-image-2.0', input: { messages: [{ role: 'user', content: [{ images: [PUBLIC_IMAGE_URL] }, { text: 'x' }] }] } },
      400,
      bad(
        "input.messages[0].content[0] has an unknown field 'images' (the legacy 'images' field is not supported); it must have exactly one of 'text' (the prompt) or 'image' (a URL or Data URL)",
        'input.messages[0].content[0]',
      ),
    ],
    [
      'empty image field',
      { model: 'x-image-2.0', input: textMessage('x', ['']) },
      400,
      bad("input.messages[0].content[0].image must be a non-empty public http(s) URL or a 'data:image/...;base64,' URL", 'input.messages[0].content[0].image'),
    ],
    [
      'two text items',
      { model: 'x-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'a' }, { text: 'b' }] }] } },
      400,
      bad("input.messages[0].content must hold exactly one 'text' item (the prompt), found 2", 'input.messages[0].content'),
    ],
    ['empty text', { model: 'x-image-2.0', input: textMessage('   ') }, 400, bad('The prompt is empty: the text item of input.messages[0].content must not be empty', 'input.messages[0].content')],
    [
      'image on a text-to-image model',
      { model: 'x-image-max', input: textMessage('x', [PUBLIC_IMAGE_URL]) },
      400,
      bad("Model 'x-image-max' is text-to-image only: send one text item and no image field at all (got 1 image)", 'input.messages[0].content'),
    ],
    [
      'edit model without an image',
      { model: 'x-image-edit', input: textMessage('x') },
      400,
      bad("Model 'x-image-edit' edits images: send 1 to 3 image items and one text item (got 0 images)", 'input.messages[0].content'),
    ],
    [
      'four images',
      { model: 'x-image-edit', input: textMessage('x', [PUBLIC_IMAGE_URL, PUBLIC_IMAGE_URL, PUBLIC_IMAGE_URL, PUBLIC_IMAGE_URL]) },
      400,
      bad("Model 'x-image-edit' edits images: send 1 to 3 image items and one text item (got 4 images)", 'input.messages[0].content'),
    ],
    [
      'ftp image',
      { model: 'x-image-edit', input: textMessage('x', ['ftp://example.com/a.png']) },
      400,
      bad("input.messages[0].content[0].image must be a public http(s) URL or a 'data:image/...;base64,' URL, not 'ftp:'", 'input.messages[0].content[0].image'),
    ],
    [
      'not a URL',
      { model: 'x-image-edit', input: textMessage('x', ['just words']) },
      400,
      bad("input.messages[0].content[0].image must be a public http(s) URL or a 'data:image/...;base64,' URL", 'input.messages[0].content[0].image'),
    ],
    [
      'loopback image URL',
      { model: 'x-image-edit', input: textMessage('x', ['http://127.0.0.1:8080/a.png']) },
      400,
      bad(
        'input.messages[0].content[0].image names a loopback, private or link-local host; the URL must be publicly reachable (or send the image as a Data URL)',
        'input.messages[0].content[0].image',
      ),
    ],
    [
      'metadata image URL',
      { model: 'x-image-edit', input: textMessage('x', ['http://169.254.169.254/latest/meta-data']) },
      400,
      bad(
        'input.messages[0].content[0].image names a loopback, private or link-local host; the URL must be publicly reachable (or send the image as a Data URL)',
        'input.messages[0].content[0].image',
      ),
    ],
    [
      'private image URL',
      { model: 'x-image-edit', input: textMessage('x', ['https://192.168.1.20/a.png']) },
      400,
      bad(
        'input.messages[0].content[0].image names a loopback, private or link-local host; the URL must be publicly reachable (or send the image as a Data URL)',
        'input.messages[0].content[0].image',
      ),
    ],
    [
      'text Data URL',
      { model: 'x-image-edit', input: textMessage('x', ['data:text/plain;base64,aGVsbG8=']) },
      400,
      bad("input.messages[0].content[0].image must be an image Data URL: 'data:image/<type>;base64,<data>'", 'input.messages[0].content[0].image'),
    ],
    [
      'broken base64',
      { model: 'x-image-edit', input: textMessage('x', ['data:image/png;base64,@@@@']) },
      400,
      bad('input.messages[0].content[0].image is not valid base64 after the Data URL header', 'input.messages[0].content[0].image'),
    ],
    [
      'size with x in parameters',
      { model: 'x-image-2.0', input: textMessage('x'), parameters: { size: '1024x1024' } },
      400,
      bad("parameters.size must use '*' between width and height: '1024*1024', not '1024x1024'", 'parameters.size'),
    ],
    [
      'size nonsense',
      { model: 'x-image-2.0', input: textMessage('x'), parameters: { size: 'big' } },
      400,
      bad("parameters.size must be '<width>*<height>', e.g. '1024*1024', or a named size such as '2K'", 'parameters.size'),
    ],
    ['n zero', { model: 'x-image-2.0', input: textMessage('x'), parameters: { n: 0 } }, 400, bad('parameters.n must be >= 1', 'parameters.n')],
    ['n fractional', { model: 'x-image-2.0', input: textMessage('x'), parameters: { n: 1.5 } }, 400, bad('parameters.n must be an integer, got number', 'parameters.n')],
    ['n above the family limit', { model: 'x-image-max', input: textMessage('x'), parameters: { n: 2 } }, 400, bad("parameters.n must be at most 1 for model 'x-image-max', got 2", 'parameters.n')],
    [
      'watermark not boolean',
      { model: 'x-image-2.0', input: textMessage('x'), parameters: { watermark: 'yes' } },
      400,
      bad('parameters.watermark must be a boolean, got string', 'parameters.watermark'),
    ],
    [
      'prompt_extend not boolean',
      { model: 'x-image-2.0', input: textMessage('x'), parameters: { prompt_extend: 1 } },
      400,
      bad('parameters.prompt_extend must be a boolean, got number', 'parameters.prompt_extend'),
    ],
    [
      'negative_prompt not string',
      { model: 'x-image-2.0', input: textMessage('x'), parameters: { negative_prompt: ['a'] } },
      400,
      bad('parameters.negative_prompt must be a string, got an array', 'parameters.negative_prompt'),
    ],
    ['response_format png', { model: 'x-image-2.0', input: textMessage('x'), response_format: 'png' }, 400, bad("response_format must be one of 'url', 'b64_json'", 'response_format')],
    [
      'legacy input.prompt',
      { model: 'x-image-2.0', input: { prompt: 'a cat' } },
      400,
      bad(
        'input.prompt and input.negative_prompt are the legacy structure and are not supported: put the prompt in input.messages[].content[] as { "text": ... } and negative_prompt in parameters',
        'input.prompt',
      ),
    ],
    [
      'legacy input.negative_prompt',
      { model: 'x-image-2.0', input: { messages: textMessage('x').messages, negative_prompt: 'dark' } },
      400,
      bad(
        'input.prompt and input.negative_prompt are the legacy structure and are not supported: put the prompt in input.messages[].content[] as { "text": ... } and negative_prompt in parameters',
        'input.negative_prompt',
      ),
    ],
    ['top-level size nonsense', { model: 'x-image-2.0', prompt: 'x', size: 'huge' }, 400, bad("size must look like '1024x1024', '1024*1024' or a named size such as '2K'", 'size')],
    ['body is an array', [{ model: 'x-image-2.0' }], 400, bad('The request body must be a JSON object')],
  ];

  it.each(cases)('%s', async (_name, body, status, expected) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(res.body).toEqual(expected);
    expect(dashscope.requests).toHaveLength(0);
    expect(resolverCalls).toBe(0);
  });

  it('a Data URL over the size limit is a 413 that names the limit', async () => {
    const small = createTestGateway({ limits: { dataUrlBytes: 100 }, resolveUpstream: () => ({ provider: 'dashscope', baseURL: dashscope.baseURL }) });
    const big = `data:image/png;base64,${Buffer.alloc(300).toString('base64')}`;
    const res = await request(small.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'x-image-edit', input: textMessage('x', [big]) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      error: {
        message: 'input.messages[0].content[0].image is a Data URL of 300 bytes; the limit is 100 bytes. Use a public URL for large images',
        type: 'invalid_request_error',
        code: 'request_too_large',
        param: 'input.messages[0].content[0].image',
      },
    });
    await small.close();
    expect(dashscope.requests).toHaveLength(0);
  });

  it('private image URLs pass when the operator allows them', async () => {
    const open = createTestGateway({ allow: { privateImageUrls: true }, resolveUpstream: () => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k' }) });
    const res = await request(open.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'x-image-edit', input: textMessage('x', ['http://10.0.0.5/a.png']) });
    await open.close();
    expect(res.status).toBe(200);
    expect(dashscope.apiRequests()).toHaveLength(1);
  });
});

describe('body parsing failures answer the error object, never HTML', () => {
  it('malformed JSON is a 400', async () => {
    const res = await request(gateway.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Content-Type', 'application/json').send('{"model": "x-image-2.0",');
    expect(res.status).toBe(400);
    expect(res.body).toEqual(bad('The request body is not valid JSON'));
  });

  it('a non-JSON content type is a 415', async () => {
    const res = await request(gateway.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Content-Type', 'text/plain').send('model=x');
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: { message: "Content-Type must be application/json, got 'text/plain'", type: 'invalid_request_error', code: 'unsupported_media_type', param: null } });
  });

  it('an empty body is a 400', async () => {
    const res = await request(gateway.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(bad('The request body is empty: send a JSON object with Content-Type: application/json'));
  });

  it('a body over the JSON limit is a 413', async () => {
    const small = createTestGateway({ limits: { jsonBodyBytes: 1024 } });
    const res = await request(small.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'x-image-2.0', prompt: 'p'.repeat(5000) });
    await small.close();
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: { message: 'The request body is larger than the 1024 byte limit', type: 'invalid_request_error', code: 'request_too_large', param: null } });
  });

  it('the default limit takes three 10 MB images as Data URLs', async () => {
    const tenMb = `data:image/png;base64,${Buffer.alloc(10 * 1024 * 1024 - 64, 7).toString('base64')}`;
    const res = await post({ model: 'x-image-edit', input: textMessage('merge', [tenMb, tenMb, tenMb]) });
    expect(res.status).toBe(200);
    expect(dashscope.apiRequests()).toHaveLength(1);
  }, 60_000);
});

describe('authentication (spec §5): 401, and nothing else runs', () => {
  const cases: Array<[string, Record<string, string>, string]> = [
    ['no Authorization header', {}, "Missing API key. Send the header 'Authorization: Bearer <API_KEY>'."],
    ['another scheme', { Authorization: `Basic ${KEY_A}` }, "The Authorization header must use the Bearer scheme. Send the header 'Authorization: Bearer <API_KEY>'."],
    ['an empty key', { Authorization: 'Bearer ' }, "The API key is empty. Send the header 'Authorization: Bearer <API_KEY>'."],
    ['an unknown key', { Authorization: 'Bearer sk-not-a-key' }, 'Invalid API key. Check the key, that it is still active, and the header form (Authorization: Bearer <API_KEY>).'],
    ['a known key with a suffix', { Authorization: `Bearer ${KEY_A}x` }, 'Invalid API key. Check the key, that it is still active, and the header form (Authorization: Bearer <API_KEY>).'],
  ];
  it.each(cases)('%s', async (_name, headers, message) => {
    const res = await request(gateway.app)
      .post('/v1/images/generations')
      .set(headers)
      .send({ model: 'x-image-2.0', input: textMessage('x') });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { message, type: 'authentication_error', code: 'invalid_api_key', param: null } });
    expect(res.text).not.toContain(KEY_A);
    expect(dashscope.requests).toHaveLength(0);
    expect(resolverCalls).toBe(0);
  });

  it('a deactivated key (verifier returns null) is a 401', async () => {
    const revoked = createTestGateway({ verifyKey: async () => null, resolveUpstream: () => ({ provider: 'dashscope', baseURL: dashscope.baseURL }) });
    const res = await request(revoked.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'x-image-2.0', input: textMessage('x') });
    await revoked.close();
    expect(res.status).toBe(401);
    expect(dashscope.requests).toHaveLength(0);
  });

  it('a verifier that throws is a 500 without details', async () => {
    const broken = createTestGateway({
      verifyKey: () => {
        throw new Error('db down at 10.0.0.3');
      },
    });
    const res = await request(broken.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'x-image-2.0', input: textMessage('x') });
    await broken.close();
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: { message: 'Internal gateway error.', type: 'server_error', code: 'internal_error', param: null } });
  });
});

describe('models the resolver does not route', () => {
  it('a null resolution is a 404 model_not_found', async () => {
    const res = await post({ model: 'x-image-unknown', prompt: 'x' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: { message: "The model 'x-image-unknown' does not exist or you do not have access to it.", type: 'invalid_request_error', code: 'model_not_found', param: 'model' },
    });
    expect(dashscope.requests).toHaveLength(0);
  });

  it('a model with an OpenAI-compatible upstream is forwarded unchanged but for the model name', async () => {
    const body = { model: 'gpt-image-1', prompt: 'an otter', size: '1024x1024', n: 1, quality: 'high' };
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ created: 1713833628, data: [{ url: 'https://cdn.openai.example/img-1.png', revised_prompt: 'rev: an otter' }] });
    const [sent] = openai.apiRequests();
    expect(sent?.path).toBe('/v1/images/generations');
    expect(sent?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(sent?.json).toEqual({ ...body, model: 'gpt-image-1-upstream' });
    expect(dashscope.requests).toHaveLength(0);
  });

  it('a body for an OpenAI-compatible upstream without a usable prompt is a 400 naming prompt, and nothing is sent', async () => {
    for (const body of [
      { model: 'gpt-image-1' },
      { model: 'gpt-image-1', prompt: 7 },
      { model: 'gpt-image-1', prompt: '' },
      { model: 'gpt-image-1', prompt: '   ' },
      { model: 'gpt-image-1', stream: true },
    ]) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error, JSON.stringify(body)).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request_error', param: 'prompt' });
    }
    // the edit routes refuse it the same way
    const edit = await request(gateway.app)
      .post('/v1/images/edits')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'gpt-image-1', images: [{ image_url: PUBLIC_IMAGE_URL }] });
    expect(edit.status).toBe(400);
    expect(edit.body.error).toMatchObject({ type: 'invalid_request_error', param: 'prompt' });
    expect(openai.apiRequests()).toHaveLength(0);
    expect(gateway.usage.filter((event) => event.images > 0)).toHaveLength(0);
  });

  it('an OpenAI-compatible upstream error is normalized', async () => {
    openai.next((_req, res) => openaiError(res, 400, 'Invalid size', 'invalid_request_error', 'invalid_value', 'oa-req-400'));
    const res = await post({ model: 'gpt-image-1', prompt: 'x' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(bad('The upstream rejected the request: Invalid size (openai code invalid_value, request id oa-req-400)'));
  });
});

describe('upstream failures are normalized (docs/architecture.md status table)', () => {
  const cases: Array<[string, Parameters<FakeDashscope['next']>[0], number, string, string]> = [
    [
      'InvalidParameter',
      (_q, res) => dashscopeError(res, 400, 'InvalidParameter', 'Size not supported', 'r-1'),
      400,
      'invalid_request_error',
      'The upstream rejected the request: Size not supported (dashscope code InvalidParameter, request id r-1)',
    ],
    [
      'DataInspectionFailed',
      (_q, res) => dashscopeError(res, 400, 'DataInspectionFailed', 'Input data may contain inappropriate content.', 'r-2'),
      400,
      'content_policy_violation',
      'The upstream rejected the content as inappropriate: Input data may contain inappropriate content. (dashscope code DataInspectionFailed, request id r-2)',
    ],
    [
      'Throttling.RateQuota',
      (_q, res) => dashscopeError(res, 429, 'Throttling.RateQuota', 'Requests rate limit exceeded', 'r-3'),
      429,
      'rate_limit_exceeded',
      'The upstream is rate limiting requests: Requests rate limit exceeded (dashscope code Throttling.RateQuota, request id r-3). Retry later.',
    ],
    [
      'InvalidApiKey',
      (_q, res) => dashscopeError(res, 401, 'InvalidApiKey', 'Invalid API-key provided: sk-upst***000', 'r-4'),
      502,
      'upstream_auth_failed',
      "The upstream rejected the gateway's own credentials (an operator configuration problem, not your key) (dashscope code InvalidApiKey, request id r-4).",
    ],
    [
      '403',
      (_q, res) => dashscopeError(res, 403, 'AccessDenied', 'denied', 'r-5'),
      502,
      'upstream_auth_failed',
      "The upstream rejected the gateway's own credentials (an operator configuration problem, not your key) (dashscope code AccessDenied, request id r-5).",
    ],
    ['500', (_q, res) => dashscopeError(res, 500, 'InternalError', 'boom', 'r-6'), 502, 'upstream_error', 'The upstream failed: boom (dashscope code InternalError, request id r-6)'],
    [
      '503 HTML',
      (_q, res) => {
        res.writeHead(503, { 'content-type': 'text/html' });
        res.end('<html>down</html>');
      },
      502,
      'upstream_error',
      'The upstream failed: HTTP 503 (dashscope)',
    ],
    [
      '200 without an image',
      (_q, res) => sendJson(res, 200, { output: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: [] } }] }, request_id: 'r-7' }),
      502,
      'upstream_no_image',
      'The dashscope upstream returned no image (finish_reason stop); check the prompt is in input.messages[].content[] (request id r-7)',
    ],
    [
      '200 with an error code inside',
      (_q, res) => sendJson(res, 200, { code: 'InvalidParameter', message: 'bad', request_id: 'r-8' }),
      400,
      'invalid_request_error',
      'The upstream rejected the request: bad (dashscope code InvalidParameter, request id r-8)',
    ],
    [
      '200 not JSON',
      (_q, res) => {
        res.writeHead(200, { 'content-type': 'text/plain', 'x-request-id': 'r-9' });
        res.end('ok');
      },
      502,
      'upstream_bad_response',
      'The dashscope upstream returned an unusable response: the body is not JSON (request id r-9)',
    ],
  ];
  it.each(cases)('%s', async (_name, responder, status, code, message) => {
    dashscope.next(responder);
    const res = await post({ model: 'x-image-2.0', input: textMessage('x') });
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error: { message, type: expect.any(String), code, param: null } });
    expect(res.text).not.toContain(UPSTREAM_KEY);
  });

  it('an upstream that does not answer in time is a 504', async () => {
    const slow = createTestGateway({ resolveUpstream: () => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', timeoutMs: 200 }) });
    dashscope.next(() => new Promise(() => {}));
    const res = await request(slow.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'x-image-2.0', input: textMessage('x') });
    await slow.close();
    expect(res.status).toBe(504);
    expect(res.body).toEqual({
      error: { message: "The dashscope upstream did not answer within 200 ms. Retry, or raise the upstream's timeoutMs for slow jobs.", type: 'upstream_error', code: 'upstream_timeout', param: null },
    });
  });

  it('an unreachable upstream is a 502', async () => {
    const dead = createTestGateway({ resolveUpstream: () => ({ provider: 'dashscope', baseURL: 'http://127.0.0.1:9/api/v1', apiKey: 'k' }) });
    const res = await request(dead.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'x-image-2.0', input: textMessage('x') });
    await dead.close();
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: { message: 'The dashscope upstream could not be reached (ECONNREFUSED).', type: 'upstream_error', code: 'upstream_unreachable', param: null } });
  });

  it('a result image that cannot be downloaded for b64_json is a 502 that says so', async () => {
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess(['http://127.0.0.1:9/gone.png'], 'r-10')));
    const res = await post({ model: 'x-image-2.0', input: textMessage('x'), response_format: 'b64_json' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('image_download_failed');
    expect(res.body.error.message).toMatch(/could not be downloaded for b64_json/);
  });

  // paid work is not thrown away (docs/tenancy-and-billing.md "Retries"): the call goes on for the retry
  it('goes on with the upstream request when the client disconnects', async () => {
    let upstreamClosed = false;
    let received!: () => void;
    const arrived = new Promise<void>((resolve) => (received = resolve));
    dashscope.next((_req, _res, raw) => {
      raw.socket.once('close', () => (upstreamClosed = true));
      received();
      return new Promise(() => {});
    });
    const client = new AbortController();
    const headers = { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' };
    const sent = rawRequest(gateway.url, { path: '/v1/images/generations', headers, body: JSON.stringify({ model: 'x-image-2.0', input: textMessage('x') }), signal: client.signal });
    // the client gives up: its request rejects, which is the point
    sent.catch(() => undefined);
    await arrived;
    client.abort();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(upstreamClosed).toBe(false);
  });
});

describe('fallback across a list of upstreams', () => {
  it('tries the next upstream after a connection error, a 429 or a 5xx', async () => {
    const list = createTestGateway({
      resolveUpstream: () => [
        { provider: 'dashscope', baseURL: 'http://127.0.0.1:9/api/v1', apiKey: 'k0' },
        { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k1' },
        { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k2' },
      ],
    });
    dashscope.next((_req, res) => dashscopeError(res, 429, 'Throttling', 'slow down'));
    const res = await request(list.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'x-image-2.0', input: textMessage('x') });
    await list.close();
    expect(res.status).toBe(200);
    expect(dashscope.apiRequests().map((r) => r.headers.authorization)).toEqual(['Bearer k1', 'Bearer k2']);
  });

  it('does not retry a 4xx the caller caused', async () => {
    const list = createTestGateway({
      resolveUpstream: () => [
        { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k1' },
        { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k2' },
      ],
    });
    dashscope.next((_req, res) => dashscopeError(res, 400, 'InvalidParameter', 'bad size'));
    const res = await request(list.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'x-image-2.0', input: textMessage('x') });
    await list.close();
    expect(res.status).toBe(400);
    expect(dashscope.apiRequests()).toHaveLength(1);
  });
});
