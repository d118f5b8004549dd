// OpenAI's videos API across two gateway instances on one Redis (redisTaskStore + bullmqScheduler) and
// one result storage: a video created with the `openai` SDK on one instance is retrieved, listed,
// downloaded (Range honoured) and deleted on the other; one Veo operation, one terminal usage event.
// Runs when REDIS_URL is set (.ci/run always sets it).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bullmqScheduler, redisTaskStore } from '../../lib/redis.js';
import { localResultStorage } from '../../lib/storage.js';
import { GEMINI_KEY } from '../helpers/fake-gemini.js';
import { type FakeVeo, VEO_VIDEO, startFakeVeo } from '../helpers/fake-veo.js';
import { KEY_A, KEY_B, type TestGateway, createTestGateway, listen } from '../helpers/gateway-app.js';
import { removeRedisKeys } from '../helpers/redis-keys.js';
import { tempDir } from '../helpers/temp-dir.js';

const REDIS_URL = process.env.REDIS_URL;
const VEO = 'veo-3.0-generate-001';

describe.runIf(Boolean(REDIS_URL))('OpenAI videos across instances sharing Redis', () => {
  const namespace = `gw-ovid-${randomBytes(4).toString('hex')}`;
  const directory = tempDir('openai-videos-redis-');
  let veo: FakeVeo;
  const running: Array<{ gateway: TestGateway; client: Redis; server: { url: string; close(): Promise<void> } }> = [];

  // both instances keep results in one directory with one secret, as instances behind one balancer do
  const instance = async (): Promise<{ gateway: TestGateway; url: string }> => {
    const client = new Redis(REDIS_URL!);
    const gateway = createTestGateway({
      store: redisTaskStore({ client, prefix: `${namespace}:` }),
      callbacks: { scheduler: bullmqScheduler({ connection: client, queueName: namespace, prefix: 'gwtest', lockDurationMs: 1_500, stalledIntervalMs: 500 }) },
      storage: localResultStorage({ directory, secret: 'a-shared-results-secret-of-more-than-32-chars' }),
      resolveUpstream: () => ({ provider: 'gemini', baseURL: veo.baseURL, apiKey: GEMINI_KEY, model: VEO }),
    });
    const server = await listen(gateway.app);
    running.push({ gateway, client, server });
    return { gateway, url: server.url };
  };

  beforeAll(async () => {
    veo = await startFakeVeo();
  });
  afterAll(async () => {
    for (const { gateway, client, server } of running) {
      await server.close();
      await gateway.close();
      client.disconnect();
    }
    await removeRedisKeys(REDIS_URL!, [`${namespace}:*`, `gwtest:${namespace}:*`]);
    await veo.close();
  });

  it('a video created on one instance is retrieved, listed, downloaded and deleted on the other', async () => {
    const one = await instance();
    const two = await instance();
    const onOne = new OpenAI({ apiKey: KEY_A, baseURL: `${one.url}/v1` });
    const onTwo = new OpenAI({ apiKey: KEY_A, baseURL: `${two.url}/v1` });
    const started = veo.operationsStarted();

    const created = await onOne.videos.create({ model: VEO, prompt: 'a kite over dunes', seconds: '4', size: '720x1280' });
    expect(created.status).toBe('queued');
    let video = await onTwo.videos.retrieve(created.id);
    for (let attempt = 0; attempt < 20 && video.status !== 'completed' && video.status !== 'failed'; attempt += 1) video = await onTwo.videos.retrieve(created.id);
    expect(video).toMatchObject({ id: created.id, status: 'completed', seconds: '4', size: '720x1280', prompt: 'a kite over dunes' });

    const listed = await onTwo.videos.list();
    expect(listed.data.map((item) => item.id)).toEqual([created.id]);
    const foreign = await new OpenAI({ apiKey: KEY_B, baseURL: `${two.url}/v1` }).videos.list();
    expect(foreign.data).toEqual([]);

    const content = await onTwo.videos.downloadContent(created.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(VEO_VIDEO)).toBe(true);
    const ranged = await request(one.url).get(`/v1/videos/${created.id}/content`).set('Authorization', `Bearer ${KEY_A}`).set('Range', 'bytes=0-9').buffer(true);
    expect(ranged.status).toBe(206);
    expect(Buffer.from(ranged.body as Buffer).equals(VEO_VIDEO.subarray(0, 10))).toBe(true);

    // one operation; of the two instances' usage events, exactly one is the video's terminal one
    expect(veo.operationsStarted() - started).toBe(1);
    const terminal = [...one.gateway.usage, ...two.gateway.usage].filter((event) => event.task?.id === created.id && event.task.status === 'succeeded');
    expect(terminal).toHaveLength(1);

    expect(await onOne.videos.delete(created.id)).toMatchObject({ id: created.id, deleted: true });
    await expect(onTwo.videos.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await onTwo.videos.list()).data).toEqual([]);
  });
});
