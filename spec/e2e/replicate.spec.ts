// Replicate behind the OpenAI image routes and the video task route (docs/providers/replicate.md), read by
// the official openai SDK: predictions created with `Prefer: wait` and read by id until they end, the
// field mapping of each family, `n` as `num_outputs` or as n predictions charged per image delivered,
// each class of Replicate error, result storage for the one-hour URLs, image tasks and video tasks.
// The fake counts the predictions it creates (the paid work).
import OpenAI, { toFile } from 'openai';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { modelEntry } from '../../lib/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { localResultStorage } from '../../lib/storage.js';
import { REPLICATE_TOKEN, SAMPLE_VIDEO, startFakeReplicate } from '../helpers/fake-replicate.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_JPEG, TINY_PNG } from '../helpers/images.js';
import { quotaUsed } from '../helpers/paid-work.js';
import { imageTaskEnded } from '../helpers/image-task-ended.js';
import { failureOf } from '../helpers/sdk-failure.js';

const SCHNELL = 'black-forest-labs/flux-schnell';
const NANO = 'google/nano-banana';
const KONTEXT = 'black-forest-labs/flux-kontext-pro';
const KLING = 'kwaivgi/kling-v2.1';
const TASKS = '/api/v3/contents/generations/tasks';
const NSFW = 'NSFW content detected. Try running it again, or try a different prompt.';

const storageOptions = (): ReturnType<typeof localResultStorage> => localResultStorage({ directory: tempDir('replicate-results-'), secret: 'replicate-results-secret-0123456789' });

const gw = await gatewayWith({
  fakes: { replicate: startFakeReplicate },
  resolve: ({ model }, { replicate }) => {
    if (model === 'flux-wrong-key') return { provider: 'replicate', baseURL: replicate.baseURL, apiKey: 'r8_not-the-token', model: SCHNELL };
    // two upstreams: the fallback rule may try the second only when the first certainly started nothing
    if (model === 'flux-with-fallback')
      return [
        { provider: 'replicate', baseURL: replicate.baseURL, apiKey: REPLICATE_TOKEN, model: NANO },
        { provider: 'replicate', baseURL: replicate.baseURL, apiKey: REPLICATE_TOKEN, model: NANO },
      ];
    if (model === 'flux-bare-origin') return { provider: 'replicate', baseURL: replicate.origin, apiKey: REPLICATE_TOKEN, model: SCHNELL };
    if (model === 'flux-versioned')
      return { provider: 'replicate', baseURL: replicate.baseURL, apiKey: REPLICATE_TOKEN, model: `${SCHNELL}:5599ed30703defd1d160a25a63321b4dec97101d98b4674bcc56e41f62f35637` };
    return { provider: 'replicate', baseURL: replicate.baseURL, apiKey: REPLICATE_TOKEN, model };
  },
  models: { catalogue: [...['flux-wrong-key', 'flux-bare-origin', 'flux-versioned'].map((id) => ({ ...modelEntry(SCHNELL)!, id })), { ...modelEntry(NANO)!, id: 'flux-with-fallback' }] },
  tenancy: { quotas: { limits: { imagesPerMinute: 100_000 } } },
  callbacks: { pollIntervalsMs: { image: [1000] } },
  resetEach: true,
});
const { replicate } = gw.fakes;
const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });

const inputOf = (index = 0): Record<string, unknown> => (replicate.creates()[index]!.json as { input: Record<string, unknown> }).input;

describe('text to image', () => {
  it('creates one prediction with Prefer: wait and the bearer token, and answers the image as b64_json', async () => {
    const created = replicate.created();
    const result = await client.images.generate({ model: SCHNELL, prompt: 'a paper crane', size: '1536x1024', response_format: 'b64_json' });
    expect(result.data).toHaveLength(1);
    expect(Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64').equals(TINY_PNG)).toBe(true);
    const [sent] = replicate.creates();
    expect(sent!.path).toBe(`/v1/models/${SCHNELL}/predictions`);
    expect(sent!.headers.authorization).toBe(`Bearer ${REPLICATE_TOKEN}`);
    expect(sent!.headers.prefer).toMatch(/^wait=([1-9]|[1-5]\d|60)$/);
    expect(sent!.json).toEqual({ input: { prompt: 'a paper crane', aspect_ratio: '3:2' } });
    expect(replicate.created() - created).toBe(1);
    // the answer came within the wait: nothing was polled
    expect(replicate.polls()).toHaveLength(0);
  });

  it("a url request without storage answers Replicate's own URL (deleted by Replicate after an hour)", async () => {
    const result = await client.images.generate({ model: NANO, prompt: 'a lighthouse' });
    expect(result.data?.[0]?.url).toMatch(new RegExp(`^${replicate.origin}/files/rp\\w+-0\\.png$`));
  });

  it('a url request with storage answers a URL of the gateway that serves the bytes', async () => {
    const stored = await gatewayWith({
      fakes: { replicate: startFakeReplicate },
      resolve: ({ model }, fakes) => ({ provider: 'replicate', baseURL: fakes.replicate.baseURL, apiKey: REPLICATE_TOKEN, model }),
      storage: storageOptions(),
    });
    const res = await request(stored.url).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: NANO, prompt: 'a harbour' });
    expect(res.status).toBe(200);
    const url = String(res.body.data[0].url);
    expect(url.startsWith(stored.url)).toBe(true);
    const image = await fetch(url);
    expect(Buffer.from(await image.arrayBuffer()).equals(TINY_PNG)).toBe(true);
  });

  it("passes the family's own fields, seed and a ratio size; a versioned id uses POST /predictions with the version", async () => {
    await client.images.generate({ model: SCHNELL, prompt: 'a fox', size: '1024x1024', ...({ output_format: 'webp', go_fast: true, parameters: { seed: 42 } } as object) });
    expect(inputOf()).toEqual({ prompt: 'a fox', aspect_ratio: '1:1', output_format: 'webp', go_fast: true, seed: 42 });
    await client.images.generate({ model: 'flux-versioned', prompt: 'a fox' });
    const versioned = replicate.creates()[1]!;
    expect(versioned.path).toBe('/v1/predictions');
    expect(versioned.json).toEqual({ version: '5599ed30703defd1d160a25a63321b4dec97101d98b4674bcc56e41f62f35637', input: { prompt: 'a fox' } });
  });

  it('a bare-origin baseURL gets /v1', async () => {
    await client.images.generate({ model: 'flux-bare-origin', prompt: 'x' });
    expect(replicate.creates()[0]!.path).toBe(`/v1/models/${SCHNELL}/predictions`);
  });

  it.each([
    ['a size with no FLUX ratio', { size: '3000x1000' }, 'size'],
    ['a field FLUX schnell does not take', { safety_tolerance: 2 }, 'safety_tolerance'],
    ['a field no family takes', { quality: 'high' }, 'quality'],
    ['a contract parameter Replicate has nothing for', { parameters: { watermark: true } }, 'parameters.watermark'],
    ['more images than num_outputs makes', { n: 5 }, 'parameters.n'],
  ])('%s is a 400 naming it, and Replicate is not called', async (_name, extra, param) => {
    const charged = await quotaUsed(gw.router, 'images');
    const res = await request(gw.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: SCHNELL, prompt: 'x', ...extra });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe(param);
    expect(replicate.created()).toBe(0);
    expect(await quotaUsed(gw.router, 'images')).toBe(charged);
  });

  it('nano-banana takes no seed: a 400 naming parameters.seed, before any call', async () => {
    const res = await request(gw.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: NANO, prompt: 'x', parameters: { seed: 7 } });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('parameters.seed');
    expect(replicate.apiRequests()).toHaveLength(0);
  });
});

describe('edits', () => {
  it('nano-banana gets the uploaded files as a list of Data URLs in image_input', async () => {
    const images = [await toFile(TINY_PNG, 'a.png', { type: 'image/png' }), await toFile(TINY_JPEG, 'b.jpg', { type: 'image/jpeg' })];
    const result = await client.images.edit({ model: NANO, image: images, prompt: 'put them side by side', size: '1024x1536', response_format: 'b64_json' });
    expect(Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64').equals(TINY_PNG)).toBe(true);
    expect(inputOf()).toEqual({
      prompt: 'put them side by side',
      aspect_ratio: '2:3',
      image_input: [`data:image/png;base64,${TINY_PNG.toString('base64')}`, `data:image/jpeg;base64,${TINY_JPEG.toString('base64')}`],
    });
  });

  it('FLUX Kontext gets one image as input_image; a second one is a 400 before any call', async () => {
    await client.images.edit({ model: KONTEXT, image: await toFile(TINY_PNG, 'a.png', { type: 'image/png' }), prompt: 'make it snow', ...({ aspect_ratio: undefined } as object) });
    expect(inputOf()).toEqual({ prompt: 'make it snow', input_image: `data:image/png;base64,${TINY_PNG.toString('base64')}` });
    const error = await failureOf(
      client.images.edit({ model: KONTEXT, image: [await toFile(TINY_PNG, 'a.png', { type: 'image/png' }), await toFile(TINY_PNG, 'b.png', { type: 'image/png' })], prompt: 'x' }),
    );
    expect(error.status).toBe(400);
    expect(replicate.created()).toBe(1);
  });
  it('a Data URL and an https URL of the contract shape go to image_input as they are', async () => {
    const dataUrl = `data:image/jpeg;base64,${TINY_JPEG.toString('base64')}`;
    const res = await request(gw.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: NANO, input: { messages: [{ role: 'user', content: [{ text: 'blend them' }, { image: dataUrl }, { image: 'https://images.example.com/subject.png' }] }] } });
    expect(res.status, res.text).toBe(200);
    expect(inputOf()).toEqual({ prompt: 'blend them', image_input: [dataUrl, 'https://images.example.com/subject.png'] });
  });
});

describe('n', () => {
  it('FLUX schnell makes n images in one prediction (num_outputs), charged n', async () => {
    const charged = await quotaUsed(gw.router, 'images');
    const result = await client.images.generate({ model: SCHNELL, prompt: 'three cats', n: 3, response_format: 'b64_json' });
    expect(result.data).toHaveLength(3);
    expect(replicate.created()).toBe(1);
    expect(inputOf().num_outputs).toBe(3);
    expect((await quotaUsed(gw.router, 'images')) - charged).toBe(3);
  });

  it('nano-banana has no num_outputs: n predictions, n images, charged n', async () => {
    const [charged, created] = [await quotaUsed(gw.router, 'images'), replicate.created()];
    const result = await client.images.generate({ model: NANO, prompt: 'three cats', n: 3, response_format: 'b64_json' });
    expect(result.data).toHaveLength(3);
    expect(replicate.created() - created).toBe(3);
    for (const sent of replicate.creates()) expect(JSON.stringify(sent.json)).not.toContain('num_outputs');
    expect((await quotaUsed(gw.router, 'images')) - charged).toBe(3);
    await vi.waitFor(() => expect(gw.usage.at(-1)?.images).toBe(3));
  });

  it('when one of three predictions fails, the two images made are answered and charged', async () => {
    const [charged, created] = [await quotaUsed(gw.router, 'images'), replicate.created()];
    replicate.outcomes.push({}, { fail: 'CUDA out of memory' }, {});
    const result = await client.images.generate({ model: NANO, prompt: 'three cats', n: 3, response_format: 'b64_json' });
    expect(result.data).toHaveLength(2);
    expect(replicate.created() - created).toBe(3);
    expect((await quotaUsed(gw.router, 'images')) - charged).toBe(2);
  });
});

describe('polling', () => {
  it('a prediction still running after the wait is read by id on the operator base until it succeeds (never at the URL Replicate names)', async () => {
    replicate.settings.waitCapMs = 0;
    const release = replicate.hold();
    try {
      const answer = client.images.generate({ model: NANO, prompt: 'slow', response_format: 'b64_json' });
      await vi.waitFor(() => expect(replicate.created()).toBe(1));
      release();
      const result = await answer;
      expect(Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64').equals(TINY_PNG)).toBe(true);
      const id = [...replicate.predictions.values()].find((made) => made.request === replicate.creates()[0])!.id;
      expect(replicate.polls().map((poll) => poll.path)).toContain(`/v1/predictions/${id}`);
      expect(replicate.polls()[0]!.headers.authorization).toBe(`Bearer ${REPLICATE_TOKEN}`);
    } finally {
      release();
      replicate.settings.waitCapMs = undefined;
    }
  });

  it('a poll fails once: the poll is made again, and one prediction was created', async () => {
    replicate.settings.waitCapMs = 0;
    const release = replicate.hold();
    try {
      replicate.failNextPoll(503);
      const answer = client.images.generate({ model: NANO, prompt: 'slow', response_format: 'b64_json' });
      await vi.waitFor(() => expect(replicate.polls().length).toBeGreaterThan(0), { timeout: 5_000 });
      release();
      const result = await answer;
      expect(result.data).toHaveLength(1);
      expect(replicate.created()).toBe(1);
      expect(replicate.polls().length).toBeGreaterThanOrEqual(2);
    } finally {
      release();
      replicate.settings.waitCapMs = undefined;
    }
  });
  it('a read refused after the create (the token refused mid-way) is an error of started work: no other upstream creates it again', async () => {
    replicate.settings.waitCapMs = 0;
    const release = replicate.hold();
    try {
      replicate.failNextPoll(401);
      // one request (the SDK would retry a 502 by itself)
      const answer = request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'flux-with-fallback', prompt: 'slow' });
      const res = await answer;
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('upstream_auth_failed');
      expect(replicate.created()).toBe(1);
      // the prediction nobody will read is canceled
      await vi.waitFor(() => expect(replicate.requests.some((sent) => sent.method === 'POST' && sent.path.endsWith('/cancel'))).toBe(true));
    } finally {
      release();
      replicate.settings.waitCapMs = undefined;
    }
  });
});

describe('Replicate errors', () => {
  it("a token Replicate refuses (401) is the operator's 502, never the caller's 401", async () => {
    const error = await failureOf(client.images.generate({ model: 'flux-wrong-key', prompt: 'x' }));
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_auth_failed');
    expect(error.message).not.toContain('r8_not-the-token');
  });

  it('422 input validation is a 400 naming the field', async () => {
    replicate.next((_req, res) => {
      const body = JSON.stringify({
        title: 'Input validation failed',
        detail: '- input.output_quality: Must be less than or equal to 100',
        status: 422,
        invalid_fields: [{ type: 'less_than_equal', field: 'input.output_quality', description: 'Must be less than or equal to 100' }],
      });
      res.writeHead(422, { 'content-type': 'application/problem+json' }).end(body);
    });
    const error = await failureOf(client.images.generate({ model: SCHNELL, prompt: 'x', ...({ output_quality: 101 } as object) }));
    expect(error.status).toBe(400);
    expect(error.param).toBe('output_quality');
    expect(error.message).toContain('Must be less than or equal to 100');
  });

  it('429 is a 429 with the Retry-After Replicate sent', async () => {
    replicate.next((_req, res) => {
      res
        .writeHead(429, { 'content-type': 'application/problem+json', 'retry-after': '17' })
        .end(JSON.stringify({ title: 'Request was throttled.', detail: 'Request was throttled. Expected available in 17 seconds.', status: 429 }));
    });
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: SCHNELL, prompt: 'x' });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('rate_limit_exceeded');
    expect(res.headers['retry-after']).toBe('17');
  });

  it('a prediction failed by the safety checker is a 400 content_policy_violation', async () => {
    replicate.outcomes.push({ fail: NSFW });
    const error = await failureOf(client.images.generate({ model: SCHNELL, prompt: 'x' }));
    expect(error.status).toBe(400);
    expect(error.code).toBe('content_policy_violation');
    expect(error.message).toContain('NSFW content detected');
  });

  it('any other failed prediction is a 502 upstream_error; a success without output a 502 too', async () => {
    replicate.outcomes.push({ fail: 'CUDA out of memory' });
    const failed = await failureOf(client.images.generate({ model: SCHNELL, prompt: 'x' }));
    expect(failed.status).toBe(502);
    expect(failed.code).toBe('upstream_error');
    replicate.outcomes.push({ empty: true });
    const empty = await failureOf(client.images.generate({ model: SCHNELL, prompt: 'x' }));
    expect(empty.status).toBe(502);
  });

  it('a 500 on create is a 502 upstream_error; an unreadable answer a 502 as well', async () => {
    replicate.next((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"detail":"Internal server error"}');
    });
    const error = await failureOf(client.images.generate({ model: SCHNELL, prompt: 'x' }));
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_error');
  });
});

describe('image tasks', () => {
  it('Prefer: respond-async creates the prediction without waiting and the task follows it by id to its image', async () => {
    const stored = await gatewayWith({
      fakes: { replicate: startFakeReplicate },
      resolve: ({ model }, fakes) => ({ provider: 'replicate', baseURL: fakes.replicate.baseURL, apiKey: REPLICATE_TOKEN, model }),
      storage: storageOptions(),
      callbacks: { pollIntervalsMs: { image: [1000] } },
    });
    const submitted = await request(stored.url).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Prefer', 'respond-async').send({ model: KONTEXT, prompt: 'a harbour' });
    expect(submitted.status).toBe(202);
    const task = await imageTaskEnded(stored.url, String(submitted.body.id), KEY_A);
    expect(task.status).toBe('succeeded');
    const creates = stored.fakes.replicate.creates();
    expect(creates).toHaveLength(1);
    expect(creates[0]!.headers.prefer).toBeUndefined();
    const url = String((task.result as { data: Array<{ url: string }> }).data[0]!.url);
    expect(url.startsWith(stored.url)).toBe(true);
    expect(Buffer.from(await (await fetch(url)).arrayBuffer()).equals(TINY_PNG)).toBe(true);
  });
});

describe('video tasks', () => {
  const createTask = (body: Record<string, unknown>) => request(gw.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).send(body);
  const readTask = (id: string) => request(gw.app).get(`${TASKS}/${id}`).set('Authorization', `Bearer ${KEY_A}`);

  it("creates a prediction of the video model from Ark's task body and answers Ark's task shape with a downloadable video_url", async () => {
    const created = await createTask({
      model: KLING,
      content: [
        { type: 'text', text: 'a cat on a skateboard' },
        { type: 'image_url', image_url: { url: 'https://images.example.com/cat.png' }, role: 'first_frame' },
      ],
      ratio: '16:9',
      duration: 5,
    });
    expect(created.status, created.text).toBe(200);
    const id = String(created.body.id);
    expect(id).toMatch(/^task_/);
    const [sent] = replicate.creates();
    expect(sent!.path).toBe(`/v1/models/${KLING}/predictions`);
    expect(sent!.headers.prefer).toBeUndefined();
    expect(sent!.json).toEqual({ input: { prompt: 'a cat on a skateboard', start_image: 'https://images.example.com/cat.png', aspect_ratio: '16:9', duration: 5 } });
    let task: Record<string, unknown> = {};
    await expect
      .poll(
        async () => {
          task = (await readTask(id)).body as Record<string, unknown>;
          return task.status;
        },
        { timeout: 10_000, interval: 50 },
      )
      .toBe('succeeded');
    expect(task).toMatchObject({ id, model: KLING, status: 'succeeded', duration: 5, ratio: '16:9' });
    const video = await fetch((task.content as { video_url: string }).video_url);
    expect(Buffer.from(await video.arrayBuffer()).equals(SAMPLE_VIDEO)).toBe(true);
    expect(replicate.created()).toBe(1);
  });

  it('a failed prediction is a failed task with its error; a field the family does not take is a 400 before any call', async () => {
    replicate.outcomes.push({ fail: 'The input image could not be processed' });
    const created = await createTask({ model: KLING, content: [{ type: 'text', text: 'x' }] });
    const id = String(created.body.id);
    let task: Record<string, unknown> = {};
    await expect
      .poll(
        async () => {
          task = (await readTask(id)).body as Record<string, unknown>;
          return task.status;
        },
        { timeout: 10_000, interval: 50 },
      )
      .toBe('failed');
    expect((task.error as { code: string }).code).toBe('upstream_error');
    const refused = await createTask({ model: KLING, content: [{ type: 'text', text: 'x' }], camera_fixed: true });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe('camera_fixed');
    expect(replicate.created()).toBe(1);
  });

  it('with storage, the video is copied and served by the gateway', async () => {
    const stored = await gatewayWith({
      fakes: { replicate: startFakeReplicate },
      resolve: ({ model }, fakes) => ({ provider: 'replicate', baseURL: fakes.replicate.baseURL, apiKey: REPLICATE_TOKEN, model }),
      storage: storageOptions(),
    });
    const created = await request(stored.url)
      .post(TASKS)
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'minimax/video-01', content: [{ type: 'text', text: 'waves' }] });
    expect(created.status).toBe(200);
    let task: Record<string, unknown> = {};
    await expect
      .poll(
        async () => {
          task = (
            await request(stored.url)
              .get(`${TASKS}/${String(created.body.id)}`)
              .set('Authorization', `Bearer ${KEY_A}`)
          ).body as Record<string, unknown>;
          return task.status;
        },
        { timeout: 10_000, interval: 50 },
      )
      .toBe('succeeded');
    const url = (task.content as { video_url: string }).video_url;
    expect(url.startsWith(stored.url)).toBe(true);
    expect(Buffer.from(await (await fetch(url)).arrayBuffer()).equals(SAMPLE_VIDEO)).toBe(true);
  });
});
