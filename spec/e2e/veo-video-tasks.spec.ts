// Veo behind the video task API (docs/providers/gemini.md "Video (Veo)"): a create on the Gemini API
// as predictLongRunning with the key in x-goog-api-key, queried until the operation is done, the video
// re-hosted into the operator's storage with the key (the caller gets the storage URL, never Veo's URI
// or the key); the same on Vertex AI (a bearer token, fetchPredictOperation, the bytes stored); a
// callback delivery; a video withheld by the filters; a 429; no storage configured; a second gateway
// instance on the same store finishing a task the first created. The fake counts operations started.
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryTaskStore } from '../../lib/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { localResultStorage } from '../../lib/storage.js';
import { startCallbackReceiver } from '../helpers/callback-receiver.js';
import { GEMINI_KEY, VERTEX_TOKEN, geminiError } from '../helpers/fake-gemini.js';
import { VEO_VIDEO, startFakeVeo } from '../helpers/fake-veo.js';
import { KEY_A, type TestGateway } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';

const TASKS = '/api/v3/contents/generations/tasks';
/** The listening gateway's URL (signed result URLs name it), or another instance's app. */
type App = string | TestGateway['app'];
const VEO_MODEL = 'veo-3.0-generate-001';
const store = memoryTaskStore();
// every log line of the file, checked for keys at the end
const logs: string[] = [];
const capture = (fields: Record<string, unknown>, message: string): void => void logs.push(`${message} ${JSON.stringify(fields)}`);
afterAll(() => {
  const all = logs.join('\n');
  expect(all).not.toContain(GEMINI_KEY);
  expect(all).not.toContain(VERTEX_TOKEN);
  expect(all).not.toContain('not-the-key');
});

const gw = await gatewayWith({
  fakes: { veo: startFakeVeo, receiver: () => startCallbackReceiver() },
  store,
  storage: localResultStorage({ directory: tempDir('veo-results-'), secret: 'a-results-signing-secret-of-more-than-32-chars' }),
  callbacks: { allowLocal: true, pollIntervalsMs: { video: [30] }, retryBaseMs: 20, retryMaxMs: 40 },
  logger: { info: capture, warn: capture, error: capture },
  tenancy: { pricing: { currency: 'USD', models: { 'veo-*': { videoSecond: { default: 0.4, by: { '1080p': 0.5 } } } } } },
  resolve: ({ model }, { veo }) => {
    if (model === 'veo-wrong-key') return { provider: 'gemini', baseURL: veo.baseURL, apiKey: 'not-the-key', model: VEO_MODEL };
    if (model === 'veo-vertex') {
      return { provider: 'vertex', baseURL: veo.vertexBaseURL, project: 'my-project', location: 'us-central1', model: VEO_MODEL, getAccessToken: () => Promise.resolve(VERTEX_TOKEN) };
    }
    return { provider: 'gemini', baseURL: veo.baseURL, apiKey: GEMINI_KEY, model: VEO_MODEL };
  },
  resetEach: true,
});
const { veo, receiver } = gw.fakes;

const create = (body: Record<string, unknown>, app: App = gw.url) =>
  request(app)
    .post(TASKS)
    .set('Authorization', `Bearer ${KEY_A}`)
    .send({ model: 'veo-3', content: [{ type: 'text', text: 'a paper boat on a pond' }], ...body });
const query = (id: string, app: App = gw.url) => request(app).get(`${TASKS}/${id}`).set('Authorization', `Bearer ${KEY_A}`);

/** Queries until the task is terminal (the fake's operation is done at its second read). */
async function finished(id: string, app: App = gw.url): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const res = await query(id, app);
    if (res.status !== 200 || res.body.status === 'succeeded' || res.body.status === 'failed') return res;
  }
  throw new Error('the task did not finish');
}

async function download(url: string): Promise<Buffer> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

const noSecrets = (text: string): void => {
  expect(text).not.toContain(GEMINI_KEY);
  expect(text).not.toContain(VERTEX_TOKEN);
  expect(text).not.toContain(':download');
  expect(text).not.toContain(veo.origin);
};

describe('Veo on the Gemini API', () => {
  it('creates an operation, answers running, then succeeded with a storage URL that downloads the video', async () => {
    const before = veo.operationsStarted();
    const created = await create({ ratio: '9:16', duration: 6, resolution: '720p', negative_prompt: 'rain' });
    expect(created.status, created.text).toBe(200);
    expect(created.body.id).toMatch(/^task_/);
    expect(veo.operationsStarted()).toBe(before + 1);
    // the create's usage event names the provider that runs the task
    expect(gw.usage.find((event) => event.route === 'video.tasks')?.provider).toBe('gemini');
    const sent = veo.apiRequests()[0]!;
    expect(sent.path).toBe(`/v1beta/models/${VEO_MODEL}:predictLongRunning`);
    expect(sent.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.json).toEqual({
      instances: [{ prompt: 'a paper boat on a pond' }],
      parameters: { sampleCount: 1, durationSeconds: 6, aspectRatio: '9:16', resolution: '720p', negativePrompt: 'rain' },
    });

    const running = await query(created.body.id as string);
    expect(running.body).toMatchObject({ id: created.body.id, model: 'veo-3', status: 'running', duration: 6, resolution: '720p', ratio: '9:16' });
    const done = await finished(created.body.id as string);
    expect(done.body).toMatchObject({ id: created.body.id, model: 'veo-3', status: 'succeeded', duration: 6, resolution: '720p' });
    const url = (done.body.content as { video_url: string }).video_url;
    expect(url.startsWith(`${gw.url}/v1/results/`)).toBe(true);
    expect((await download(url)).equals(VEO_VIDEO)).toBe(true);
    expect(veo.downloads()).toBeGreaterThanOrEqual(1);
    // the download followed Google's redirect to the file's host, which never saw the key
    expect(veo.keyLeaks()).toBe(0);
    // the operation read and the download carried the key; the caller saw neither it nor Veo's URI
    expect(veo.requests.filter((r) => r.method === 'GET').every((r) => r.headers['x-goog-api-key'] === GEMINI_KEY)).toBe(true);
    noSecrets(running.text + done.text);
    noSecrets((await query(created.body.id as string)).text);
    // one paid operation; the usage event reports the seconds and resolution, priced per second
    expect(veo.operationsStarted()).toBe(before + 1);
    const terminal = gw.usage.find((event) => event.task?.status === 'succeeded');
    expect(terminal?.video).toEqual({ seconds: 6, resolution: '720p' });
    expect(terminal?.cost?.amount).toBeCloseTo(2.4);
  });

  it('sends a first_frame data: URL as the instance image bytes', async () => {
    const dataUrl = `data:image/png;base64,${TINY_PNG.toString('base64')}`;
    const created = await create({
      content: [
        { type: 'text', text: 'it moves' },
        { type: 'image_url', image_url: { url: dataUrl }, role: 'first_frame' },
      ],
    });
    expect(created.status, created.text).toBe(200);
    expect(veo.creates().at(-1)?.instances).toEqual([{ prompt: 'it moves', image: { bytesBase64Encoded: TINY_PNG.toString('base64'), mimeType: 'image/png' } }]);
  });

  it('refuses what Veo cannot honour with a 400 naming the field, and starts no operation', async () => {
    const before = veo.operationsStarted();
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        {
          content: [
            { type: 'text', text: 'x' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' }, role: 'first_frame' },
          ],
        },
        'content[1].image_url.url',
      ],
      [{ ratio: '1:1' }, 'ratio'],
      [{ duration: 12 }, 'duration'],
      [{ resolution: '480p' }, 'resolution'],
      [{ seed: 7 }, 'seed'],
      [{ watermark: true }, 'watermark'],
      [{ generateAudio: true }, 'generateAudio'],
    ];
    for (const [body, param] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.param).toBe(param);
    }
    expect(veo.operationsStarted()).toBe(before);
  });

  it('a video withheld by the filters ends the task failed with content_policy_violation, and costs nothing', async () => {
    veo.outcomes.push('rai');
    const created = await create({});
    const done = await finished(created.body.id as string);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'content_policy_violation' } });
    expect(String((done.body.error as { message: string }).message)).toContain('Responsible AI');
    expect(done.body.content).toBeUndefined();
    const terminal = gw.usage.find((event) => event.task?.status === 'failed');
    expect(terminal?.errorCode).toBe('content_policy_violation');
    expect(terminal?.cost?.amount).toBe(0);
  });

  it('an operation error ends the task failed with Google status as its code', async () => {
    veo.outcomes.push('error');
    const created = await create({});
    const done = await finished(created.body.id as string);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'INVALID_ARGUMENT', message: 'The prompt could not be processed.' } });
  });

  it('a 429 on create is a 429 with Retry-After, and no task', async () => {
    veo.next((_req, res) => geminiError(res, 429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '21s' }]));
    const res = await create({});
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('21');
    expect(res.body.error.code).toBe('rate_limit_exceeded');
  });

  it("Google's 403 for the operator's key is a 502 upstream_auth_failed, never the caller's 401 or 403", async () => {
    const before = veo.operationsStarted();
    const res = await create({ model: 'veo-wrong-key' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('upstream_auth_failed');
    expect(res.text).not.toContain('not-the-key');
    expect(veo.operationsStarted()).toBe(before);
  });

  it('delivers the terminal state to callback_url with the storage URL', async () => {
    const created = await create({ callback_url: receiver.url });
    expect(created.status, created.text).toBe(200);
    const delivered = await receiver.accepted(1);
    const terminal = delivered.map((d) => JSON.parse(d.body) as Record<string, unknown>).find((body) => body.status === 'succeeded');
    const last = terminal ?? JSON.parse((await receiver.accepted(2))[1]!.body);
    expect(last).toMatchObject({ id: created.body.id, status: 'succeeded' });
    const url = (last.content as { video_url: string }).video_url;
    expect(url.startsWith(`${gw.url}/v1/results/`)).toBe(true);
    expect((await download(url)).equals(VEO_VIDEO)).toBe(true);
    for (const delivery of receiver.deliveries) noSecrets(delivery.body);
    receiver.deliveries.length = 0;
  });

  it('a second gateway instance on the same store finishes a task the first created', async () => {
    const first = gw.variant({});
    const second = gw.variant({});
    const before = veo.operationsStarted();
    const created = await create({}, first.app);
    expect(created.status, created.text).toBe(200);
    const done = await finished(created.body.id as string, second.app);
    expect(done.body).toMatchObject({ id: created.body.id, status: 'succeeded' });
    expect(veo.operationsStarted()).toBe(before + 1);
    noSecrets(done.text);
  });
});

describe('Veo on Vertex AI', () => {
  it('creates with the bearer token, reads with fetchPredictOperation, and stores the bytes', async () => {
    const created = await create({ model: 'veo-vertex', seed: 42, generate_audio: true, resolution: '1080p' });
    expect(created.status, created.text).toBe(200);
    const sent = veo.apiRequests()[0]!;
    expect(sent.path).toBe(`/v1/projects/my-project/locations/us-central1/publishers/google/models/${VEO_MODEL}:predictLongRunning`);
    expect(sent.headers.authorization).toBe(`Bearer ${VERTEX_TOKEN}`);
    expect(sent.json).toEqual({ instances: [{ prompt: 'a paper boat on a pond' }], parameters: { sampleCount: 1, durationSeconds: 8, resolution: '1080p', seed: 42, generateAudio: true } });
    const done = await finished(created.body.id as string);
    expect(done.body).toMatchObject({ status: 'succeeded', duration: 8, resolution: '1080p', model: 'veo-vertex' });
    const read = veo.apiRequests().find((r) => r.path.endsWith(':fetchPredictOperation'))!;
    expect(read.path).toBe(`/v1/projects/my-project/locations/us-central1/publishers/google/models/${VEO_MODEL}:fetchPredictOperation`);
    expect(read.json).toEqual({ operationName: expect.stringMatching(/^projects\/my-project\/locations\/us-central1\/publishers\/google\/models\/.+\/operations\//) });
    const url = (done.body.content as { video_url: string }).video_url;
    expect(url.startsWith(`${gw.url}/v1/results/`)).toBe(true);
    expect((await download(url)).equals(VEO_VIDEO)).toBe(true);
    expect(done.text).not.toContain(VEO_VIDEO.toString('base64').slice(0, 64));
    noSecrets(done.text);
    // the record keeps the storage key, not the video's bytes
    const record = await store.getTask(created.body.id as string);
    expect(JSON.stringify(record?.result)).not.toContain('base64');
  });
});

describe('without storage', () => {
  it('refuses a Veo create before any operation, naming the storage option, and tells the operator', async () => {
    const errors: string[] = [];
    const bare = gw.variant({ storage: undefined, logger: { info: () => undefined, warn: () => undefined, error: (_fields, message) => errors.push(message) } });
    const before = veo.operationsStarted();
    const res = await create({}, bare.app);
    expect(res.status).toBe(500);
    expect(res.body.error.message).toContain("'storage'");
    expect(veo.operationsStarted()).toBe(before);
    expect(errors.some((message) => message.includes('storage'))).toBe(true);
  });
});
