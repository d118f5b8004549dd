// Image tasks across gateway instances on one Redis (redisTaskStore + bullmqScheduler + Redis quotas,
// docs/image-tasks.md "Restarts and several instances"): a task submitted on one instance is answered by
// any; when the instance running it is killed (SIGKILL) mid-call, another ends it `failed`
// (task_interrupted) once its deadline passes, with its charge given back, exactly one terminal usage
// event, and the paid call never made again. Runs when REDIS_URL is set (.ci/run always sets it).
import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakePaidImages, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { quotaUsed } from '../helpers/paid-work.js';
import { redisCluster } from '../helpers/redis-cluster.js';

const REDIS_URL = process.env.REDIS_URL;
const SECRET = `whsec_${Buffer.from('redis-image-task-secret-01234567').toString('base64')}`;
const body = { model: 'x-image-2.0', prompt: 'a lighthouse' };

describe.runIf(Boolean(REDIS_URL))('image tasks across instances sharing Redis', () => {
  let images: FakePaidImages;
  const cluster = redisCluster(REDIS_URL!, 'gw-img');

  beforeAll(async () => {
    images = await startFakePaidImages();
  });
  afterEach(async () => {
    await cluster.stop();
    images.reset();
  });
  afterAll(async () => {
    await images.close();
  });

  beforeEach(() => {
    cluster.start({ arkBaseURL: images.arkBaseURL, signingSecret: SECRET, imagesBaseURL: images.dashscopeBaseURL, imagesPerMinute: 100 });
  });

  it('a task submitted on one instance is answered, and only to its owner, by another', async () => {
    const one = cluster.instance();
    const two = cluster.instance();
    const created = await request(one.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Prefer', 'respond-async').send(body);
    expect(created.status).toBe(202);
    await expect.poll(async () => (await request(two.app).get(`/v1/images/tasks/${created.body.id}`).set('Authorization', `Bearer ${KEY_A}`)).body.status, { timeout: 10_000 }).toBe('succeeded');
    expect((await request(two.app).get(`/v1/images/tasks/${created.body.id}`).set('Authorization', `Bearer ${KEY_B}`)).status).toBe(404);
    expect(images.started()).toBe(1);
  });

  it("SIGKILL of the instance that submitted a task to DashScope's own task API: another resumes following it, and it succeeds", async () => {
    const child = await cluster.spawn();
    const survivor = cluster.instance();
    const release = images.hold();
    try {
      const created = await request(child.url).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Prefer', 'respond-async').send({ model: 'x-image-plus', prompt: 'resumed' });
      expect(created.status).toBe(202);
      // the child has submitted upstream and read the task once: the id is recorded and following scheduled
      await expect.poll(() => images.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v1/tasks/')).length, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0);
      child.process.kill('SIGKILL');
      release();
      await expect
        .poll(async () => (await request(survivor.app).get(`/v1/images/tasks/${created.body.id}`).set('Authorization', `Bearer ${KEY_A}`)).body.status, { timeout: 20_000, interval: 250 })
        .toBe('succeeded');
      await expect.poll(() => survivor.usage.filter((event) => event.task?.id === created.body.id).length).toBe(1);
      expect(survivor.usage.find((event) => event.task?.id === created.body.id)).toMatchObject({ images: 1, task: { status: 'succeeded' } });
      expect(await quotaUsed(survivor.router, 'images')).toBe(1);
      expect(images.started()).toBe(1);
    } finally {
      release();
    }
  }, 40_000);

  it('SIGKILL of the instance running a task: another ends it failed (task_interrupted), refunds it, reports it once, and never calls the upstream again', async () => {
    const child = await cluster.spawn();
    const survivor = cluster.instance();
    const release = images.hold();
    try {
      const created = await request(child.url)
        .post('/v1/images/generations')
        .set('Authorization', `Bearer ${KEY_A}`)
        .set('Prefer', 'respond-async')
        .send({ ...body, n: 2 });
      expect(created.status).toBe(202);
      // the paid call has started in the child: kill it there
      await expect.poll(() => images.started(), { timeout: 5_000, interval: 20 }).toBe(1);
      child.process.kill('SIGKILL');
      expect(await quotaUsed(survivor.router, 'images')).toBe(2);
      let task: Record<string, unknown> = {};
      await expect
        .poll(
          async () => {
            task = (await request(survivor.app).get(`/v1/images/tasks/${created.body.id}`).set('Authorization', `Bearer ${KEY_A}`)).body as Record<string, unknown>;
            return task.status;
          },
          { timeout: 25_000, interval: 250 },
        )
        .toBe('failed');
      expect((task.error as { code: string }).code).toBe('task_interrupted');
      await expect.poll(() => survivor.usage.filter((event) => event.task?.id === created.body.id).length).toBe(1);
      expect(survivor.usage.find((event) => event.task?.id === created.body.id)).toMatchObject({ images: 0, errorCode: 'task_interrupted', task: { status: 'failed' } });
      expect(await quotaUsed(survivor.router, 'images')).toBe(0);
      expect(images.started()).toBe(1);
    } finally {
      release();
    }
  }, 40_000);
});
