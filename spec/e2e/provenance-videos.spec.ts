// Content Credentials of videos (docs/video-tasks-and-callbacks.md): with the `provenance` option and
// result storage, a video task's video is read once as it is stored (never signed), and its report is
// `content.provenance` next to `video_url` in the query and the callback, `provenance` on the
// `/v1/videos` object, and `provenance` in the task's terminal usage event. The vendor's videos are the
// C2PA reference implementation's own MP4 fixtures: one valid, one whose BMFF hash does not match.
import type { ServerResponse } from 'node:http';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { localResultStorage } from '../../lib/storage.js';
import { startCallbackReceiver } from '../helpers/callback-receiver.js';
import { arkTaskObject } from '../helpers/fake-ark.js';
import { C2PA_ANCHORS, c2paFixture } from '../helpers/fake-c2pa-vendor.js';
import { type FakeMediaHost, startFakeMediaHost } from '../helpers/fake-media-host.js';
import { type RecordedRequest, sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { tempDir } from '../helpers/temp-dir.js';

const ANCHORS = C2PA_ANCHORS;
const TASKS = '/api/v3/contents/generations/tasks';

/** Ark (upstreams §2.3) whose succeeded task names, on the media host, the fixture its prompt names. */
function startArkWithFixtures(host: FakeMediaHost) {
  return async () => {
    let created = 0;
    const tasks = new Map<string, Record<string, unknown>>();
    return startFakeUpstream((request: RecordedRequest, res: ServerResponse) => {
      if (request.method === 'POST') {
        const id = `cgt-20260917121233-${String(++created).padStart(5, '0')}`;
        const name = ((request.json as { content: Array<{ text?: string }> }).content[0]?.text ?? 'video1.mp4').trim();
        tasks.set(id, { video_url: host.publish(name, c2paFixture(name), 'video/mp4') });
        return sendJson(res, 200, { id });
      }
      const id = decodeURIComponent(request.path.split('/').at(-1)!);
      const content = tasks.get(id);
      if (!content) return sendJson(res, 404, { error: { code: 'ResourceNotFound', message: 'task not found', param: 'id', type: 'NotFound' } });
      return sendJson(res, 200, { ...arkTaskObject(id, 'seedance', 'succeeded'), content });
    });
  };
}

const media = await startFakeMediaHost();
const gw = await gatewayWith({
  fakes: { media: () => Promise.resolve(media), ark: startArkWithFixtures(media) },
  storage: localResultStorage({ directory: tempDir('provenance-videos-'), secret: 'provenance-video-results-secret-0123456789' }),
  callbacks: { allowLocal: true, pollIntervalsMs: { video: [30] }, retryBaseMs: 20, retryMaxMs: 40 },
  // tenant-b is not read: no report for its videos
  provenance: (caller) => (caller.id === 'tenant-a' ? { trustAnchors: ANCHORS } : null),
  resolve: (_input, { ark }) => ({ provider: 'ark', baseURL: `${ark.origin}/api/v3`, apiKey: 'ark-key' }),
  resetEach: true,
});

async function createAndWait(file: string, key = KEY_A, callback?: string): Promise<{ id: string; task: Record<string, unknown> }> {
  const created = await request(gw.app)
    .post(TASKS)
    .set('Authorization', `Bearer ${key}`)
    .send({ model: 'seedance', content: [{ type: 'text', text: file }], ...(callback ? { callback_url: callback } : {}) });
  expect(created.status).toBe(200);
  const id = created.body.id as string;
  let task: Record<string, unknown> = {};
  await expect
    .poll(
      async () => {
        task = (await request(gw.app).get(`${TASKS}/${id}`).set('Authorization', `Bearer ${key}`)).body as Record<string, unknown>;
        return task.status;
      },
      { timeout: 10_000, interval: 30 },
    )
    .toBe('succeeded');
  return { id, task };
}

describe('video tasks', () => {
  it('a valid video: content.provenance next to the stored video_url, in the query, the callback and the usage event; the bytes kept', async () => {
    const receiver = await startCallbackReceiver();
    try {
      // waited for by its callback, not by queries: a query that sees the end stores the video too, and
      // racing the poll it would make a second copy (one kept), which is not what this counts
      const created = await request(gw.app)
        .post(TASKS)
        .set('Authorization', `Bearer ${KEY_A}`)
        .send({ model: 'seedance', content: [{ type: 'text', text: 'video1.mp4' }], callback_url: receiver.url });
      const id = created.body.id as string;
      await expect
        .poll(async () => (await receiver.accepted(1)).some((delivery) => (JSON.parse(delivery.body) as { status: string }).status === 'succeeded'), { timeout: 10_000, interval: 30 })
        .toBe(true);
      const task = (await request(gw.app).get(`${TASKS}/${id}`).set('Authorization', `Bearer ${KEY_A}`)).body as Record<string, unknown>;
      const content = task.content as { video_url: string; provenance: Record<string, unknown> };
      // valid; its signer (or an ingredient's) does not chain to the test roots given as anchors
      expect(content.provenance).toMatchObject({ c2pa: 'valid', trusted: false });
      const at = new URL(content.video_url);
      const stored = await request(gw.app)
        .get(at.pathname + at.search)
        .buffer(true);
      expect(Buffer.from(stored.body as Buffer).equals(c2paFixture('video1.mp4'))).toBe(true);
      const deliveries = await receiver.accepted(1);
      const last = JSON.parse(deliveries.at(-1)!.body) as { status: string; content: { provenance: unknown } };
      expect(last.status).toBe('succeeded');
      expect(last.content.provenance).toEqual(content.provenance);
      await expect.poll(() => gw.usage.find((event) => event.task?.id === id && event.task.status === 'succeeded')).toBeDefined();
      expect(gw.usage.find((event) => event.task?.id === id && event.task.status === 'succeeded')).toMatchObject({ provenance: ['valid'] });
      // read once, from the copy being stored: one download of the vendor's file
      expect(media.requests.filter((item) => item.method === 'GET' && item.path.includes('video1.mp4'))).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('a video whose BMFF hash does not match is invalid with its code; /v1/videos reports it too', async () => {
    const { id, task } = await createAndWait('dashinit.mp4');
    const report = (task.content as { provenance: { c2pa: string; codes?: string[] } }).provenance;
    expect(report.c2pa).toBe('invalid');
    expect(report.codes).toContain('assertion.bmffHash.mismatch');
    const video = await request(gw.app).get(`/v1/videos/${id}`).set('Authorization', `Bearer ${KEY_A}`);
    expect(video.status).toBe(200);
    expect(video.body).toMatchObject({ id, object: 'video', status: 'completed', provenance: report });
    const list = await request(gw.app).get('/v1/videos').set('Authorization', `Bearer ${KEY_A}`);
    expect((list.body.data as Array<{ id: string; provenance?: unknown }>).find((item) => item.id === id)?.provenance).toEqual(report);
  });

  it('a caller whose options are null gets no report', async () => {
    const { id, task } = await createAndWait('video1.mp4', KEY_B);
    expect((task.content as Record<string, unknown>).provenance).toBeUndefined();
    const video = await request(gw.app).get(`/v1/videos/${id}`).set('Authorization', `Bearer ${KEY_B}`);
    expect(video.body.provenance).toBeUndefined();
    await expect.poll(() => gw.usage.find((event) => event.task?.id === id && event.task.status === 'succeeded')).toBeDefined();
    expect(gw.usage.find((event) => event.task?.id === id && event.task.status === 'succeeded')?.provenance).toBeUndefined();
  });
});
