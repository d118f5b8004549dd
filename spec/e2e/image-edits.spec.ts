// POST /v1/images/edits end to end (contract §4.2, docs/architecture.md "Compatibility with plain OpenAI clients"):
// multipart uploads through a host Express app, in front of a fake DashScope (upstreams §1.3) for
// image-family models and a fake OpenAI-compatible upstream (upstreams §4.2) for the rest.
import request, { type Test } from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Upstream } from '../../lib/index.js';
import { DASHSCOPE_PATH, dashscopeSuccess, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { type FakeOpenAI, OPENAI_EDIT_REQUEST_ID, OPENAI_EDIT_RESPONSE, openaiError, startFakeOpenAI } from '../helpers/fake-openai.js';
import { type RecordedRequest, sendJson } from '../helpers/fake-upstream.js';
import { KEY_A, createTestGateway } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { UPSTREAM_KEY, imageUpstream } from '../helpers/image-model-map.js';
import { TINY_GIF, TINY_JPEG, TINY_PNG } from '../helpers/images.js';

let resolverCalls = 0;

const pngUrl = (bytes: Buffer = TINY_PNG) => `data:image/png;base64,${bytes.toString('base64')}`;
const JPEG_DATA_URL = `data:image/jpeg;base64,${TINY_JPEG.toString('base64')}`;
const GIF_DATA_URL = `data:image/gif;base64,${TINY_GIF.toString('base64')}`;

function resolveUpstream({ model }: { model: string }): Upstream | null {
  resolverCalls += 1;
  return imageUpstream(model, { dashscope, openai });
}

const gateway = await gatewayWith({ fakes: { dashscope: startFakeDashscope, openai: startFakeOpenAI }, resolve: resolveUpstream, resetEach: true });
const { dashscope, openai } = gateway.fakes;

/** An authenticated multipart POST; `.field()` / `.attach()` make supertest send multipart/form-data. */
function edit(app = gateway.app): Test {
  return request(app).post('/v1/images/edits').set('Authorization', `Bearer ${KEY_A}`);
}

/** The one message DashScope receives for an edit: image items in order, then the text item. */
function dashscopeBody(model: string, images: string[], text: string, parameters?: Record<string, unknown>) {
  return {
    model,
    input: { messages: [{ role: 'user', content: [...images.map((image) => ({ image })), { text }] }] },
    ...(parameters ? { parameters } : {}),
  };
}

async function formOf(recorded: RecordedRequest): Promise<FormData> {
  return new Response(new Uint8Array(recorded.body), { headers: { 'content-type': String(recorded.headers['content-type']) } }).formData();
}

async function fileOf(form: FormData, name: string, index = 0): Promise<{ name: string; type: string; bytes: Buffer }> {
  const value = form.getAll(name)[index];
  if (!(value instanceof File)) throw new Error(`form field '${name}' #${index} is not a file`);
  return { name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
}

function expectNothingUpstream(): void {
  expect(dashscope.requests).toHaveLength(0);
  expect(openai.requests).toHaveLength(0);
}

afterEach(() => {
  resolverCalls = 0;
});

describe('image-family models: the form becomes the DashScope multimodal request', () => {
  it('one file in `image` becomes a Data URL image item before the prompt, and the answer is the spec §2.4 body', async () => {
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([dashscope.resultUrl('edit-1.png')], 'req-edit-1'), { 'x-request-id': 'req-edit-1' }));
    const before = Math.floor(Date.now() / 1000);
    const res = await edit()
      .field('model', 'x-image-edit')
      .field('prompt', 'make it night')
      .field('size', '1024x1024')
      .field('watermark', 'false')
      .field('response_format', 'url')
      .attach('image', TINY_PNG, { filename: 'subject.png', contentType: 'image/png' });

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      created: expect.any(Number),
      data: [{ url: dashscope.resultUrl('edit-1.png'), b64_json: '', revised_prompt: '' }],
      extra: { request_id: 'req-edit-1' },
    });
    expect(res.body.created).toBeGreaterThanOrEqual(before);
    expect(res.body.created).toBeLessThanOrEqual(before + 5);

    const sent = dashscope.apiRequests();
    expect(sent).toHaveLength(1);
    expect(sent[0]?.method).toBe('POST');
    expect(sent[0]?.path).toBe(DASHSCOPE_PATH);
    expect(sent[0]?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(sent[0]?.headers['content-type']).toBe('application/json');
    expect(sent[0]?.headers['x-dashscope-async']).toBeUndefined();
    expect(sent[0]?.json).toEqual({
      model: 'qwen-image-edit-plus',
      input: { messages: [{ role: 'user', content: [{ image: `data:image/png;base64,${TINY_PNG.toString('base64')}` }, { text: 'make it night' }] }] },
      parameters: { size: '1024*1024', watermark: false },
    });
    expect(openai.requests).toHaveLength(0);
  });

  it('three files as repeated `image[]` keep their order; each MIME type comes from the bytes, not the name or part type', async () => {
    const res = await edit()
      .field('model', 'x-image-edit')
      .field('prompt', 'the girl in image 1 wears the dress in image 2 on the background of image 3')
      // a PNG that claims to be a JPEG, a JPEG that claims to be a PNG, a GIF sent as octet-stream
      .attach('image[]', TINY_PNG, { filename: 'photo.jpg', contentType: 'image/jpeg' })
      .attach('image[]', TINY_JPEG, { filename: 'dress.png', contentType: 'image/png' })
      .attach('image[]', TINY_GIF, { filename: 'background.bin', contentType: 'application/octet-stream' });

    expect(res.status).toBe(200);
    expect(dashscope.apiRequests()[0]?.json).toEqual(
      dashscopeBody('qwen-image-edit-plus', [pngUrl(), JPEG_DATA_URL, GIF_DATA_URL], 'the girl in image 1 wears the dress in image 2 on the background of image 3'),
    );
  });

  it('`image[N]` fields sent out of order are sorted by N', async () => {
    const res = await edit()
      .field('model', 'x-image-edit')
      .field('prompt', 'merge them')
      .attach('image[0]', TINY_PNG, { filename: 'a.png', contentType: 'image/png' })
      .attach('image[2]', TINY_GIF, { filename: 'c.gif', contentType: 'image/gif' })
      .attach('image[1]', TINY_JPEG, { filename: 'b.jpg', contentType: 'image/jpeg' });

    expect(res.status).toBe(200);
    expect(dashscope.apiRequests()[0]?.json).toEqual(dashscopeBody('qwen-image-edit-plus', [pngUrl(), JPEG_DATA_URL, GIF_DATA_URL], 'merge them'));
  });

  it('a plain `image` with `image[N]` fields: the plain one first, then the indexed ones by N', async () => {
    const res = await edit()
      .field('model', 'x-image-edit')
      .field('prompt', 'merge them')
      .attach('image', TINY_PNG, { filename: 'a.png', contentType: 'image/png' })
      .attach('image[2]', TINY_GIF, { filename: 'c.gif', contentType: 'image/gif' })
      .attach('image[1]', TINY_JPEG, { filename: 'b.jpg', contentType: 'image/jpeg' });
    expect(res.status).toBe(200);
    // regression: when plain/`image[]` and `image[N]` fields are mixed, sortFiles keeps the indexed ones in
    // arrival order (GIF before JPEG here) instead of by N.
    expect(dashscope.apiRequests()[0]?.json).toEqual(dashscopeBody('qwen-image-edit-plus', [pngUrl(), JPEG_DATA_URL, GIF_DATA_URL], 'merge them'));
  });

  it('`image[N]` indexes sort as numbers (9 before 10)', async () => {
    const res = await edit()
      .field('model', 'x-image-edit')
      .field('prompt', 'merge them')
      .attach('image[10]', TINY_GIF, { filename: 'c.gif', contentType: 'image/gif' })
      .attach('image[9]', TINY_JPEG, { filename: 'b.jpg', contentType: 'image/jpeg' });
    expect(res.status).toBe(200);
    expect(dashscope.apiRequests()[0]?.json).toEqual(dashscopeBody('qwen-image-edit-plus', [JPEG_DATA_URL, GIF_DATA_URL], 'merge them'));
  });

  it('the prompt goes to the text item verbatim (no trimming, unicode intact)', async () => {
    const prompt = '  把背景换成冬日北京的街景 — keep the face  ';
    const res = await edit().field('model', 'x-image-edit').field('prompt', prompt).attach('image', TINY_PNG, { filename: 'a.png', contentType: 'image/png' });
    expect(res.status).toBe(200);
    expect(dashscope.apiRequests()[0]?.json).toEqual(dashscopeBody('qwen-image-edit-plus', [pngUrl()], prompt));
  });

  const parameterCases: Array<[string, Record<string, string>, Record<string, unknown>]> = [
    ['size 1024x1024 becomes parameters.size 1024*1024', { size: '1024x1024' }, { size: '1024*1024' }],
    ['size already in the * form', { size: '1024*1536' }, { size: '1024*1536' }],
    ['n=2 becomes parameters.n 2', { n: '2' }, { n: 2 }],
    ['watermark=false becomes parameters.watermark false', { watermark: 'false' }, { watermark: false }],
    ['watermark=true becomes parameters.watermark true', { watermark: 'true' }, { watermark: true }],
    ['prompt_extend, negative_prompt and seed', { prompt_extend: 'false', negative_prompt: 'low quality', seed: '42' }, { prompt_extend: false, negative_prompt: 'low quality', seed: 42 }],
    ['everything at once', { size: '768x1024', n: '3', watermark: 'false' }, { size: '768*1024', n: 3, watermark: false }],
    // OpenAI-only fields have no DashScope meaning and do not leak into the upstream body
    ['quality and user are not sent upstream', { quality: 'high', user: 'end-user-1' }, {}],
  ];
  it.each(parameterCases)('%s', async (_name, fields, parameters) => {
    let req = edit().field('model', 'x-image-edit').field('prompt', 'p');
    for (const [name, value] of Object.entries(fields)) req = req.field(name, value);
    const res = await req.attach('image', TINY_PNG, { filename: 'a.png', contentType: 'image/png' });
    expect(res.status).toBe(200);
    expect(dashscope.apiRequests()[0]?.json).toEqual(dashscopeBody('qwen-image-edit-plus', [pngUrl()], 'p', Object.keys(parameters).length > 0 ? parameters : undefined));
  });

  it('n=2 answers two images; an edit that names no response_format gets their bytes, never an empty b64_json', async () => {
    const res = await edit().field('model', 'x-image-edit').field('prompt', 'two variants').field('n', '2').attach('image', TINY_PNG, { filename: 'a.png', contentType: 'image/png' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      created: expect.any(Number),
      data: [
        { url: expect.stringMatching(/\/results\/image-1\.png\?/), b64_json: TINY_PNG.toString('base64'), revised_prompt: '' },
        { url: expect.stringMatching(/\/results\/image-2\.png\?/), b64_json: TINY_PNG.toString('base64'), revised_prompt: '' },
      ],
      extra: { request_id: expect.stringMatching(/^ds-req-/) },
    });
  });

  it('response_format=b64_json downloads each result image and fills b64_json; the field is not sent upstream', async () => {
    const res = await edit()
      .field('model', 'x-image-edit')
      .field('prompt', 'p')
      .field('n', '2')
      .field('response_format', 'b64_json')
      .attach('image', TINY_PNG, { filename: 'a.png', contentType: 'image/png' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      created: expect.any(Number),
      data: [
        { url: expect.stringMatching(/\/results\/image-1\.png\?/), b64_json: TINY_PNG.toString('base64'), revised_prompt: '' },
        { url: expect.stringMatching(/\/results\/image-2\.png\?/), b64_json: TINY_PNG.toString('base64'), revised_prompt: '' },
      ],
      extra: { request_id: expect.stringMatching(/^ds-req-/) },
    });
    expect(dashscope.apiRequests()[0]?.json).toEqual(dashscopeBody('qwen-image-edit-plus', [pngUrl()], 'p', { n: 2 }));
    expect(dashscope.requests.filter((r) => r.path.startsWith('/results/'))).toHaveLength(2);
  });

  it('response_format=url leaves b64_json empty and downloads nothing', async () => {
    const res = await edit().field('model', 'x-image-edit').field('prompt', 'p').field('response_format', 'url').attach('image', TINY_PNG, { filename: 'a.png', contentType: 'image/png' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ url: expect.stringMatching(/\/results\/image-1\.png\?/), b64_json: '', revised_prompt: '' }]);
    expect(dashscope.requests.filter((r) => r.path.startsWith('/results/'))).toHaveLength(0);
  });

  it('x-image-2.0 edits through the form too', async () => {
    const res = await edit().field('model', 'x-image-2.0').field('prompt', 'add a hat').attach('image', TINY_JPEG, { filename: 'me.jpg', contentType: 'image/jpeg' });
    expect(res.status).toBe(200);
    expect(dashscope.apiRequests()[0]?.json).toEqual(dashscopeBody('qwen-image-2.0', [JPEG_DATA_URL], 'add a hat'));
  });
});

const bad = (message: string, param?: string) => ({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param: param ?? null } });
const png = (req: Test, field = 'image', filename = 'a.png') => req.attach(field, TINY_PNG, { filename, contentType: 'image/png' });

describe('a missing model', () => {
  const cases: Array<[string, (req: Test) => Test]> = [
    ['no model field, with an image and a prompt', (req) => png(req.field('prompt', 'p'))],
    ['no model field and nothing else', (req) => req.field('prompt', 'p')],
    ['an empty model field', (req) => png(req.field('model', '').field('prompt', 'p'))],
  ];
  it.each(cases)('%s: 400 model is required, and nothing is resolved or called', async (_name, build) => {
    const res = await build(edit());
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message: 'model is required', type: 'invalid_request_error', code: 'invalid_request_error', param: 'model' } });
    expect(resolverCalls).toBe(0);
    expectNothingUpstream();
  });
});

describe('invalid uploads: the error object, and neither the resolver nor any upstream is called', () => {
  const form = (model = 'x-image-edit') => edit().field('model', model).field('prompt', 'p');
  const cases: Array<[string, () => Test, number, unknown]> = [
    ['no image file', () => form(), 400, bad("image is required: upload 1 to 3 image files in 'image' or 'image[]'", 'image')],
    ['only a mask, no image', () => png(form(), 'mask', 'mask.png'), 400, bad("image is required: upload 1 to 3 image files in 'image' or 'image[]'", 'image')],
    ['four image files (limits.imagesPerRequest is 3)', () => png(png(png(png(form(), 'image[]'), 'image[]'), 'image[]'), 'image[]'), 400, bad('Too many images: at most 3, got 4', 'image')],
    [
      'five files (the multipart file-count limit: 3 images and one mask)',
      () => png(png(png(png(png(form(), 'image[]'), 'image[]'), 'image[]'), 'image[]'), 'image[]'),
      400,
      bad('Too many files: at most 3 images and one mask (4 files)'),
    ],
    [
      'a text file',
      () => form().attach('image', Buffer.from('hello, this is not an image\n'), { filename: 'notes.png', contentType: 'image/png' }),
      400,
      bad('image[0] is not an image: upload PNG, JPEG, WebP, GIF, BMP, TIFF or HEIC', 'image'),
    ],
    [
      'a text file as the second of two',
      () =>
        form()
          .attach('image[]', TINY_PNG, { filename: 'a.png', contentType: 'image/png' })
          .attach('image[]', Buffer.from('{"not":"an image"}'), { filename: 'b.json', contentType: 'application/json' }),
      400,
      bad('image[1] is not an image: upload PNG, JPEG, WebP, GIF, BMP, TIFF or HEIC', 'image[]'),
    ],
    ['an empty file', () => form().attach('image', Buffer.alloc(0), { filename: 'empty.png', contentType: 'image/png' }), 400, bad('image[0] is an empty file', 'image')],
    [
      'a mask that is not an image',
      () => png(form()).attach('mask', Buffer.from('plain text'), { filename: 'mask.png', contentType: 'image/png' }),
      400,
      bad('mask is not an image: upload PNG, JPEG, WebP, GIF, BMP, TIFF or HEIC', 'mask'),
    ],
    ['two masks', () => png(png(png(form()), 'mask', 'm1.png'), 'mask', 'm2.png'), 400, bad('Only one mask file is allowed', 'mask')],
    ['a missing prompt', () => png(edit().field('model', 'x-image-edit')), 400, bad('prompt is required: the edit instruction must not be empty', 'prompt')],
    ['an empty prompt', () => png(edit().field('model', 'x-image-edit').field('prompt', '')), 400, bad('prompt is required: the edit instruction must not be empty', 'prompt')],
    ['a blank prompt', () => png(edit().field('model', 'x-image-edit').field('prompt', '  \n ')), 400, bad('prompt is required: the edit instruction must not be empty', 'prompt')],
    [
      'an unexpected file field name',
      () => form().attach('photo', TINY_PNG, { filename: 'a.png', contentType: 'image/png' }),
      400,
      bad("Unexpected file field 'photo': send images in 'image' or 'image[]', and an optional 'mask'", 'photo'),
    ],
    ['n=abc', () => png(form().field('n', 'abc')), 400, bad('n must be a whole number', 'n')],
    ['n=1.5', () => png(form().field('n', '1.5')), 400, bad('n must be a whole number', 'n')],
    ['n=0', () => png(form().field('n', '0')), 400, bad('n must be >= 1', 'n')],
    ['size=big', () => png(form().field('size', 'big')), 400, bad("size must look like '1024x1024', '1024*1024' or a named size such as '2K'", 'size')],
    ['watermark=yes', () => png(form().field('watermark', 'yes')), 400, bad("watermark must be 'true' or 'false'", 'watermark')],
    ['seed=-1', () => png(form().field('seed', '-1')), 400, bad('seed must be a whole number', 'seed')],
    ['response_format=png', () => png(form().field('response_format', 'png')), 400, bad("response_format must be one of 'url', 'b64_json'", 'response_format')],
    ['a mask for an image-family model', () => png(png(form()), 'mask', 'mask.png'), 400, bad("mask is not supported by model 'x-image-edit': describe the region to change in the prompt", 'mask')],
    [
      'a malformed multipart body (broken boundary, truncated)',
      () => edit().set('Content-Type', 'multipart/form-data; boundary=XYZ').send('--XYZ\r\nbroken'),
      400,
      bad('The multipart form is malformed or incomplete'),
    ],
    ['a multipart content type without a boundary', () => edit().set('Content-Type', 'multipart/form-data').send('model=x-image-edit'), 400, bad('The multipart form is malformed or incomplete')],
    [
      "a JSON body with the form's `image` field",
      () => edit().send({ model: 'x-image-edit', prompt: 'p', image: pngUrl() }),
      400,
      bad('image is the multipart field: a JSON edit sends its images as \'images\': [{ "image_url": "<Data URL or https URL>" }]', 'image'),
    ],
    [
      'a urlencoded body',
      () => edit().type('form').send({ model: 'x-image-edit', prompt: 'p' }),
      415,
      {
        error: {
          message: "Content-Type must be multipart/form-data (image files) or application/json (images as URLs), got 'application/x-www-form-urlencoded'",
          type: 'invalid_request_error',
          code: 'unsupported_media_type',
          param: null,
        },
      },
    ],
  ];

  it.each(cases)('%s', async (_name, build, status, expected) => {
    const res = await build();
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(expected);
    expect(resolverCalls).toBe(0);
    expectNothingUpstream();
  });

  it('a file over limits.uploadFileBytes is a 413 that names the limit', async () => {
    const small = createTestGateway({ limits: { uploadFileBytes: 1024 }, resolveUpstream });
    const twoKb = Buffer.concat([TINY_PNG, Buffer.alloc(2048 - TINY_PNG.length, 0x41)]);
    const res = await edit(small.app).field('model', 'x-image-edit').field('prompt', 'p').attach('image', twoKb, { filename: 'big.png', contentType: 'image/png' });
    await small.close();
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      error: { message: "The file in 'image' is larger than the 1024 byte limit per image", type: 'invalid_request_error', code: 'request_too_large', param: 'image' },
    });
    expect(resolverCalls).toBe(0);
    expectNothingUpstream();
  });

  it('a file exactly at limits.uploadFileBytes passes', async () => {
    const small = createTestGateway({ limits: { uploadFileBytes: 1024 }, resolveUpstream });
    const oneKb = Buffer.concat([TINY_PNG, Buffer.alloc(1024 - TINY_PNG.length, 0x41)]);
    const res = await edit(small.app).field('model', 'x-image-edit').field('prompt', 'p').attach('image', oneKb, { filename: 'ok.png', contentType: 'image/png' });
    await small.close();
    expect(res.status).toBe(200);
    expect(dashscope.apiRequests()[0]?.json).toEqual(dashscopeBody('qwen-image-edit-plus', [pngUrl(oneKb)], 'p'));
  });

  it('an upload within uploadFileBytes but over dataUrlBytes is a 413 about the uploaded file, not about a Data URL', async () => {
    const mixed = createTestGateway({ limits: { uploadFileBytes: 8192, dataUrlBytes: 1024 }, resolveUpstream });
    const twoKb = Buffer.concat([TINY_PNG, Buffer.alloc(2048 - TINY_PNG.length, 0x41)]);
    const res = await edit(mixed.app).field('model', 'x-image-edit').field('prompt', 'p').attach('image', twoKb, { filename: 'big.png', contentType: 'image/png' });
    await mixed.close();
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large' });
    expect(res.body.error.message).toContain('1024 byte');
    // regression: the form's files go through the JSON route's Data URL check, so the caller is told
    // 'input.messages[0].content[0].image is a Data URL of 2048 bytes ... Use a public URL' with
    // param 'input.messages[0].content[0].image': neither exists in a multipart request.
    expect(res.body.error.param).toBe('image');
    expect(res.body.error.message).not.toContain('Data URL');
    expect(resolverCalls).toBe(0);
    expectNothingUpstream();
  });

  it('an image on a text-to-image-only model (x-image-max) is a 400 naming the model', async () => {
    const res = await png(form('x-image-max'));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request_error' });
    expect(res.body.error.message).toContain("'x-image-max'");
    expect(res.body.error.message).toContain('text-to-image only');
    expect(resolverCalls).toBe(0);
    expectNothingUpstream();
  });

  it('a missing key is a 401 before the form is read', async () => {
    const res = await png(request(gateway.app).post('/v1/images/edits').field('model', 'x-image-edit').field('prompt', 'p'));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { message: "Missing API key. Send the header 'Authorization: Bearer <API_KEY>'.", type: 'authentication_error', code: 'invalid_api_key', param: null } });
    expect(resolverCalls).toBe(0);
    expectNothingUpstream();
  });

  it('a model the resolver does not route is a 404 model_not_found', async () => {
    const res = await png(form('not-a-model'));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: { message: "The model 'not-a-model' does not exist or you do not have access to it.", type: 'invalid_request_error', code: 'model_not_found', param: 'model' },
    });
    expectNothingUpstream();
  });
});

describe('models with an OpenAI-compatible upstream: the form is re-sent, model renamed, files intact', () => {
  it('forwards every field and file (mask included) and answers the upstream body as is', async () => {
    const res = await edit()
      .field('model', 'gpt-image-1')
      .field('prompt', 'put the otter in a hat')
      .field('size', '1024x1024')
      .field('n', '1')
      .field('quality', 'high')
      .attach('image[]', TINY_PNG, { filename: 'otter.png', contentType: 'image/png' })
      .attach('image[]', TINY_JPEG, { filename: 'hat.jpg', contentType: 'image/jpeg' })
      .attach('mask', TINY_PNG, { filename: 'mask.png', contentType: 'image/png' });

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(OPENAI_EDIT_RESPONSE);

    const sent = openai.apiRequests();
    expect(sent).toHaveLength(1);
    expect(sent[0]?.method).toBe('POST');
    expect(sent[0]?.path).toBe('/v1/images/edits');
    expect(sent[0]?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(sent[0]?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const form = await formOf(sent[0]!);
    expect([...new Set(form.keys())].sort()).toEqual(['image[]', 'mask', 'model', 'n', 'prompt', 'quality', 'size']);
    expect(form.getAll('model')).toEqual(['gpt-image-1-upstream']);
    expect(form.getAll('prompt')).toEqual(['put the otter in a hat']);
    expect(form.getAll('size')).toEqual(['1024x1024']);
    expect(form.getAll('n')).toEqual(['1']);
    expect(form.getAll('quality')).toEqual(['high']);
    expect(form.getAll('image[]')).toHaveLength(2);
    expect(await fileOf(form, 'image[]', 0)).toEqual({ name: 'otter.png', type: 'image/png', bytes: TINY_PNG });
    expect(await fileOf(form, 'image[]', 1)).toEqual({ name: 'hat.jpg', type: 'image/jpeg', bytes: TINY_JPEG });
    expect(form.getAll('mask')).toHaveLength(1);
    expect(await fileOf(form, 'mask')).toEqual({ name: 'mask.png', type: 'image/png', bytes: TINY_PNG });
    expect(dashscope.requests).toHaveLength(0);
  });

  it('keeps a single `image` field as `image`, and passes response_format through', async () => {
    const res = await edit().field('model', 'gpt-image-1').field('prompt', 'p').field('response_format', 'b64_json').attach('image', TINY_GIF, { filename: 'anim.gif', contentType: 'image/gif' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(OPENAI_EDIT_RESPONSE);
    const form = await formOf(openai.apiRequests()[0]!);
    expect([...new Set(form.keys())].sort()).toEqual(['image', 'model', 'prompt', 'response_format']);
    expect(form.get('response_format')).toBe('b64_json');
    expect(await fileOf(form, 'image')).toEqual({ name: 'anim.gif', type: 'image/gif', bytes: TINY_GIF });
  });

  it('keeps nested and repeated text fields under their own names', async () => {
    const res = await edit()
      .field('model', 'gpt-image-1')
      .field('prompt', 'p')
      .field('metadata[source]', 'app')
      .field('tag', 'one')
      .field('tag', 'two')
      .attach('image', TINY_PNG, { filename: 'a.png', contentType: 'image/png' });
    expect(res.status).toBe(200);
    const form = await formOf(openai.apiRequests()[0]!);
    expect(form.getAll('metadata[source]')).toEqual(['app']);
    // regression: multer folds a repeated field into an array and rebuildForm re-emits it as 'tag[]',
    // so the upstream gets a field the client never sent (and no 'tag').
    expect([...new Set(form.keys())].sort()).toEqual(['image', 'metadata[source]', 'model', 'prompt', 'tag']);
    expect(form.getAll('tag')).toEqual(['one', 'two']);
  });

  it('keeps a non-ASCII filename as the client sent it', async () => {
    const res = await edit().field('model', 'gpt-image-1').field('prompt', 'p').attach('image', TINY_PNG, { filename: '猫の写真.png', contentType: 'image/png' });
    expect(res.status).toBe(200);
    const form = await formOf(openai.apiRequests()[0]!);
    // regression: multer decodes part filenames as latin1 by default (defParamCharset), so the UTF-8
    // filename every SDK sends is forwarded as mojibake ('ç\u008c«ã\u0081®...png').
    expect((await fileOf(form, 'image')).name).toBe('猫の写真.png');
  });

  it('a non-image file is refused before the upstream is called', async () => {
    const res = await edit().field('model', 'gpt-image-1').field('prompt', 'p').attach('image', Buffer.from('not an image'), { filename: 'a.png', contentType: 'image/png' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(bad('image[0] is not an image: upload PNG, JPEG, WebP, GIF, BMP, TIFF or HEIC', 'image'));
    expect(resolverCalls).toBe(0);
    expectNothingUpstream();
  });

  const upstreamErrors: Array<[string, Parameters<FakeOpenAI['next']>[0], number, unknown]> = [
    [
      '400 invalid_value',
      (_req, res) => openaiError(res, 400, 'Invalid size', 'invalid_request_error', 'invalid_value', 'oa-req-400'),
      400,
      bad('The upstream rejected the request: Invalid size (openai code invalid_value, request id oa-req-400)'),
    ],
    [
      '400 moderation_blocked',
      (_req, res) => openaiError(res, 400, 'Your request was rejected by the safety system.', 'image_generation_user_error', 'moderation_blocked', 'oa-req-mod'),
      400,
      {
        error: {
          message: 'The upstream rejected the content as inappropriate: Your request was rejected by the safety system. (openai code moderation_blocked, request id oa-req-mod)',
          type: 'invalid_request_error',
          code: 'content_policy_violation',
          param: null,
        },
      },
    ],
    [
      '429 rate limit',
      (_req, res) => openaiError(res, 429, 'Rate limit reached for images', 'requests', 'rate_limit_exceeded', 'oa-req-429'),
      429,
      {
        error: {
          message: 'The upstream is rate limiting requests: Rate limit reached for images (openai code rate_limit_exceeded, request id oa-req-429). Retry later.',
          type: 'rate_limit_error',
          code: 'rate_limit_exceeded',
          param: null,
        },
      },
    ],
    [
      '401 from the upstream is the operator’s problem: 502',
      (_req, res) => openaiError(res, 401, 'Incorrect API key provided: sk-upst***000', 'invalid_request_error', 'invalid_api_key', 'oa-req-401'),
      502,
      {
        error: {
          message: "The upstream rejected the gateway's own credentials (an operator configuration problem, not your key) (openai code invalid_api_key, request id oa-req-401).",
          type: 'upstream_error',
          code: 'upstream_auth_failed',
          param: null,
        },
      },
    ],
    [
      '500',
      (_req, res) => openaiError(res, 500, 'The server had an error', 'server_error', null, 'oa-req-500'),
      502,
      { error: { message: 'The upstream failed: The server had an error (openai code server_error, request id oa-req-500)', type: 'upstream_error', code: 'upstream_error', param: null } },
    ],
  ];
  it.each(upstreamErrors)('an upstream %s is normalized', async (_name, responder, status, expected) => {
    openai.next(responder);
    const res = await png(edit().field('model', 'gpt-image-1').field('prompt', 'p'));
    expect(res.status).toBe(status);
    expect(res.body).toEqual(expected);
    expect(res.text).not.toContain(UPSTREAM_KEY);
    expect(openai.apiRequests()).toHaveLength(1);
    expect(dashscope.requests).toHaveLength(0);
  });
});

describe('usage (onUsage)', () => {
  it('reports route images.edits with the number of images, for a DashScope and an OpenAI upstream', async () => {
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([dashscope.resultUrl('1.png'), dashscope.resultUrl('2.png')], 'req-usage-ds')));
    const first = await edit().field('model', 'x-image-edit').field('prompt', 'p').field('n', '2').attach('image', TINY_PNG, { filename: 'a.png', contentType: 'image/png' });
    expect(first.status).toBe(200);
    await vi.waitFor(() => expect(gateway.usage).toHaveLength(1));
    const second = await png(edit().field('model', 'gpt-image-1').field('prompt', 'p'));
    expect(second.status).toBe(200);
    await vi.waitFor(() => expect(gateway.usage).toHaveLength(2));

    expect(gateway.usage).toEqual([
      {
        caller: { id: 'tenant-a' },
        route: 'images.edits',
        model: 'x-image-edit',
        provider: 'dashscope',
        // the resolver's own name for the model (what a price table keyed by vendor ids follows)
        upstreamModel: 'qwen-image-edit-plus',
        images: 2,
        upstreamImages: 2,
        status: 200,
        latencyMs: expect.any(Number),
        upstreamRequestId: 'req-usage-ds',
        // DashScope's usage { width, height, image_count }: each image's size
        imageSizes: ['1664x928', '1664x928'],
        upstreamUsage: { height: 928, image_count: 2, width: 1664 },
        // what DashScope may bill: the one call, its two images (docs/tenancy-and-billing.md "The books")
        vendorWork: { images: 2, attempts: [{ provider: 'dashscope', id: 'req-usage-ds', images: 2, outcome: 'made' }] },
      },
      {
        caller: { id: 'tenant-a' },
        route: 'images.edits',
        model: 'gpt-image-1',
        provider: 'openai',
        upstreamModel: 'gpt-image-1-upstream',
        images: OPENAI_EDIT_RESPONSE.data.length,
        upstreamImages: OPENAI_EDIT_RESPONSE.data.length,
        status: 200,
        latencyMs: expect.any(Number),
        upstreamRequestId: OPENAI_EDIT_REQUEST_ID,
        vendorWork: { images: OPENAI_EDIT_RESPONSE.data.length, attempts: [{ provider: 'openai', id: OPENAI_EDIT_REQUEST_ID, images: OPENAI_EDIT_RESPONSE.data.length, outcome: 'made' }] },
      },
    ]);
  });

  it('reports a rejected edit with 0 images, its status and the model the caller named', async () => {
    const res = await edit().field('model', 'x-image-edit').field('prompt', 'p');
    expect(res.status).toBe(400);
    await vi.waitFor(() => expect(gateway.usage).toHaveLength(1));
    expect(gateway.usage).toEqual([
      {
        caller: { id: 'tenant-a' },
        route: 'images.edits',
        // regression: the edits handler checks the files and the prompt before serveImageRequest records the
        // model, so a rejected edit is metered with model '' (a rejected generation reports its model).
        model: 'x-image-edit',
        provider: undefined,
        images: 0,
        status: 400,
        latencyMs: expect.any(Number),
        upstreamRequestId: undefined,
        errorCode: 'invalid_request_error',
      },
    ]);
  });

  it('reports nothing for a request without a valid key', async () => {
    const res = await png(request(gateway.app).post('/v1/images/edits').set('Authorization', 'Bearer sk-nope').field('model', 'x-image-edit').field('prompt', 'p'));
    expect(res.status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(gateway.usage).toEqual([]);
  });

  it('the resolver is told the route is images.edits', async () => {
    const seen: unknown[] = [];
    const spy = createTestGateway({
      resolveUpstream: (input) => {
        seen.push({ model: input.model, route: input.route, caller: input.caller });
        return resolveUpstream(input);
      },
    });
    const res = await png(edit(spy.app).field('model', 'x-image-edit').field('prompt', 'p'));
    await spy.close();
    expect(res.status).toBe(200);
    expect(seen).toEqual([{ model: 'x-image-edit', route: 'images.edits', caller: { id: 'tenant-a' } }]);
  });
});
