// The example simulates every upstream the gateway speaks (docs/getting-started.md): chat and responses
// (through the official openai SDK, streamed), Ark Seedream native images, Volcengine CreateAsset with
// its signature checked, and Ark video tasks that go queued -> running -> succeeded and end with a
// real WebM, delivered to the example's own signed-callback receiver. No vendor key is set for the run.
import { createHash, createHmac } from 'node:crypto';
import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExampleApp, type ExampleApp } from '../../examples/server.js';
import { listen } from '../helpers/gateway-app.js';
import { walkModels, walkStreams } from '../helpers/model-walk.js';

const NO_VENDOR_KEYS = { GATEWAY_DEMO_KEY: 'sk-demo-local-only' };
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const EBML_MAGIC = Buffer.from([0x1a, 0x45, 0xdf, 0xa3]);

async function download(url: string): Promise<{ status: number; type: string; body: Buffer }> {
  const response = await fetch(url);
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: Buffer.from(await response.arrayBuffer()) };
}

/** Polls a task through the gateway until it is terminal; records each status seen, in order. */
async function followTask(app: ExampleApp['app'] | string, auth: string, id: string): Promise<{ statuses: string[]; task: Record<string, unknown> }> {
  const statuses: string[] = [];
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const response = await request(app).get(`/api/v3/contents/generations/tasks/${id}`).set('Authorization', auth).expect(200);
    const status = String(response.body.status);
    if (statuses.at(-1) !== status) statuses.push(status);
    if (['succeeded', 'failed', 'expired', 'cancelled'].includes(status)) return { statuses, task: response.body as Record<string, unknown> };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`task ${id} did not end within 30 s; saw ${statuses.join(' -> ')}`);
}

describe('the example with no vendor key simulates every upstream', () => {
  let example: ExampleApp;
  let server: { url: string; close(): Promise<void> };
  let auth: string;

  beforeAll(async () => {
    example = await createExampleApp({ env: NO_VENDOR_KEYS, host: '127.0.0.1' });
    server = await listen(example.app);
    auth = `Bearer ${example.demoKey}`;
  });

  afterAll(async () => {
    await server?.close();
    await example?.close();
  });

  it('reports every vendor as simulated, on loopback', () => {
    for (const info of Object.values(example.upstreams)) {
      expect(info.simulated).toBe(true);
      expect(info.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
    }
  });

  it('GET /v1/models lists every model of the example, in the OpenAI shape', async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: example.demoKey });
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual([
      'x-image-2.0',
      'x-image-2.0-pro',
      'x-image-max',
      'x-image-plus',
      'x-image-edit',
      'x-seedream',
      'x-gpt-image',
      'x-gemini-image',
      'x-flux',
      'x-flux-schnell',
      'x-video',
      'x-veo',
      'x-kling',
      'x-kling-replicate',
      'x-chat',
    ]);
  });

  // these wait on the simulated vendors' own time (queues, predictions, operations, video renders),
  // each on work of its own, so they run side by side
  it.concurrent('GET /v1/models describes every model with working endpoints: each listed pair answers a minimal request', async () => {
    const { models, pairs, failures } = await walkModels(example.app, example.demoKey);
    expect(failures).toEqual([]);
    expect(Object.fromEntries(models.map((model) => [model.id, model.endpoints]))).toEqual({
      'x-image-2.0': ['/v1/images/generations', '/v1/images/edits'],
      'x-image-2.0-pro': ['/v1/images/generations', '/v1/images/edits'],
      'x-image-max': ['/v1/images/generations'],
      'x-image-plus': ['/v1/images/generations'],
      'x-image-edit': ['/v1/images/edits'],
      'x-seedream': ['/v1/images/generations', '/v1/images/edits', '/api/v3/images/generations'],
      'x-gpt-image': ['/v1/images/generations', '/v1/images/edits'],
      'x-gemini-image': ['/v1/images/generations', '/v1/images/edits'],
      'x-flux': ['/v1/images/generations'],
      'x-flux-schnell': ['/v1/images/generations'],
      'x-video': ['/api/v3/contents/generations/tasks', '/v1/videos'],
      'x-veo': ['/api/v3/contents/generations/tasks', '/v1/videos'],
      'x-kling': ['/api/v3/contents/generations/tasks', '/v1/videos'],
      'x-kling-replicate': ['/api/v3/contents/generations/tasks', '/v1/videos'],
      'x-chat': ['/v1/chat/completions', '/v1/responses'],
    });
    expect(pairs).toBe(26);
  });

  it.concurrent('GET /v1/models says streams: true exactly where stream: true answers a stream: every listed model, stream true and false', async () => {
    const { asked, failures } = await walkStreams(example.app, example.demoKey);
    expect(failures).toEqual([]);
    // the image models on generations and x-chat on chat completions
    expect(asked).toBe(11);
  });

  it.concurrent('gpt-image on the simulated Azure OpenAI resource: a generation, an upload edit and a stream through the official SDK; its content filter is a 400', async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: example.demoKey });
    const generated = await client.images.generate({ model: 'x-gpt-image', prompt: 'A lighthouse at dawn', size: '1536x1024', n: 2 });
    expect(generated.data).toHaveLength(2);
    for (const image of generated.data ?? []) expect(Buffer.from(image.b64_json ?? '', 'base64').subarray(0, 8)).toEqual(PNG_SIGNATURE);
    const upload = await OpenAI.toFile(Buffer.from(generated.data![0]!.b64_json!, 'base64'), 'lighthouse.png', { type: 'image/png' });
    const edited = await client.images.edit({ model: 'x-gpt-image', image: upload, prompt: 'Add a boat' });
    expect(Buffer.from(edited.data?.[0]?.b64_json ?? '', 'base64').subarray(0, 8)).toEqual(PNG_SIGNATURE);
    const stream = await client.images.generate({ model: 'x-gpt-image', prompt: 'A lighthouse at dusk', stream: true, partial_images: 1 });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(['image_generation.partial_image', 'image_generation.completed']);
    const refused = await client.images.generate({ model: 'x-gpt-image', prompt: 'trip the content filter' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('content_policy_violation');
  });

  it.concurrent('Gemini, fal and Replicate images through the official SDK: PNGs at durable URLs, n images each', async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: example.demoKey });
    const answers = await Promise.all(['x-gemini-image', 'x-flux', 'x-flux-schnell'].map((model) => client.images.generate({ model, prompt: 'A lighthouse at dawn', size: '1024x1024', n: 2 })));
    for (const answer of answers) {
      expect(answer.data).toHaveLength(2);
      for (const image of answer.data ?? []) {
        expect(image.url).toMatch(/\/v1\/results\//);
        const file = await download(image.url!);
        expect(file.body.subarray(0, 8)).toEqual(PNG_SIGNATURE);
      }
    }
  });

  it.concurrent('Veo, fal and Replicate video tasks go to succeeded, each with a playable WebM kept by the gateway', async () => {
    const created = await Promise.all(
      ['x-veo', 'x-kling', 'x-kling-replicate'].map((model) =>
        // through the listening server: the kept video's URL is signed for the base the request came in on
        request(server.url)
          .post('/api/v3/contents/generations/tasks')
          .set('Authorization', auth)
          // a length each model makes (Veo 3: 4, 6 or 8 s; Kling: 5 or 10 s)
          .send({ model, content: [{ type: 'text', text: 'A cat on a skateboard' }], duration: model === 'x-veo' ? 6 : 5 })
          .expect(200),
      ),
    );
    const ended = await Promise.all(created.map((response) => followTask(server.url, auth, String(response.body.id))));
    for (const { statuses, task } of ended) {
      expect(statuses.at(-1)).toBe('succeeded');
      const video = await download(String((task.content as { video_url: string }).video_url));
      expect(video.status).toBe(200);
      expect(video.body.subarray(0, 4)).toEqual(EBML_MAGIC);
    }
  });

  it.concurrent("OpenAI's videos API through the official SDK: create, retrieve until completed, downloadContent, on every simulated video vendor", async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: example.demoKey });
    const asks = [
      { model: 'x-veo', seconds: '8', size: '1280x720' },
      { model: 'x-kling', seconds: '5', size: '720x1280' },
      { model: 'x-kling-replicate', seconds: '10', size: '1280x720' },
      { model: 'x-video', seconds: '5', size: '1920x1080' },
    ] as const;
    await Promise.all(
      asks.map(async (ask) => {
        let video = await client.videos.create({ ...ask, prompt: 'A cat on a skateboard', seconds: ask.seconds as OpenAI.Videos.VideoSeconds, size: ask.size as OpenAI.Videos.VideoSize });
        const deadline = Date.now() + 30_000;
        while ((video.status === 'queued' || video.status === 'in_progress') && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          video = await client.videos.retrieve(video.id);
        }
        expect(video, ask.model).toMatchObject({ model: ask.model, status: 'completed', seconds: ask.seconds, size: ask.size, error: null });
        const content = await client.videos.downloadContent(video.id);
        expect(Buffer.from(await content.arrayBuffer()).subarray(0, 4), ask.model).toEqual(EBML_MAGIC);
      }),
    );
  });

  it.concurrent('a video task moves queued -> running -> succeeded, ends with a playable WebM, and every state is called back signed', async () => {
    const asset = await request(example.app)
      .post('/api/v3/open/CreateAsset')
      .set('Authorization', auth)
      .send({ GroupId: 'group-1', URL: 'https://example.com/cat.png', AssetType: 'Image' })
      .expect(200);
    const base = new URL(server.url);
    const created = await request(example.app)
      .post('/api/v3/contents/generations/tasks')
      .set('Authorization', auth)
      .send({
        model: 'x-video',
        content: [
          { type: 'text', text: 'A cat on a skateboard' },
          { type: 'image_url', image_url: { url: `asset://${asset.body.Result.Id as string}` }, role: 'reference_image' },
        ],
        callback_url: `http://127.0.0.1:${base.port}/hooks/video`,
      })
      .expect(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^task_/) });

    const { statuses, task } = await followTask(example.app, auth, created.body.id as string);
    expect(statuses.at(-1)).toBe('succeeded');
    // the simulation's clock: every state is seen in order, never backwards
    expect(['queued', 'running', 'succeeded'].filter((status) => statuses.includes(status))).toEqual(statuses);
    expect(task).toEqual(
      expect.objectContaining({
        id: created.body.id,
        model: 'x-video',
        status: 'succeeded',
        content: { video_url: expect.stringMatching(/\/v1\/results\/[a-f0-9]{32}\/[A-Za-z0-9_-]{22}\.webm\?expires=/) },
      }),
    );
    // durable results: a signed URL of the example itself (made for supertest's server, fetched from the listening one)
    const durable = new URL((task.content as { video_url: string }).video_url);
    const video = await download(`${server.url}${durable.pathname}${durable.search}`);
    expect(video.type).toBe('video/webm');
    expect(video.body.subarray(0, 4).equals(EBML_MAGIC)).toBe(true);

    // the example's receiver verified the Standard Webhooks signature of each delivery
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && !example.callbacks.deliveries.some((delivery) => delivery.taskId === created.body.id && delivery.status === 'succeeded')) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const mine = example.callbacks.deliveries.filter((delivery) => delivery.taskId === created.body.id);
    expect(mine.map((delivery) => delivery.status)).toContain('succeeded');
    expect(mine.every((delivery) => delivery.webhookId.startsWith('evt_'))).toBe(true);
  });

  it('chat completions work through the official SDK, plain and streamed', async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: example.demoKey });
    const plain = await client.chat.completions.create({ model: 'x-chat', messages: [{ role: 'user', content: 'Hello there' }] });
    expect(plain.choices[0]?.message.content).toContain('You said "Hello there"');
    const stream = await client.chat.completions.create({ model: 'x-chat', stream: true, messages: [{ role: 'user', content: 'Stream me' }] });
    let text = '';
    let chunks = 0;
    for await (const chunk of stream) {
      chunks += 1;
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(chunks).toBeGreaterThan(3);
    expect(text).toContain('You said "Stream me"');
  });

  it('responses work through the official SDK, plain and streamed', async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: example.demoKey });
    const plain = await client.responses.create({ model: 'x-chat', input: 'a haiku' });
    expect(plain.output_text).toContain('You said "a haiku"');
    const stream = await client.responses.create({ model: 'x-chat', input: 'streamed haiku', stream: true });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(text).toContain('You said "streamed haiku"');
  });

  it('Ark Seedream native images answer the §2.7 body with a URL that downloads as a PNG', async () => {
    const response = await request(example.app)
      .post('/api/v3/images/generations')
      .set('Authorization', auth)
      .send({ model: 'x-seedream', prompt: 'A paper boat', size: '2K', watermark: false })
      .expect(200);
    expect(response.body).toEqual({
      model: 'doubao-seedream-4-0-250828',
      created: expect.any(Number),
      data: [{ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/images\/[0-9a-f-]{36}\.png$/), size: '2048x2048' }],
      usage: { generated_images: 1, output_tokens: 16280, total_tokens: 16280 },
    });
    const image = await download(response.body.data[0].url as string);
    expect(image.type).toBe('image/png');
    expect(image.body.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  });

  it('a Seedream size with DashScope\'s "*" is the upstream\'s 400, normalized', async () => {
    const response = await request(example.app).post('/api/v3/images/generations').set('Authorization', auth).send({ model: 'x-seedream', prompt: 'x', size: '2048*2048' });
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual(expect.objectContaining({ type: 'invalid_request_error', code: 'invalid_request_error', message: expect.stringContaining('size') }));
  });

  it('CreateAsset goes out AK/SK-signed, and the simulation checks that signature', async () => {
    const created = await request(example.app)
      .post('/api/v3/open/CreateAsset')
      .set('Authorization', auth)
      .send({ GroupId: 'group-20260320120601-hsw4s', URL: 'https://example.com/cat.png', AssetType: 'Image', Name: 'cat' })
      .expect(200);
    expect(created.body).toEqual({
      ResponseMetadata: { RequestId: expect.any(String), Action: 'CreateAsset', Version: '2024-01-01', Service: 'ark', Region: 'cn-beijing' },
      Result: { Id: expect.stringMatching(/^asset-\d{14}-[0-9a-f]{5}$/) },
    });

    // the same call signed with a wrong secret, straight to the simulation: refused as upstream would
    const origin = example.upstreams.volcengine.baseURL;
    const body = JSON.stringify({ GroupId: 'g', URL: 'https://example.com/a.png', AssetType: 'Image' });
    const xDate = new Date()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z')
      .replace(/[-:]/g, '');
    const bodyHash = createHash('sha256').update(body).digest('hex');
    const forged = createHmac('sha256', 'not-the-secret').update(body).digest('hex');
    const refused = await fetch(`${origin}/?Action=CreateAsset&Version=2024-01-01`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-date': xDate,
        'x-content-sha256': bodyHash,
        authorization: `HMAC-SHA256 Credential=AKLTsimulated/${xDate.slice(0, 8)}/cn-beijing/ark/request, SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=${forged}`,
      },
      body,
    });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { ResponseMetadata: { Error: { Code: string } } }).ResponseMetadata.Error.Code).toBe('SignatureDoesNotMatch');
  });

  it('the callback receiver refuses a delivery whose signature does not verify', async () => {
    const before = example.callbacks.deliveries.length;
    const response = await request(example.app)
      .post('/hooks/video')
      .set('webhook-id', 'evt_forged')
      .set('webhook-timestamp', String(Math.floor(Date.now() / 1000)))
      .set('webhook-signature', 'v1,Zm9yZ2Vk')
      .set('content-type', 'application/json')
      .send('{"id":"task_x","status":"succeeded"}');
    expect(response.status).toBe(400);
    expect(example.callbacks.deliveries).toHaveLength(before);
  });
});

describe('the example on a non-loopback HOST', () => {
  it('turns local callbacks off, so the gateway is no way into the private network', async () => {
    const example = await createExampleApp({ env: NO_VENDOR_KEYS, host: '0.0.0.0' });
    try {
      expect(example.localCallbacks).toBe(false);
      const response = await request(example.app)
        .post('/api/v3/contents/generations/tasks')
        .set('Authorization', `Bearer ${example.demoKey}`)
        .send({ model: 'x-video', content: [{ type: 'text', text: 'x' }], callback_url: 'http://127.0.0.1:9/hooks/video' });
      expect(response.status).toBe(400);
      expect(response.body.error.param).toBe('callback_url');
    } finally {
      await example.close();
    }
  });
});
