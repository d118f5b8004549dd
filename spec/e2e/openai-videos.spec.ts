// OpenAI's videos API over the video task service (docs/openai-videos.md), driven by the official `openai`
// SDK at default retries: create -> retrieve until completed -> downloadContent on Veo (stored results,
// streamed with Range) and Kling on fal (no storage: a redirect to the upstream's file); seconds and
// size checked by the catalogue before any upstream call; the caller's own list, paginated; delete;
// another tenant's 404; an input_reference upload; the unoffered routes; a host's own name for Kling
// mapped and checked by Kling's row. Paid work started by the fakes matches the usage events.
import OpenAI, { toFile } from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { memoryTaskStore } from '../../lib/index.js';
import { localResultStorage } from '../../lib/storage.js';
import { startCallbackReceiver } from '../helpers/callback-receiver.js';
import { FAKE_VIDEO, FAL_KEY, startFakeFal } from '../helpers/fake-fal.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { GEMINI_KEY } from '../helpers/fake-gemini.js';
import { VEO_VIDEO, startFakeVeo } from '../helpers/fake-veo.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';
import { tempDir } from '../helpers/temp-dir.js';

const VEO = 'veo-3.1-generate-preview';
const KLING = 'fal-ai/kling-video/v2.1/standard/text-to-video';

// Veo's videos must be kept by the gateway (docs/providers/gemini.md): this one has storage
const veoGw = await gatewayWith({
  fakes: { veo: startFakeVeo, receiver: () => startCallbackReceiver() },
  callbacks: { allowLocal: true, pollIntervalsMs: { video: [30] }, retryBaseMs: 20, retryMaxMs: 40 },
  store: memoryTaskStore(),
  storage: localResultStorage({ directory: tempDir('openai-videos-'), secret: 'a-results-signing-secret-of-more-than-32-chars' }),
  resolve: (_input, { veo }) => ({ provider: 'gemini', baseURL: veo.baseURL, apiKey: GEMINI_KEY, model: VEO }),
});
// fal's Kling, without storage: the content is the upstream's own file
const falGw = await gatewayWith({
  fakes: { fal: startFakeFal },
  store: memoryTaskStore(),
  resolve: ({ model }, { fal }) => ({ provider: 'fal', baseURL: fal.origin, apiKey: FAL_KEY, model }),
});
// a host's own name for fal's Kling, listed by listModels and known to no catalogue row: it follows Kling's row
const HOST_NAME = 'house-clip';
const hostGw = await gatewayWith({
  fakes: { fal: startFakeFal },
  store: memoryTaskStore(),
  models: { list: () => [HOST_NAME] },
  resolve: ({ model }, { fal }) => (model === HOST_NAME ? { provider: 'fal', baseURL: fal.origin, apiKey: FAL_KEY, model: KLING } : null),
});
// fal's Kling with private result URLs refused (the option off): the fal fake serves its files on
// 127.0.0.1, so its own video URL fails the result-URL rules
const strictGw = await gatewayWith({
  fakes: { fal: startFakeFal },
  store: memoryTaskStore(),
  allow: { privateResultUrls: false },
  resolve: ({ model }, { fal }) => ({ provider: 'fal', baseURL: fal.origin, apiKey: FAL_KEY, model }),
});
const { veo, receiver } = veoGw.fakes;
const { fal } = falGw.fakes;
const strictFal = strictGw.fakes.fal;

const client = (url: string, key = KEY_A): OpenAI => new OpenAI({ apiKey: key, baseURL: `${url}/v1` });

/** Retrieves until the video has ended (the fakes end within a few reads). */
async function ended(openai: OpenAI, id: string): Promise<OpenAI.Videos.Video> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const video = await openai.videos.retrieve(id);
    if (video.status === 'completed' || video.status === 'failed') return video;
  }
  throw new Error(`video ${id} did not end`);
}

const succeeded = (usage: typeof veoGw.usage): number => usage.filter((event) => event.task?.status === 'succeeded').length;

describe('OpenAI videos on Veo (stored results)', () => {
  it('create -> retrieve -> downloadContent, with the Range the router honours, and one paid operation per usage event', async () => {
    const openai = client(veoGw.url);
    const started = veo.operationsStarted();
    const madeBefore = succeeded(veoGw.usage);
    const created = await openai.videos.create({ model: VEO, prompt: 'a paper boat on a pond', seconds: '8', size: '1280x720' });
    expect(created).toMatchObject({
      object: 'video',
      model: VEO,
      status: 'queued',
      progress: 0,
      seconds: '8',
      size: '1280x720',
      prompt: 'a paper boat on a pond',
      error: null,
      remixed_from_video_id: null,
      completed_at: null,
    });
    expect(created.id).toMatch(/^task_/);
    expect(Math.abs(created.created_at - Date.now() / 1000)).toBeLessThan(600);
    // size and seconds went as the task's fields, and Veo got them as its own
    expect(veo.creates().at(-1)?.parameters).toMatchObject({ durationSeconds: 8, aspectRatio: '16:9', resolution: '720p' });

    const done = await ended(openai, created.id);
    expect(done).toMatchObject({ id: created.id, status: 'completed', progress: 100, seconds: '8', size: '1280x720' });
    expect(typeof done.completed_at === 'number' || done.completed_at === null).toBe(true);

    const content = await openai.videos.downloadContent(created.id);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await content.arrayBuffer()).equals(VEO_VIDEO)).toBe(true);

    const ranged = await request(veoGw.url).get(`/v1/videos/${created.id}/content`).set('Authorization', `Bearer ${KEY_A}`).set('Range', 'bytes=100-199').buffer(true);
    expect(ranged.status).toBe(206);
    expect(ranged.headers['content-range']).toBe(`bytes 100-199/${VEO_VIDEO.length}`);
    expect(Buffer.from(ranged.body as Buffer).equals(VEO_VIDEO.subarray(100, 200))).toBe(true);

    // one operation, one terminal usage event with the seconds Veo made
    expect(veo.operationsStarted() - started).toBe(1);
    expect(succeeded(veoGw.usage) - madeBefore).toBe(1);
    expect(veoGw.usage.find((event) => event.task?.id === created.id)?.video).toMatchObject({ seconds: 8 });
  });

  it('takes the SDK form with an input_reference file as the first frame', async () => {
    const openai = client(veoGw.url);
    const created = await openai.videos.create({ model: VEO, prompt: 'it moves', input_reference: await toFile(TINY_PNG, 'frame.png', { type: 'image/png' }) });
    expect(created.status).toBe('queued');
    expect(veo.creates().at(-1)?.instances).toEqual([{ prompt: 'it moves', image: { bytesBase64Encoded: TINY_PNG.toString('base64'), mimeType: 'image/png' } }]);
    await ended(openai, created.id);
  });

  it('refuses seconds and sizes the model cannot make with the 400 error object naming the field, before any operation', async () => {
    const openai = client(veoGw.url);
    const started = veo.operationsStarted();
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ seconds: '5' }, 'seconds', /seconds must be one of 4, 6, 8 seconds/],
      [{ seconds: 'eight' }, 'seconds', /whole number/],
      [{ size: '1024x1792' }, 'size', /size '1024x1792' \(resolution 1024p\)/],
      [{ size: '1080x1350' }, 'size', /size '1080x1350' \(ratio 4:5\)/],
      [{ size: '854x480' }, 'size', /resolution 480p/],
      [{ size: 'big' }, 'size', /width x height/],
      [{ remix_video_id: 'video_1' }, 'remix_video_id', /Unknown parameter/],
    ];
    for (const [fields, param, message] of cases) {
      const error = (await openai.videos.create({ model: VEO, prompt: 'x', ...fields }).catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.BadRequestError>;
      expect(error, JSON.stringify(fields)).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.type).toBe('invalid_request_error');
      expect(error.param).toBe(param);
      expect(error.message).toMatch(message);
    }
    const noModel = await request(veoGw.url).post('/v1/videos').set('Authorization', `Bearer ${KEY_A}`).send({ prompt: 'x' });
    expect(noModel.status).toBe(400);
    expect(noModel.body.error).toMatchObject({ type: 'invalid_request_error', param: 'model' });
    expect(veo.operationsStarted()).toBe(started);
  });

  it("lists only the caller's own videos, page by page, in either order", async () => {
    const mine = client(veoGw.url);
    const theirs = client(veoGw.url, KEY_B);
    const ids: string[] = [];
    for (const prompt of ['one', 'two', 'three']) ids.push((await mine.videos.create({ model: VEO, prompt })).id);
    const foreign = (await theirs.videos.create({ model: VEO, prompt: 'not yours' })).id;

    const first = await mine.videos.list({ limit: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
    expect(first.data.map((video) => video.id)).toEqual([ids[2], ids[1]]);
    const all: string[] = [];
    for await (const video of mine.videos.list({ limit: 2 })) all.push(video.id);
    expect(all).toEqual(expect.arrayContaining(ids));
    expect(all).not.toContain(foreign);
    const ascending: string[] = [];
    for await (const video of mine.videos.list({ limit: 2, order: 'asc' })) ascending.push(video.id);
    expect(ascending.filter((id) => ids.includes(id))).toEqual(ids);
    expect(ascending).toEqual([...all].reverse());
    const theirList: string[] = [];
    for await (const video of theirs.videos.list()) theirList.push(video.id);
    expect(theirList).toEqual([foreign]);
    for (const id of [...ids, foreign]) await ended(id === foreign ? theirs : mine, id);
  });

  it("answers another tenant's video 404 on every route, deletes a finished video, and refuses to delete one in progress", async () => {
    const openai = client(veoGw.url);
    const other = client(veoGw.url, KEY_B);
    const created = await openai.videos.create({ model: VEO, prompt: 'a lantern' });
    await expect(other.videos.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(other.videos.downloadContent(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(other.videos.delete(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const early = (await openai.videos.delete(created.id).catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(early).toBeInstanceOf(OpenAI.BadRequestError);
    expect(early.message).toMatch(/still (queued|in progress)/);
    const early2 = (await openai.videos.downloadContent(created.id).catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(early2.message).toMatch(/content is ready once it has completed/);

    await ended(openai, created.id);
    expect(await openai.videos.delete(created.id)).toEqual({ id: created.id, object: 'video.deleted', deleted: true });
    await expect(openai.videos.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const listed: string[] = [];
    for await (const video of openai.videos.list()) listed.push(video.id);
    expect(listed).not.toContain(created.id);
  });

  it('runs one operation for a create repeated with its Idempotency-Key, and answers the same video', async () => {
    const started = veo.operationsStarted();
    const send = (key: string) => request(veoGw.url).post('/v1/videos').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', key).send({ model: VEO, prompt: 'once', seconds: '4' });
    const first = await send('video-key-1');
    const again = await send('video-key-1');
    expect(first.status, first.text).toBe(200);
    expect(again.body).toStrictEqual(first.body);
    expect(veo.operationsStarted() - started).toBe(1);
    // another key is another video
    const other = await send('video-key-2');
    expect(other.body.id).not.toBe(first.body.id);
    expect(veo.operationsStarted() - started).toBe(2);
    for (const id of [first.body.id as string, other.body.id as string]) await ended(client(veoGw.url), id);
  });

  it("follows a callback_url as the task route does, with the video's id", async () => {
    const madeBefore = succeeded(veoGw.usage);
    const created = await client(veoGw.url).videos.create({ model: VEO, prompt: 'a lantern', callback_url: receiver.url } as OpenAI.Videos.VideoCreateParams);
    // Veo's operation is running, then done: each state the gateway sees is delivered
    const deliveries = await receiver.accepted(2);
    const states = deliveries.map((delivery) => JSON.parse(delivery.body) as { id: string; status: string });
    expect(states.every((state) => state.id === created.id)).toBe(true);
    expect(states.map((state) => state.status)).toContain('succeeded');
    expect((await client(veoGw.url).videos.retrieve(created.id)).status).toBe('completed');
    expect(succeeded(veoGw.usage) - madeBefore).toBe(1);
  });

  it('refuses a bad page, order or cursor, and a body that is neither JSON nor a form, with the error object', async () => {
    const get = (query: string) => request(veoGw.url).get(`/v1/videos${query}`).set('Authorization', `Bearer ${KEY_A}`);
    for (const [query, param] of [
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?limit=ten', 'limit'],
      ['?order=sideways', 'order'],
      ['?after=a&after=b', 'after'],
    ]) {
      const res = await get(query!);
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toMatchObject({ type: 'invalid_request_error', param });
    }
    expect((await get('?after=task_unknown')).body).toStrictEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    const text = await request(veoGw.url).post('/v1/videos').set('Authorization', `Bearer ${KEY_A}`).set('Content-Type', 'text/plain').send('model=x');
    expect(text.status).toBe(415);
    expect(text.body.error.message).toMatch(/multipart\/form-data \(as the SDKs send it, with an input_reference file\) or application\/json, got 'text\/plain/);
  });

  it('answers Prefer: dry-run with the quote of the video, and starts nothing', async () => {
    const started = veo.operationsStarted();
    const quoted = await request(veoGw.url).post('/v1/videos').set('Authorization', `Bearer ${KEY_A}`).set('Prefer', 'dry-run').send({ model: VEO, prompt: 'p', seconds: '6' });
    expect(quoted.status, quoted.text).toBe(200);
    expect(quoted.body.object).toBe('quote');
    expect(quoted.headers['preference-applied']).toBe('dry-run');
    expect(veo.operationsStarted()).toBe(started);
  });

  it('answers the routes it does not offer with the error object', async () => {
    const openai = client(veoGw.url);
    const remix = (await openai.videos.remix('task_x', { prompt: 'again' }).catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(remix).toBeInstanceOf(OpenAI.BadRequestError);
    expect(remix.message).toMatch(/not offered/);
    const variant = await request(veoGw.url).get('/v1/videos/task_x/content?variant=spritesheet').set('Authorization', `Bearer ${KEY_A}`);
    expect(variant.status).toBe(400);
    expect(variant.body.error).toMatchObject({ type: 'invalid_request_error', param: 'variant' });
  });
  it('names input_reference in the 400 of a first frame Veo cannot take (a URL: Veo reads only bytes)', async () => {
    const started = veo.operationsStarted();
    const error = (await client(veoGw.url)
      .videos.create({ model: VEO, prompt: 'p', input_reference: { image_url: 'https://cdn.example/frame.png' } })
      .catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe('input_reference');
    expect(veo.operationsStarted()).toBe(started);
  });
});

describe('OpenAI videos on Kling (fal, no storage)', () => {
  it("create -> retrieve -> downloadContent follows the gateway's redirect to the file; one started request per usage event", async () => {
    const openai = client(falGw.url);
    const started = fal.started().length;
    const madeBefore = succeeded(falGw.usage);
    const created = await openai.videos.create({ model: KLING, prompt: 'waves at night', seconds: '5' as OpenAI.Videos.VideoSeconds, size: '720x1280' });
    expect(created).toMatchObject({ status: 'queued', seconds: '5', size: '720x1280', model: KLING });
    // Kling takes a ratio and no resolution: the size went as the ratio alone
    const input = fal.inputs().at(-1)!.input;
    expect(input).toMatchObject({ prompt: 'waves at night', duration: '5', aspect_ratio: '9:16' });
    expect(input.resolution).toBeUndefined();
    const done = await ended(openai, created.id);
    expect(done.status).toBe('completed');
    const content = await openai.videos.downloadContent(created.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(FAKE_VIDEO)).toBe(true);
    expect(fal.started().length - started).toBe(1);
    expect(succeeded(falGw.usage) - madeBefore).toBe(1);
  });

  it("sends the SDK form's input_reference { image_url } as the first frame", async () => {
    const openai = client(falGw.url);
    const created = await openai.videos.create({ model: KLING, prompt: 'it moves', input_reference: { image_url: 'https://cdn.example/frame.png' } });
    expect(fal.inputs().at(-1)!.input).toMatchObject({ prompt: 'it moves', image_url: 'https://cdn.example/frame.png' });
    // no seconds asked and none reported by fal: the length charged (quotas.defaultVideoSeconds, 5), never ''
    expect(created.seconds).toBe('5');
    expect((await ended(openai, created.id)).seconds).toBe('5');
  });

  it('refuses a length Kling does not make, before any request to fal', async () => {
    const openai = client(falGw.url);
    const submits = fal.submits();
    const error = (await openai.videos.create({ model: KLING, prompt: 'x', seconds: '8' }).catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe('seconds');
    expect(error.message).toMatch(/one of 5, 10 seconds/);
    expect(fal.submits()).toBe(submits);
  });
});

describe("OpenAI videos under a host's own name (no models entry: the upstream model's row)", () => {
  it("refuses a length Kling's row does not make with the 400 naming seconds, before any request to fal", async () => {
    const submits = hostGw.fakes.fal.submits();
    for (const [fields, param, message] of [
      [{ seconds: '8' }, 'seconds', /one of 5, 10 seconds for model 'house-clip'/],
      [{ size: '1024x768' }, 'size', /size '1024x768' \(ratio 4:3\) is not a ratio model 'house-clip' makes/],
    ] as const) {
      const error = (await client(hostGw.url)
        .videos.create({ model: HOST_NAME, prompt: 'x', ...fields } as OpenAI.Videos.VideoCreateParams)
        .catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.BadRequestError>;
      expect(error, JSON.stringify(fields)).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.type).toBe('invalid_request_error');
      expect(error.param).toBe(param);
      expect(error.message).toMatch(message);
    }
    expect(hostGw.fakes.fal.submits()).toBe(submits);
  });

  it("sends seconds and size as the fields Kling's row takes (a ratio, no resolution), under Kling's name", async () => {
    const openai = client(hostGw.url);
    const created = await openai.videos.create({ model: HOST_NAME, prompt: 'a kite', seconds: '10' as OpenAI.Videos.VideoSeconds, size: '1280x720' });
    expect(created).toMatchObject({ status: 'queued', model: HOST_NAME, seconds: '10', size: '1280x720' });
    const sent = hostGw.fakes.fal.inputs().at(-1)!;
    expect(sent.input).toMatchObject({ prompt: 'a kite', duration: '10', aspect_ratio: '16:9' });
    expect(sent.input.resolution).toBeUndefined();
    expect((await ended(openai, created.id)).status).toBe('completed');
  });

  it('is listed with /v1/videos among its endpoints, as the row of Kling it follows', async () => {
    const listed: Array<{ id: string; endpoints?: string[] }> = [];
    for await (const model of client(hostGw.url).models.list()) listed.push(model);
    expect(listed.find((model) => model.id === HOST_NAME)?.endpoints).toEqual(['/api/v3/contents/generations/tasks', '/v1/videos']);
  });
});

describe('OpenAI videos: the content redirect follows the result-URL rules (allowPrivateResultUrls off)', () => {
  /** A Kling video whose result names `videoUrl`, created and retrieved until completed. */
  async function finishedWith(videoUrl: string | undefined): Promise<string> {
    const openai = client(strictGw.url);
    const created = await openai.videos.create({ model: KLING, prompt: 'a lighthouse' });
    if (videoUrl !== undefined) {
      strictFal.script('result', (req, res) => {
        const id = /requests\/([^/]+)$/.exec(req.path)![1]!;
        sendJson(res, 200, { ...strictFal.resultOf(id), video: { url: videoUrl, content_type: 'video/webm' } });
      });
    }
    expect((await ended(openai, created.id)).status).toBe('completed');
    return created.id;
  }

  for (const [what, videoUrl] of [
    ['the metadata address', 'http://169.254.169.254/latest/meta-data/'],
    ['a loopback address', undefined],
  ] as const) {
    it(`answers 502 with the error object, not a redirect, when the vendor's URL names ${what}`, async () => {
      const id = await finishedWith(videoUrl);
      const answer = await request(strictGw.url).get(`/v1/videos/${id}/content`).set('Authorization', `Bearer ${KEY_A}`).redirects(0);
      expect(answer.status).toBe(502);
      expect(answer.headers.location).toBeUndefined();
      expect(answer.body.error).toMatchObject({ type: 'upstream_error', code: 'upstream_bad_response' });
      expect(answer.body.error.message).toMatch(/loopback, private or link-local host/);
      expect(JSON.stringify(answer.body)).not.toContain('169.254.169.254');
    });
  }

  it('still redirects to a public vendor URL', async () => {
    const id = await finishedWith('https://v3.fal.media/files/kling/clip.webm');
    const answer = await request(strictGw.url).get(`/v1/videos/${id}/content`).set('Authorization', `Bearer ${KEY_A}`).redirects(0);
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe('https://v3.fal.media/files/kling/clip.webm');
  });
});
