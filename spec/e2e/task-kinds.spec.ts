// One task lifecycle, a kind per executor (docs/architecture.md "One task lifecycle, a kind per
// executor"): every task record says its kind, written by the kind that made it; each route reads only
// its own kind, so another kind's id gets the one 404 of an unknown task; and the scheduler's jobs of
// both kinds run on one scheduler through one service. Real HTTP against fakes on port 0.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { memoryTaskStore } from '../../lib/index.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { imageTaskEnded } from '../helpers/image-task-ended.js';

const VIDEO_MODEL = 'doubao-seedance-1-5-pro-251215';
const TASKS = '/api/v3/contents/generations/tasks';
const auth = { Authorization: `Bearer ${KEY_A}` };
const notFound = (message: string) => ({ error: { message, type: 'invalid_request_error', code: 'not_found', param: null } });

describe('task kinds', () => {
  it('an image task and a video task are recorded with their kind, and each route answers only its own', async () => {
    const store = memoryTaskStore();
    const gw = await gatewayWith({
      fakes: { images: startFakePaidImages, ark: startFakeArk },
      resolve: ({ route }, { images, ark }) =>
        route === 'video.tasks' ? { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-key' } : { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-2.0' },
      store,
    });
    const image = await request(gw.app).post(OPENAI_IMAGES).set(auth).set('Prefer', 'respond-async').send({ model: 'x-image-2.0', prompt: 'a harbour' });
    expect(image.status).toBe(202);
    const video = await request(gw.app)
      .post(TASKS)
      .set(auth)
      .send({ model: VIDEO_MODEL, content: [{ type: 'text', text: 'a cat' }] });
    expect(video.status).toBe(200);
    const imageId = String(image.body.id);
    const videoId = String(video.body.id);

    expect((await store.getTask(imageId))?.kind).toBe('image');
    expect((await store.getTask(videoId))?.kind).toBe('video');

    // another kind's id is, to each route, a task that does not exist
    const asImage = await request(gw.app).get(`/v1/images/tasks/${videoId}`).set(auth);
    expect(asImage.status).toBe(404);
    expect(asImage.body).toStrictEqual(notFound(`Image task '${videoId}' was not found.`));
    const asVideo = await request(gw.app).get(`${TASKS}/${imageId}`).set(auth);
    expect(asVideo.status).toBe(404);
    expect(asVideo.body).toStrictEqual(notFound(`Task '${imageId}' was not found.`));
    const cancelVideo = await request(gw.app).post(`/v1/images/tasks/${videoId}/cancel`).set(auth);
    expect(cancelVideo.status).toBe(404);
    expect(await store.getTask(videoId)).toMatchObject({ kind: 'video', status: 'queued' });

    // each kind ends on its own: the image run here, the video at its vendor
    expect((await imageTaskEnded(gw.url, imageId, KEY_A)).status).toBe('succeeded');
    expect((await request(gw.app).get(`${TASKS}/${videoId}`).set(auth)).body.id).toBe(videoId);
    expect(await store.getTask(imageId)).toMatchObject({ kind: 'image', status: 'succeeded' });
  });
});
