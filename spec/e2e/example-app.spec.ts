// The runnable example (examples/server.ts) exercised as a user would: the host route, every image
// variant through the gateway to the simulated DashScope, the PNGs it returns, and the auth and
// unknown-model failures. DASHSCOPE_API_KEY is removed for the run, so no test can reach the real vendor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createExampleApp, dashscopeModelFor, type ExampleApp } from '../../examples/server.js';
import { startSimulatedDashscope, type SimulatedDashscope } from '../../examples/simulated-dashscope.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const SUBJECT_URL = 'https://images.example.com/subject.png';
const STYLE_URL = 'https://images.example.com/style.png';
const BACKGROUND_URL = 'https://images.example.com/background.png';

/** Checks the signature and the IHDR chunk (first, 13 bytes, 8-bit RGB) and returns the pixel size. */
function readPngHeader(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  expect(png.readUInt32BE(8)).toBe(13);
  expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
  expect(png[24]).toBe(8); // bit depth
  expect(png[25]).toBe(2); // colour type RGB
  expect(png.subarray(-8, -4).toString('latin1')).toBe('IEND');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

const DURABLE_PNG_URL = /^http:\/\/127\.0\.0\.1:\d+\/v1\/results\/[a-f0-9]{32}\/[A-Za-z0-9_-]{22}\.png\?expires=\d+&signature=[A-Za-z0-9_-]{43}$/;

function textToImage(prompt: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'x-image-2.0', prompt: 'placeholder', input: { messages: [{ role: 'user', content: [{ text: prompt }] }] }, ...extra };
}

function edit(images: string[], prompt: string): Record<string, unknown> {
  const content = [...images.map((image) => ({ image })), { text: prompt }];
  return { model: 'x-image-edit', prompt: 'placeholder', input: { messages: [{ role: 'user', content }] } };
}

/** GETs an absolute URL with supertest (it wants an app or an origin) and returns the body bytes. */
// the durable result URLs name the host of the request that made them (supertest's own short-lived
// server), so they are fetched from the example app itself, path and signature as given
let resultsApp: ExampleApp['app'] | undefined;

async function download(url: string): Promise<{ status: number; type: string; body: Buffer }> {
  const { origin, pathname, search } = new URL(url);
  const response = await request(pathname.startsWith('/v1/results/') && resultsApp ? resultsApp : origin)
    .get(pathname + search)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
  return { status: response.status, type: String(response.headers['content-type']), body: response.body as Buffer };
}

describe('examples/server.ts with its own simulated DashScope', () => {
  let example: ExampleApp;
  let savedKey: string | undefined;
  let auth: string;

  beforeAll(async () => {
    savedKey = process.env.DASHSCOPE_API_KEY;
    delete process.env.DASHSCOPE_API_KEY;
    example = await createExampleApp();
    resultsApp = example.app;
    auth = `Bearer ${example.demoKey}`;
  });

  afterAll(async () => {
    await example?.close();
    if (savedKey !== undefined) process.env.DASHSCOPE_API_KEY = savedKey;
  });

  it('started the simulation on loopback', () => {
    expect(example.simulated).toBe(true);
    expect(example.upstreamBaseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
  });

  it("answers the host app's own GET /hello, and serves the playground at /", async () => {
    const response = await request(example.app).get('/hello').expect(200);
    expect(response.body.gateway.openai_base_url).toBe('/v1');
    expect(response.body.hello).toEqual(expect.any(String));
    const page = await request(example.app).get('/').expect(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<title>Image gateway playground</title>');
  });

  it('text-to-image returns the spec §2.4 body, and the URL downloads as a PNG', async () => {
    const response = await request(example.app)
      .post('/v1/images/generations')
      .set('Authorization', auth)
      .send(textToImage('A lighthouse at dawn', { parameters: { size: '1024*768' } }))
      .expect(200);
    expect(response.body).toEqual({
      created: expect.any(Number),
      data: [{ url: expect.stringMatching(DURABLE_PNG_URL), b64_json: '', revised_prompt: '' }],
      extra: { request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) },
    });
    expect(Math.abs(response.body.created - Date.now() / 1000)).toBeLessThan(60);

    const image = await download(response.body.data[0].url as string);
    expect(image.status).toBe(200);
    expect(image.type).toBe('image/png');
    // rendered at most 512 px a side, in the asked 4:3 ratio
    expect(readPngHeader(image.body)).toEqual({ width: 512, height: 384 });
  });

  it('n = 2 returns two different images', async () => {
    const response = await request(example.app)
      .post('/v1/images/generations')
      .set('Authorization', auth)
      .send(textToImage('Two foxes', { parameters: { n: 2 } }))
      .expect(200);
    expect(response.body.data).toHaveLength(2);
    const [first, second] = await Promise.all(response.body.data.map((item: { url: string }) => download(item.url)));
    expect(first!.body.equals(second!.body)).toBe(false);
  });

  it('b64_json returns base64 that decodes to a PNG', async () => {
    const response = await request(example.app)
      .post('/v1/images/generations')
      .set('Authorization', auth)
      .send(textToImage('A red bicycle in the rain', { response_format: 'b64_json' }))
      .expect(200);
    expect(response.body).toEqual({
      created: expect.any(Number),
      data: [{ url: expect.any(String), b64_json: expect.stringMatching(/^[A-Za-z0-9+/]+=*$/), revised_prompt: '' }],
      extra: { request_id: expect.any(String) },
    });
    expect(readPngHeader(Buffer.from(response.body.data[0].b64_json as string, 'base64'))).toEqual({ width: 512, height: 512 });
  });

  it('a different prompt draws a different picture, and an edit looks different again', async () => {
    const generate = async (body: Record<string, unknown>): Promise<Buffer> => {
      const response = await request(example.app).post('/v1/images/generations').set('Authorization', auth).send(body).expect(200);
      return (await download(response.body.data[0].url as string)).body;
    };
    const [cat, dog, catEdit] = await Promise.all([generate(textToImage('a cat')), generate(textToImage('a dog')), generate(edit([SUBJECT_URL], 'a cat'))]);
    expect(cat.equals(dog)).toBe(false);
    expect(cat.equals(catEdit)).toBe(false);
  });

  it('single-image edit with x-image-edit returns 200', async () => {
    const response = await request(example.app)
      .post('/v1/images/generations')
      .set('Authorization', auth)
      .send(edit([SUBJECT_URL], 'Make it a snowy winter day'))
      .expect(200);
    expect(response.body.data).toHaveLength(1);
    expect(readPngHeader((await download(response.body.data[0].url as string)).body)).toEqual({ width: 512, height: 512 });
  });

  it('multi-image edit (3 images) with x-image-edit returns 200', async () => {
    const response = await request(example.app)
      .post('/v1/images/generations')
      .set('Authorization', auth)
      .send(edit([SUBJECT_URL, STYLE_URL, BACKGROUND_URL], 'The subject of image 1 in the style of image 2 on the background of image 3'))
      .expect(200);
    expect(response.body.data).toHaveLength(1);
    expect(response.body.data[0].url).toMatch(DURABLE_PNG_URL);
  });

  it('a wrong key gets 401 with the error object', async () => {
    const response = await request(example.app).post('/v1/images/generations').set('Authorization', 'Bearer sk-not-the-demo-key').send(textToImage('A lighthouse')).expect(401);
    expect(response.body).toEqual({ error: { message: expect.any(String), type: 'authentication_error', code: 'invalid_api_key', param: null } });
    expect(response.body.error.message).not.toContain('sk-not-the-demo-key');
  });

  it('a model that is not x-image-* gets 404', async () => {
    const response = await request(example.app).post('/v1/images/generations').set('Authorization', auth).send({ model: 'dall-e-3', prompt: 'A lighthouse' }).expect(404);
    expect(response.body).toEqual({
      error: { message: expect.stringContaining('dall-e-3'), type: 'invalid_request_error', code: 'model_not_found', param: 'model' },
    });
  });

  it('an upstream rejection (size out of the simulated range) is normalized, not passed through', async () => {
    const response = await request(example.app)
      .post('/v1/images/generations')
      .set('Authorization', auth)
      .send(textToImage('A lighthouse', { parameters: { size: '4096*4096' } }));
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual(expect.objectContaining({ message: expect.any(String), type: 'invalid_request_error', code: expect.any(String) }));
    expect(response.body).not.toHaveProperty('code');
  });
});

describe('examples/server.ts with an explicit dashscopeBaseURL', () => {
  let upstream: SimulatedDashscope;
  let example: ExampleApp;

  beforeAll(async () => {
    upstream = await startSimulatedDashscope();
    example = await createExampleApp({ dashscopeBaseURL: upstream.baseURL, dashscopeApiKey: 'sk-test-upstream' });
    resultsApp = example.app;
  });

  afterAll(async () => {
    await example?.close();
    await upstream?.close();
  });

  it('uses that upstream and starts no simulation of its own', async () => {
    expect(example.simulated).toBe(false);
    expect(example.upstreamBaseURL).toBe(upstream.baseURL);
    const response = await request(example.app).post('/v1/images/generations').set('Authorization', `Bearer ${example.demoKey}`).send(textToImage('A lighthouse')).expect(200);
    expect(upstream.baseURL).not.toContain(new URL(response.body.data[0].url as string).host);
    expect(response.body.data[0].url).toMatch(DURABLE_PNG_URL);
  });

  it("durable results: the simulated upstream's link dies after one download, the example's URL keeps working", async () => {
    // straight to the simulation: its result link answers once, then 404 (a real one lives 24 h)
    const direct = await request(new URL(upstream.baseURL).origin)
      .post('/api/v1/services/aigc/multimodal-generation/generation')
      .set('Authorization', 'Bearer sk-test-upstream')
      .send({ model: 'qwen-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'a kite' }] }] }, parameters: { size: '512*512' } })
      .expect(200);
    const link = direct.body.output.choices[0].message.content[0].image as string;
    expect((await download(link)).status).toBe(200);
    expect((await download(link)).status).toBe(404);
    // through the gateway: the durable URL serves the same picture again and again
    const response = await request(example.app).post('/v1/images/generations').set('Authorization', `Bearer ${example.demoKey}`).send(textToImage('A kite')).expect(200);
    const first = await download(response.body.data[0].url as string);
    const again = await download(response.body.data[0].url as string);
    expect([first.status, again.status, first.type]).toEqual([200, 200, 'image/png']);
    expect(again.body.equals(first.body)).toBe(true);
  });
});

describe('examples/simulated-dashscope.ts speaks upstreams §1.3/§1.4', () => {
  let upstream: SimulatedDashscope;
  const path = '/api/v1/services/aigc/multimodal-generation/generation';
  const body = { model: 'qwen-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'a cat' }] }] } };

  beforeAll(async () => {
    upstream = await startSimulatedDashscope();
  });

  afterAll(async () => {
    await upstream?.close();
  });

  it('answers the captured success shape, with x-request-id equal to request_id', async () => {
    const origin = new URL(upstream.baseURL).origin;
    const response = await request(origin)
      .post(path)
      .set('Authorization', 'Bearer anything')
      .send({ ...body, parameters: { n: 2, size: '1664*928' } })
      .expect(200);
    const choice = { finish_reason: 'stop', message: { role: 'assistant', content: [{ image: expect.stringMatching(/\/images\/[0-9a-f-]{36}\.png$/) }] } };
    expect(response.body).toEqual({
      output: { choices: [choice, choice], task_metric: { TOTAL: 2, SUCCEEDED: 2, FAILED: 0 } },
      usage: { width: 1664, height: 928, image_count: 2 },
      request_id: expect.any(String),
    });
    expect(response.headers['x-request-id']).toBe(response.body.request_id);
  });

  it('a missing key is the captured 401 InvalidApiKey', async () => {
    const response = await request(new URL(upstream.baseURL).origin).post(path).send(body).expect(401);
    expect(response.body).toEqual({ code: 'InvalidApiKey', message: 'Invalid API-key provided.', request_id: expect.any(String) });
  });

  it.each([
    ['no user message', { model: 'qwen-image-2.0', input: { messages: [] } }],
    ['an x size', { ...body, parameters: { size: '1024x1024' } }],
    ['two text items', { model: 'qwen-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'a' }, { text: 'b' }] }] } }],
  ])('%s is a 400 InvalidParameter', async (_name, payload) => {
    const response = await request(new URL(upstream.baseURL).origin).post(path).set('Authorization', 'Bearer anything').send(payload).expect(400);
    expect(response.body).toEqual({ code: 'InvalidParameter', message: expect.any(String), request_id: expect.any(String) });
  });
});

describe('dashscopeModelFor', () => {
  it.each([
    ['x-image-2.0', 'qwen-image-2.0'],
    ['x-image-2.0-pro', 'qwen-image-2.0-pro'],
    ['x-image-2.0-2026-03-03', 'qwen-image-2.0-2026-03-03'],
    ['x-image-max', 'qwen-image-max'],
    ['x-image-plus', 'qwen-image-plus'],
    ['x-image-edit', 'qwen-image-edit-plus'],
    ['x-image-edit-max', 'qwen-image-edit-plus'],
    ['gpt-image-1', undefined],
    ['x-imagefoo', undefined],
  ])('%s -> %s', (model, expected) => {
    expect(dashscopeModelFor(model)).toBe(expected);
  });
});
