// fal.ai behind the OpenAI image routes and Ark's video task route (docs/providers/fal.md), read by the
// official openai SDK: a queue request submitted once, polled, its result read from the app id's URLs
// (never the URLs fal answered with), b64_json and stored URLs, an edit upload as a Data URL, `n` as
// num_images, each class of fal error, an image task that a second instance finishes after the
// first was closed, a video task, and a failed status poll that does not submit the work again.
import OpenAI, { toFile } from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { type JobScheduler, memoryScheduler, memoryTaskStore } from '../../lib/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { localResultStorage } from '../../lib/storage.js';
import { FAKE_VIDEO, FAL_KEY, falError, startFakeFal } from '../helpers/fake-fal.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A, createTestGateway } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';
import { failureOf } from '../helpers/sdk-failure.js';
import { skippingPauses } from '../helpers/skipping-pauses.js';

const gw = await gatewayWith({
  fakes: { fal: startFakeFal },
  resolve: ({ model }, { fal }) => {
    if (model === 'fal-ai/flux/schnell') return { provider: 'fal', baseURL: fal.origin, apiKey: 'not-the-key', model };
    // a short deadline, for the request that is still queued when it passes
    if (model === 'fal-ai/flux-pro/v1.1') return { provider: 'fal', baseURL: fal.origin, apiKey: FAL_KEY, model, timeoutMs: 1500 };
    return { provider: 'fal', baseURL: fal.origin, apiKey: FAL_KEY, model };
  },
  tenancy: { quotas: { limits: { imagesPerMinute: 100_000 } } },
  resetEach: true,
});
const { fal } = gw.fakes;
const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });
const auth = { Authorization: `Bearer ${KEY_A}` };

describe('text to image', () => {
  skippingPauses();

  it('submits to the endpoint with Authorization: Key, polls the app id, and answers the images as b64_json', async () => {
    const before = fal.submits();
    const result = await client.images.generate({ model: 'fal-ai/flux/dev', prompt: 'a paper crane', size: '1536x1024', n: 2, response_format: 'b64_json' });
    expect(result.data).toHaveLength(2);
    for (const image of result.data ?? []) expect(Buffer.from(image.b64_json ?? '', 'base64').equals(TINY_PNG)).toBe(true);
    expect(fal.submits() - before).toBe(1);
    const { requestId, input } = fal.inputs().at(-1)!;
    expect(input).toEqual({ prompt: 'a paper crane', image_size: { width: 1536, height: 1024 }, num_images: 2 });
    const sent = fal.apiRequests();
    expect(sent[0]!.path).toBe('/fal-ai/flux/dev');
    expect(sent[0]!.headers.authorization).toBe(`Key ${FAL_KEY}`);
    // status and result on the app id (owner/alias), not the endpoint's sub-path, as @fal-ai/client builds them
    expect(sent.slice(1).map((call) => call.path)).toEqual([`/fal-ai/flux/requests/${requestId}/status`, `/fal-ai/flux/requests/${requestId}/status`, `/fal-ai/flux/requests/${requestId}`]);
  });

  it("answers fal's URLs for a url request without storage", async () => {
    const result = await client.images.generate({ model: 'fal-ai/flux/dev', prompt: 'a lighthouse' });
    const { requestId } = fal.inputs().at(-1)!;
    expect(result.data?.[0]?.url).toBe(`${fal.origin}/files/${requestId}-0.png`);
  });

  it('answers a url on the gateway when storage is on, serving the bytes fal made', async () => {
    const stored = await gatewayWith({
      fakes: { fal: startFakeFal },
      resolve: ({ model }, fakes) => ({ provider: 'fal', baseURL: fakes.fal.origin, apiKey: FAL_KEY, model }),
      storage: localResultStorage({ directory: tempDir('fal-results-'), secret: 'fal-result-storage-secret-0123456789' }),
    });
    const storedClient = new OpenAI({ baseURL: `${stored.url}/v1`, apiKey: KEY_A });
    const result = await storedClient.images.generate({ model: 'fal-ai/flux/dev', prompt: 'a harbour' });
    const url = result.data?.[0]?.url ?? '';
    expect(url.startsWith(stored.url)).toBe(true);
    expect(Buffer.from(await (await fetch(url)).arrayBuffer()).equals(TINY_PNG)).toBe(true);
  });

  it('sends size as aspect_ratio to nano-banana, seed, and the allow-listed fal fields', async () => {
    const res = await request(gw.url)
      .post('/v1/images/generations')
      .set(auth)
      .send({ model: 'fal-ai/nano-banana', prompt: 'a fox', size: '1536x1024', parameters: { seed: 7 }, output_format: 'png', response_format: 'b64_json' });
    expect(res.status).toBe(200);
    expect(fal.inputs().at(-1)!.input).toEqual({ prompt: 'a fox', aspect_ratio: '3:2', seed: 7, output_format: 'png' });
  });

  it('refuses a field fal is not sent, and a size nano-banana has no ratio for, before any submit', async () => {
    const before = fal.submits();
    const unknown = await request(gw.url).post('/v1/images/generations').set(auth).send({ model: 'fal-ai/flux/dev', prompt: 'a fox', sync_mode: true });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'invalid_request_error', param: 'sync_mode' });
    const size = await request(gw.url).post('/v1/images/generations').set(auth).send({ model: 'fal-ai/nano-banana', prompt: 'a fox', size: '3000x1000' });
    expect(size.status).toBe(400);
    expect(size.body.error.param).toBe('size');
    expect(fal.submits()).toBe(before);
  });
});

describe('edits', () => {
  skippingPauses();

  it('sends the uploaded image as a Data URL in image_urls (nano-banana/edit) through the SDK images.edit', async () => {
    const result = await client.images.edit({ model: 'fal-ai/nano-banana/edit', prompt: 'make it blue', image: await toFile(TINY_PNG, 'in.png', { type: 'image/png' }), response_format: 'b64_json' });
    expect(result.data).toHaveLength(1);
    expect(fal.inputs().at(-1)!.input).toEqual({ prompt: 'make it blue', image_urls: [`data:image/png;base64,${TINY_PNG.toString('base64')}`] });
  });

  it('sends one image as image_url to FLUX Kontext', async () => {
    await client.images.edit({ model: 'fal-ai/flux-pro/kontext', prompt: 'add a hat', image: await toFile(TINY_PNG, 'in.png', { type: 'image/png' }), response_format: 'b64_json' });
    expect(fal.inputs().at(-1)!.input).toMatchObject({ prompt: 'add a hat', image_url: `data:image/png;base64,${TINY_PNG.toString('base64')}` });
  });
});

describe('errors', () => {
  skippingPauses();

  it("fal's 401 is the operator's key: 502 upstream_auth_failed, never the caller's 401", async () => {
    const error = await failureOf(client.images.generate({ model: 'fal-ai/flux/schnell', prompt: 'a fox' }));
    expect(error.status).toBe(502);
    expect(error.error).toMatchObject({ code: 'upstream_auth_failed' });
    expect(JSON.stringify(error.error)).not.toContain('not-the-key');
  });

  it('a 422 naming a field is a 400 naming it (the caller’s name for a translated field)', async () => {
    fal.script('result', (_req, res) => falError(res, 422, [{ loc: ['body', 'image_size'], msg: 'width must be a multiple of 16', type: 'value_error' }]));
    const error = await failureOf(client.images.generate({ model: 'fal-ai/flux/dev', prompt: 'a fox', size: '1024x1024' }));
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ code: 'invalid_request_error', param: 'size' });
    expect((error.error as { message: string }).message).toContain('image_size: width must be a multiple of 16');
  });

  it('a 429 at submit is a 429 with Retry-After, nothing submitted', async () => {
    const before = fal.submits();
    fal.script('submit', (_req, res) => falError(res, 429, 'Too many requests', { 'retry-after': '7' }));
    const res = await request(gw.url).post('/v1/images/generations').set(auth).send({ model: 'fal-ai/flux/dev', prompt: 'a fox' });
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(fal.submits()).toBe(before);
  });

  it('an image flagged by the safety checker is never handed out: 400 content_policy_violation', async () => {
    fal.script('result', (req, res) => {
      const id = /requests\/([^/]+)$/.exec(req.path)![1]!;
      sendJson(res, 200, { ...fal.resultOf(id), has_nsfw_concepts: [true] });
    });
    const error = await failureOf(client.images.generate({ model: 'fal-ai/flux/dev', prompt: 'a fox' }));
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ code: 'content_policy_violation' });
  });

  it('a content_policy_violation detail is a 400 content_policy_violation', async () => {
    fal.script('result', (_req, res) =>
      falError(res, 422, [{ loc: ['body', 'prompt'], msg: 'The content could not be processed because it contained material flagged by a content checker.', type: 'content_policy_violation' }]),
    );
    const error = await failureOf(client.images.generate({ model: 'fal-ai/flux/dev', prompt: 'a fox' }));
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ code: 'content_policy_violation' });
  });

  it('a request fal reports failed on its status is a 502 upstream_error, submitted once', async () => {
    const before = fal.submits();
    fal.script('status', (req, res) => sendJson(res, 200, { status: 'COMPLETED', request_id: 'x', error: 'Out of GPU memory', error_type: 'internal_error' }));
    const res = await request(gw.url).post('/v1/images/generations').set(auth).send({ model: 'fal-ai/flux/dev', prompt: 'a fox' });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ code: 'upstream_error' });
    expect(res.body.error.message).toContain('Out of GPU memory');
    expect(fal.submits() - before).toBe(1);
  });

  it('a status poll that fails once is polled again: the request is not submitted twice', async () => {
    const before = fal.submits();
    fal.script('status', (_req, res) => falError(res, 500, 'Internal Server Error'));
    const result = await client.images.generate({ model: 'fal-ai/flux/dev', prompt: 'a fox', response_format: 'b64_json' });
    expect(result.data).toHaveLength(1);
    expect(fal.submits() - before).toBe(1);
  });
});

// the answer deadline is real time: a request fal keeps queued races it on the system's clock, not a
// skipping one, under which the wait's own bound would be reached first
describe("the upstream's deadline", () => {
  it("a request still queued when the upstream's deadline passes is a 504, and is cancelled at fal (as its client does when it stops waiting), submitted once", async () => {
    const before = fal.submits();
    fal.setQueueReads(10_000);
    try {
      // with Idempotency-Key replays off, no late work is kept: the call ends at the deadline
      const noReplays = gw.variant({ idempotency: false });
      const answer = await request(noReplays.app).post('/v1/images/generations').set(auth).send({ model: 'fal-ai/flux-pro/v1.1', prompt: 'too slow' });
      expect(answer.status).toBe(504);
      const { requestId } = fal.inputs().at(-1)!;
      await expect
        .poll(() =>
          fal
            .apiRequests()
            .filter((sent) => sent.method === 'PUT')
            .map((sent) => sent.path),
        )
        .toContain(`/fal-ai/flux-pro/requests/${requestId}/cancel`);
      expect(fal.submits() - before).toBe(1);
    } finally {
      fal.setQueueReads(1);
    }
  });
});

/** Polls a task on `app` until it leaves queued/running. */
async function settled(app: Parameters<typeof request>[0], path: string): Promise<Record<string, unknown>> {
  let task: Record<string, unknown> = {};
  await expect
    .poll(
      async () => {
        task = (await request(app).get(path).set(auth)).body as Record<string, unknown>;
        return task.status;
      },
      { timeout: 15_000, interval: 100 },
    )
    .toMatch(/^(succeeded|failed)$/);
  return task;
}

describe('image tasks', () => {
  it('a task submitted on one instance is finished by another after the first is closed, fal asked once', async () => {
    const fake = await startFakeFal();
    const store = memoryTaskStore();
    // a scheduler whose pending polls outlive an instance, as BullMQ's do in Redis
    const pending = new Map<string, string>();
    const sharedScheduler = (): JobScheduler => {
      const inner = memoryScheduler();
      return {
        async start(handlers, retry) {
          await inner.start(handlers, retry);
          for (const [key, taskId] of pending) await inner.schedulePoll(taskId, 0, key);
        },
        schedulePoll(taskId, delayMs, key) {
          pending.set(key, taskId);
          return inner.schedulePoll(taskId, delayMs, key);
        },
        scheduleDelivery: (job) => inner.scheduleDelivery(job),
        close: () => inner.close(),
      };
    };
    const options = { resolveUpstream: () => ({ provider: 'fal' as const, baseURL: fake.origin, apiKey: FAL_KEY, model: 'fal-ai/flux/dev' }), store };
    const first = createTestGateway({ ...options, callbacks: { scheduler: sharedScheduler(), pollIntervalsMs: { image: [1000] } } });
    try {
      fake.setQueueReads(1_000);
      const submitted = await request(first.app).post('/v1/images/generations').set(auth).set('Prefer', 'respond-async').send({ model: 'fal-ai/flux/dev', prompt: 'a harbour' });
      expect(submitted.status).toBe(202);
      await expect.poll(() => fake.apiRequests().filter((call) => call.path.endsWith('/status')).length, { timeout: 10_000 }).toBeGreaterThan(0);
      await first.close();
      fake.setQueueReads(0);
      // the restarted instance: the same store and queue, nothing of the first one's memory
      const second = createTestGateway({ ...options, callbacks: { scheduler: sharedScheduler() } });
      try {
        const task = await settled(second.app, `/v1/images/tasks/${String(submitted.body.id)}`);
        expect(task.status).toBe('succeeded');
        const { requestId } = fake.inputs()[0]!;
        expect((task.result as { data: Array<{ url: string }> }).data[0]!.url).toBe(`${fake.origin}/files/${requestId}-0.png`);
      } finally {
        await second.close();
      }
      expect(fake.submits()).toBe(1);
    } finally {
      await first.close();
      await fake.close();
    }
  });
});

describe('video tasks', () => {
  const TASKS = '/api/v3/contents/generations/tasks';
  it('creates a fal request from Ark’s body and answers Ark’s task shape with a downloadable video_url', async () => {
    const model = 'fal-ai/kling-video/v2.1/standard/image-to-video';
    const created = await request(gw.url)
      .post(TASKS)
      .set(auth)
      .send({
        model,
        content: [
          { type: 'text', text: 'a paper boat drifts' },
          { type: 'image_url', image_url: { url: 'https://images.example.com/boat.png' } },
        ],
        ratio: '16:9',
        duration: 5,
      });
    expect(created.status).toBe(200);
    const id = String(created.body.id);
    expect(id.startsWith('task_')).toBe(true);
    expect(fal.inputs().at(-1)).toMatchObject({ endpoint: model, input: { prompt: 'a paper boat drifts', image_url: 'https://images.example.com/boat.png', aspect_ratio: '16:9', duration: '5' } });
    const task = await settled(gw.url, `${TASKS}/${id}`);
    expect(task).toMatchObject({ id, model, status: 'succeeded', duration: 5 });
    const url = (task.content as { video_url: string }).video_url;
    expect(Buffer.from(await (await fetch(url)).arrayBuffer()).equals(FAKE_VIDEO)).toBe(true);
    // the create's event and the terminal one name the provider that made the video
    const events = gw.usage.filter((event) => event.route === 'video.tasks' && event.task === undefined);
    expect(events.length).toBeGreaterThan(1);
    expect(new Set(events.map((event) => event.provider))).toEqual(new Set(['fal']));
    await expect.poll(() => gw.usage.find((event) => event.task?.status === 'succeeded')).toMatchObject({ provider: 'fal', video: { seconds: 5 } });
  });

  it('a video fal refused ends the task failed with the error in Ark’s shape', async () => {
    fal.script('result', (_req, res) => falError(res, 422, [{ loc: ['body', 'prompt'], msg: 'flagged by a content checker', type: 'content_policy_violation' }]));
    const created = await request(gw.url)
      .post(TASKS)
      .set(auth)
      .send({ model: 'fal-ai/veo3', content: [{ type: 'text', text: 'waves' }] });
    const task = await settled(gw.url, `${TASKS}/${String(created.body.id)}`);
    expect(task).toMatchObject({ status: 'failed', error: { code: 'content_policy_violation' } });
    expect(task.content).toBeUndefined();
  });

  it('sends duration as "8s" to Veo, and refuses a field the family has no input for, before any submit', async () => {
    await request(gw.url)
      .post(TASKS)
      .set(auth)
      .send({ model: 'fal-ai/veo3', content: [{ type: 'text', text: 'waves' }], duration: 8, resolution: '720p' })
      .expect(200);
    expect(fal.inputs().at(-1)!.input).toEqual({ prompt: 'waves', duration: '8s', resolution: '720p' });
    const before = fal.submits();
    const refused = await request(gw.url)
      .post(TASKS)
      .set(auth)
      .send({ model: 'fal-ai/kling-video/v2.1/standard/text-to-video', content: [{ type: 'text', text: 'waves' }], resolution: '720p' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe('resolution');
    expect(fal.submits()).toBe(before);
  });
});
