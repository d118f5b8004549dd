// POST /v1/images/edits with a JSON body (docs/routes.md "Edits as JSON"): OpenAI's JSON edit shape,
// `images: [{ image_url }]` and `mask: { image_url }`, with Data URLs and public URLs, through a host
// Express app in front of a fake DashScope and a fake OpenAI-compatible upstream; the images' own
// host is a real HTTP server on 127.0.0.1, reached only when the gateway allows private image URLs.
import OpenAI from 'openai';
import request, { type Test } from 'supertest';
import { describe, expect, it } from 'vitest';
import type { Upstream } from '../../lib/index.js';
import { dashscopeSuccess, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { type RecordedRequest, sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { imageUpstream } from '../helpers/image-model-map.js';
import { TINY_GIF, TINY_JPEG, TINY_PNG } from '../helpers/images.js';

const dataUrl = (bytes: Buffer, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`;
/** An image over the 1 KiB upload limit of the small gateway: a PNG header, then filler. */
const BIG_PNG = Buffer.concat([TINY_PNG, Buffer.alloc(4096, 0x41)]);

// the images' host: a real server the gateway fetches from
const imageHost = await startFakeUpstream((recorded, res) => {
  const files: Record<string, { body: Buffer; type: string }> = {
    '/subject.png': { body: TINY_PNG, type: 'image/png' },
    '/dress.jpg': { body: TINY_JPEG, type: 'image/jpeg' },
    '/big.png': { body: BIG_PNG, type: 'image/png' },
    '/page.html': { body: Buffer.from('<html>not an image</html>'), type: 'image/png' },
  };
  const file = files[recorded.path];
  if (!file) {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
    return;
  }
  res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length });
  res.end(file.body);
});

const gateway = await gatewayWith({
  fakes: { dashscope: startFakeDashscope, openai: startFakeOpenAI, images: async () => imageHost },
  resolve: ({ model }, fakes): Upstream | null => imageUpstream(model, fakes),
  resetEach: true,
});
const { dashscope, openai } = gateway.fakes;
// the operator's opt-in the image host on 127.0.0.1 needs (docs/configuration.md `allow.privateImageUrls`)
const local = gateway.variant({ allow: { privateImageUrls: true } });
const smallLocal = gateway.variant({ allow: { privateImageUrls: true }, limits: { uploadFileBytes: 1024 } });

function jsonEdit(body: Record<string, unknown>, app = gateway.app): Test {
  return request(app).post('/v1/images/edits').set('Authorization', `Bearer ${KEY_A}`).send(body);
}

function formEdit(app = gateway.app): Test {
  return request(app).post('/v1/images/edits').set('Authorization', `Bearer ${KEY_A}`);
}

function expectNothingUpstream(): void {
  expect(dashscope.requests).toHaveLength(0);
  expect(openai.requests).toHaveLength(0);
}

/** A multipart request as the fields and files it carries, in order (boundaries differ between two requests). */
async function partsOf(recorded: RecordedRequest): Promise<Array<[string, string | { name: string; type: string; bytes: string }]>> {
  const form = await new Response(new Uint8Array(recorded.body), { headers: { 'content-type': String(recorded.headers['content-type']) } }).formData();
  const parts: Array<[string, string | { name: string; type: string; bytes: string }]> = [];
  for (const [name, value] of form.entries()) {
    parts.push([name, typeof value === 'string' ? value : { name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()).toString('base64') }]);
  }
  return parts;
}

/** A usage event without what differs between any two requests (timings, ids). */
function charged(event: object | undefined): string {
  return JSON.stringify(event, (key, value: unknown) => (['latencyMs', 'durationMs', 'requestId', 'upstreamRequestId', 'id'].includes(key) ? undefined : value));
}

const bad = (message: string, param: string) => ({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param } });

describe('a JSON edit makes the same upstream request as the multipart edit of the same images', () => {
  it('image-family model: Data URLs become the same DashScope request, answered and metered alike', async () => {
    const fields = { model: 'x-image-edit', prompt: 'the girl in image 1 wears the dress in image 2', size: '1024x1024', watermark: false, n: 1 };
    const json = await jsonEdit({ ...fields, images: [{ image_url: dataUrl(TINY_PNG) }, { image_url: dataUrl(TINY_JPEG, 'image/jpeg') }] });
    const form = await formEdit()
      .field('model', fields.model)
      .field('prompt', fields.prompt)
      .field('size', fields.size)
      .field('watermark', 'false')
      .field('n', '1')
      .attach('image[]', TINY_PNG, { filename: 'a.png', contentType: 'image/png' })
      .attach('image[]', TINY_JPEG, { filename: 'b.jpg', contentType: 'image/jpeg' });

    expect(json.status).toBe(200);
    expect(form.status).toBe(200);
    // no response_format: the edit is answered with the bytes (docs/routes.md "POST /v1/images/edits")
    expect(json.body).toEqual({
      created: expect.any(Number),
      data: [{ url: expect.any(String), b64_json: expect.stringMatching(/^iVBORw0KGgo/), revised_prompt: '' }],
      extra: { request_id: expect.any(String) },
    });
    const [fromJson, fromForm] = dashscope.apiRequests();
    expect(fromJson?.json).toEqual({
      model: 'qwen-image-edit-plus',
      input: { messages: [{ role: 'user', content: [{ image: dataUrl(TINY_PNG) }, { image: dataUrl(TINY_JPEG, 'image/jpeg') }, { text: fields.prompt }] }] },
      parameters: { size: '1024*1024', watermark: false, n: 1 },
    });
    expect(fromJson?.body.equals(fromForm!.body)).toBe(true);
    // the same charge: one request, one image, the same model and route
    const [jsonUsage, formUsage] = gateway.usage;
    expect(jsonUsage).toMatchObject({ route: 'images.edits', model: 'x-image-edit', images: 1, status: 200 });
    expect(charged(jsonUsage)).toEqual(charged(formUsage));
  });

  it('OpenAI-compatible model: the form re-sent upstream carries the same fields and files (mask included)', async () => {
    const json = await jsonEdit({
      model: 'gpt-image-1',
      prompt: 'add a hat',
      n: 2,
      quality: 'low',
      images: [{ image_url: dataUrl(TINY_PNG) }, { image_url: dataUrl(TINY_GIF, 'image/gif') }],
      mask: { image_url: dataUrl(TINY_PNG) },
    });
    const form = await formEdit()
      .field('model', 'gpt-image-1')
      .field('prompt', 'add a hat')
      .field('n', '2')
      .field('quality', 'low')
      .attach('image[]', TINY_PNG, { filename: 'image.png', contentType: 'image/png' })
      .attach('image[]', TINY_GIF, { filename: 'image.gif', contentType: 'image/gif' })
      .attach('mask', TINY_PNG, { filename: 'mask.png', contentType: 'image/png' });

    expect(json.status).toBe(200);
    expect(form.status).toBe(200);
    expect(json.body).toEqual(form.body);
    const [fromJson, fromForm] = openai.requests;
    expect(fromJson?.path).toBe('/v1/images/edits');
    const sent = await partsOf(fromJson!);
    expect(sent).toEqual(await partsOf(fromForm!));
    expect(sent).toEqual([
      ['model', 'gpt-image-1-upstream'],
      ['prompt', 'add a hat'],
      ['n', '2'],
      ['quality', 'low'],
      ['image[]', { name: 'image.png', type: 'image/png', bytes: TINY_PNG.toString('base64') }],
      ['image[]', { name: 'image.gif', type: 'image/gif', bytes: TINY_GIF.toString('base64') }],
      ['mask', { name: 'mask.png', type: 'image/png', bytes: TINY_PNG.toString('base64') }],
    ]);
  });

  it('public URLs are fetched by the gateway and sent as the images they hold', async () => {
    const res = await jsonEdit(
      { model: 'x-image-edit', prompt: 'make it night', images: [{ image_url: `${imageHost.origin}/subject.png` }, { image_url: `${imageHost.origin}/dress.jpg` }] },
      local.app,
    );

    expect(res.status).toBe(200);
    expect(imageHost.requests.map((recorded) => [recorded.method, recorded.path])).toEqual(
      expect.arrayContaining([
        ['GET', '/subject.png'],
        ['GET', '/dress.jpg'],
      ]),
    );
    expect(dashscope.apiRequests()[0]?.json).toEqual({
      model: 'qwen-image-edit-plus',
      input: { messages: [{ role: 'user', content: [{ image: dataUrl(TINY_PNG) }, { image: dataUrl(TINY_JPEG, 'image/jpeg') }, { text: 'make it night' }] }] },
    });
  });

  it('the official openai SDK posts a JSON edit and reads the answer', async () => {
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([dashscope.resultUrl('sdk.png')], 'req-sdk-json')));
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: KEY_A, maxRetries: 0 });
    const answer = await client.post<OpenAI.ImagesResponse>('/images/edits', {
      body: { model: 'x-image-edit', prompt: 'add snow', images: [{ image_url: dataUrl(TINY_PNG) }], response_format: 'url' },
    });
    expect(answer.data).toEqual([{ url: dashscope.resultUrl('sdk.png'), b64_json: '', revised_prompt: '' }]);
    expect(dashscope.apiRequests()).toHaveLength(1);
  });
});

describe('bad JSON edits are refused before any upstream call', () => {
  const cases: Array<[string, Record<string, unknown>, number, unknown]> = [
    ['no images', { model: 'x-image-edit', prompt: 'p' }, 400, bad('images is required: a list of 1 to 3 objects { "image_url": "<Data URL or https URL>" }', 'images')],
    ['an empty images list', { model: 'x-image-edit', prompt: 'p', images: [] }, 400, bad('images is required: a list of 1 to 3 objects { "image_url": "<Data URL or https URL>" }', 'images')],
    ['too many images', { model: 'x-image-edit', prompt: 'p', images: Array.from({ length: 4 }, () => ({ image_url: dataUrl(TINY_PNG) })) }, 400, bad('Too many images: at most 3, got 4', 'images')],
    [
      'an image that is a bare string',
      { model: 'x-image-edit', prompt: 'p', images: [dataUrl(TINY_PNG)] },
      400,
      bad('images[0] must be an object { "image_url": "<Data URL or https URL>" }', 'images[0]'),
    ],
    [
      'a file_id',
      { model: 'x-image-edit', prompt: 'p', images: [{ file_id: 'file-abc' }] },
      400,
      bad('images[0].file_id is not supported: send the image as images[0].image_url (a Data URL or a public https URL)', 'images[0].file_id'),
    ],
    [
      'a loopback URL',
      { model: 'x-image-edit', prompt: 'p', images: [{ image_url: `${imageHost.origin}/subject.png` }] },
      400,
      bad('images[0].image_url names a loopback, private or link-local host; the URL must be publicly reachable (or send the image as a Data URL)', 'images[0].image_url'),
    ],
    [
      'a private-network URL second in the list',
      { model: 'x-image-edit', prompt: 'p', images: [{ image_url: dataUrl(TINY_PNG) }, { image_url: 'http://10.0.0.8/internal.png' }] },
      400,
      bad('images[1].image_url names a loopback, private or link-local host; the URL must be publicly reachable (or send the image as a Data URL)', 'images[1].image_url'),
    ],
    [
      'the metadata address',
      { model: 'x-image-edit', prompt: 'p', images: [{ image_url: 'http://169.254.169.254/latest/meta-data/' }] },
      400,
      bad('images[0].image_url names a loopback, private or link-local host; the URL must be publicly reachable (or send the image as a Data URL)', 'images[0].image_url'),
    ],
    [
      'a file: URL',
      { model: 'x-image-edit', prompt: 'p', images: [{ image_url: 'file:///etc/passwd' }] },
      400,
      bad("images[0].image_url must be a public http(s) URL or a 'data:image/...;base64,' URL, not 'file:'", 'images[0].image_url'),
    ],
    [
      'a non-image Data URL',
      { model: 'x-image-edit', prompt: 'p', images: [{ image_url: `data:text/plain;base64,${Buffer.from('hello').toString('base64')}` }] },
      400,
      bad("images[0].image_url must be an image Data URL: 'data:image/<type>;base64,<data>'", 'images[0].image_url'),
    ],
    [
      'an image Data URL whose bytes are not an image',
      { model: 'x-image-edit', prompt: 'p', images: [{ image_url: `data:image/png;base64,${Buffer.from('<html></html>').toString('base64')}` }] },
      400,
      bad('images[0].image_url is not an image: send PNG, JPEG, WebP, GIF, BMP, TIFF or HEIC', 'images[0].image_url'),
    ],
    [
      'a mask that is not an image',
      { model: 'gpt-image-1', prompt: 'p', images: [{ image_url: dataUrl(TINY_PNG) }], mask: { image_url: 'data:text/plain;base64,aGk=' } },
      400,
      bad("mask.image_url must be an image Data URL: 'data:image/<type>;base64,<data>'", 'mask.image_url'),
    ],
    [
      'a mask that is a string',
      { model: 'gpt-image-1', prompt: 'p', images: [{ image_url: dataUrl(TINY_PNG) }], mask: dataUrl(TINY_PNG) },
      400,
      bad('mask must be an object { "image_url": "<Data URL or https URL>" }', 'mask'),
    ],
    [
      'a mask for an image-family model',
      { model: 'x-image-edit', prompt: 'p', images: [{ image_url: dataUrl(TINY_PNG) }], mask: { image_url: dataUrl(TINY_PNG) } },
      400,
      bad("mask is not supported by model 'x-image-edit': describe the region to change in the prompt", 'mask'),
    ],
    ['an empty prompt', { model: 'x-image-edit', prompt: ' ', images: [{ image_url: dataUrl(TINY_PNG) }] }, 400, bad('prompt is required: the edit instruction must not be empty', 'prompt')],
  ];

  it.each(cases)('%s', async (_name, body, status, expected) => {
    const res = await jsonEdit(body);
    expect(res.status).toBe(status);
    expect(res.body).toEqual(expected);
    expectNothingUpstream();
    expect(imageHost.requests).toHaveLength(0);
  });

  it('a URL that answers 404 is a 400 naming the field', async () => {
    const res = await jsonEdit({ model: 'x-image-edit', prompt: 'p', images: [{ image_url: `${imageHost.origin}/gone.png` }] }, local.app);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(bad('images[0].image_url could not be fetched: the URL answered HTTP 404. Make it publicly reachable, or send the image as a Data URL', 'images[0].image_url'));
    expect(imageHost.requests.map((recorded) => recorded.path)).toEqual(['/gone.png']);
    expectNothingUpstream();
  });

  it('a URL whose answer is not an image is a 400 naming the field', async () => {
    const res = await jsonEdit({ model: 'x-image-edit', prompt: 'p', images: [{ image_url: `${imageHost.origin}/page.html` }] }, local.app);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(bad('images[0].image_url is not an image: send PNG, JPEG, WebP, GIF, BMP, TIFF or HEIC', 'images[0].image_url'));
    expectNothingUpstream();
  });

  it('a URL that answers more than the upload limit is a 413 naming the field', async () => {
    const res = await jsonEdit({ model: 'x-image-edit', prompt: 'p', images: [{ image_url: `${imageHost.origin}/big.png` }] }, smallLocal.app);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      error: { message: 'images[0].image_url answers more than the 1024 byte limit per image', type: 'invalid_request_error', code: 'request_too_large', param: 'images[0].image_url' },
    });
    expectNothingUpstream();
  });

  it('a Data URL larger than the upload limit is a 413 naming the field', async () => {
    const res = await jsonEdit({ model: 'x-image-edit', prompt: 'p', images: [{ image_url: dataUrl(BIG_PNG) }] }, smallLocal.app);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      error: {
        message: `images[0].image_url is a Data URL of ${BIG_PNG.length} bytes, larger than the 1024 byte limit per image`,
        type: 'invalid_request_error',
        code: 'request_too_large',
        param: 'images[0].image_url',
      },
    });
    expectNothingUpstream();
  });
});
