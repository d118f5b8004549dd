// Idempotency-Key requests that survive their instance (docs/tenancy-and-billing.md "Retries"): a
// synchronous request with a key whose upstream has a task API of its own (DashScope's asynchronous
// synthesis, a Replicate prediction) runs on it and records the upstream id in the key's lease. Two
// gateway instances on one Redis; the one running the request is killed with SIGKILL after the id was
// recorded: the survivor follows the upstream task to its end, the retry receives the image replayed,
// exactly one generation was started, one usage event books it as delivered with the vendor's attempt
// `made` under its id, and the quota counter equals the events. Killed before the id was recorded: the
// request is booked as lost and the retry told, as before. Runs when REDIS_URL is set.
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { UsageEvent } from '../../lib/index.js';
import { type FakePaidImages, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { type FakeReplicate, REPLICATE_TOKEN, startFakeReplicate } from '../helpers/fake-replicate.js';
import { KEY_A, listen } from '../helpers/gateway-app.js';
import { quotaUsed } from '../helpers/paid-work.js';
import { redisCluster } from '../helpers/redis-cluster.js';
import type { RedisInstance } from '../helpers/redis-instance.js';

const REDIS_URL = process.env.REDIS_URL;
const SECRET = `whsec_${Buffer.from('key-recovery-test-secret-012345').toString('base64')}`;
// generous bounds: the configured lease is 2 s, so the normal time is a few seconds
const RESOLVED_WITHIN_MS = 60_000;
const REPLICATE_MODEL = 'black-forest-labs/flux-kontext-pro';

describe.runIf(Boolean(REDIS_URL))('Idempotency-Key requests on an upstream task survive their instance, across instances sharing Redis', () => {
  let images: FakePaidImages;
  let replicate: FakeReplicate;
  const cluster = redisCluster(REDIS_URL!, 'gw-keyrec');
  const servers: Array<{ close(): Promise<void> }> = [];
  const releases: Array<() => void> = [];

  beforeAll(async () => {
    images = await startFakePaidImages();
    replicate = await startFakeReplicate();
  });
  beforeEach(() => {
    cluster.start({
      arkBaseURL: images.arkBaseURL,
      signingSecret: SECRET,
      imagesBaseURL: images.dashscopeBaseURL,
      replicate: { baseURL: replicate.baseURL, apiKey: REPLICATE_TOKEN },
      imagesPerMinute: 100,
      // the upstream's own deadline is far: the request is still waiting on its task when it is killed
      imageTimeoutMs: 120_000,
      leaseSeconds: 2,
      idempotency: true,
    });
  });
  afterEach(async () => {
    for (const release of releases.splice(0)) release();
    await Promise.all(servers.splice(0).map((server) => server.close()));
    await cluster.stop();
    await images.settled();
    images.reset();
    replicate.requests.length = 0;
  }, 30_000);
  afterAll(async () => {
    await images.close();
    await replicate.close();
  });

  const hold = (): void => {
    releases.push(images.hold());
  };
  /** The first request with the key, to the victim: it never answers (the victim is killed). */
  const sendFirst = (url: string, key: string, body: Record<string, unknown>): Promise<unknown> =>
    fetch(`${url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    }).catch((error: unknown) => error);
  const recordedTask = () => cluster.recordedTask();
  /** The retries a client sends until it has an answer other than "in use"; the codes it met on the way. */
  const retryUntilAnswered = async (survivor: RedisInstance, key: string, body: Record<string, unknown>, killedAt: number, moment: string) => {
    const met = new Set<string>();
    let answer: request.Response | undefined;
    await expect
      .poll(
        async () => {
          answer = await request(survivor.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', key).send(body);
          const code = answer.body?.error?.code as string | undefined;
          if (code) met.add(code);
          return code !== 'idempotency_key_in_use';
        },
        { timeout: RESOLVED_WITHIN_MS, interval: 200 },
      )
      .toBe(true);
    console.log(`[key-recovery] ${moment}: retry answered ${answer!.status} ${Date.now() - killedAt} ms after SIGKILL (lease 2 s)`);
    return { answer: answer!, met };
  };
  const keyed = (survivor: RedisInstance): UsageEvent[] => survivor.usage.filter((event) => event.route === 'images.generations' && event.errorCode !== 'idempotency_key_in_use');
  const chargedIn = (events: UsageEvent[]): number => events.reduce((sum, event) => sum + event.images + (event.undeliveredImages ?? 0), 0);

  it('a live instance answers a keyed DashScope-async request from the upstream task, and books it with the task id', async () => {
    const survivor = cluster.instance();
    const key = `live-${randomBytes(6).toString('hex')}`;
    const body = { model: 'x-image-plus', prompt: 'a live keyed request' };
    const first = await request(survivor.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', key).send(body);
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toEqual([expect.objectContaining({ url: expect.stringContaining('generation-1-0') })]);
    expect(images.requests.some((r) => r.path === '/api/v1/services/aigc/text2image/image-synthesis' && r.headers['x-dashscope-async'] === 'enable')).toBe(true);
    await expect.poll(() => keyed(survivor).length).toBe(1);
    expect(keyed(survivor)[0]).toMatchObject({ status: 200, images: 1, vendorWork: { images: 1, attempts: [{ provider: 'dashscope', id: 'ds-task-1', images: 1, outcome: 'made' }] } });
    const replay = await request(survivor.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', key).send(body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(images.started()).toBe(1);
    expect(await quotaUsed(survivor.router, 'images')).toBe(chargedIn(keyed(survivor)));
  }, 90_000);

  it("killed after DashScope's task id was recorded: the survivor follows the task, and the retry (the openai SDK too) gets the image replayed, paid once", async () => {
    const { url, kill } = await cluster.spawn();
    const survivor = cluster.instance();
    const server = await listen(survivor.app);
    servers.push(server);
    hold();
    const key = `recover-${randomBytes(6).toString('hex')}`;
    const body = { model: 'x-image-plus', prompt: 'followed from its id' };
    const first = sendFirst(url, key, body);
    await expect.poll(recordedTask, { timeout: 10_000, interval: 50 }).toMatchObject({ provider: 'dashscope', id: 'ds-task-1' });
    const killedAt = await kill();
    expect(await first).toBeInstanceOf(Error);
    for (const release of releases.splice(0)) release();

    const { answer, met } = await retryUntilAnswered(survivor, key, body, killedAt, 'DashScope task id recorded');
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers['idempotent-replayed']).toBe('true');
    expect(answer.body.data).toEqual([expect.objectContaining({ url: expect.stringContaining('generation-1-0') })]);
    // while it was followed the key was only ever "in use": never interrupted
    expect([...met].filter((code) => code !== 'idempotency_key_in_use')).toEqual([]);

    // the official SDK at its default retries, with the same key: the same image, replayed
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY_A });
    const { data, response } = await client.images.generate({ model: 'x-image-plus', prompt: 'followed from its id' }, { headers: { 'Idempotency-Key': key } }).withResponse();
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    expect(data.data?.[0]?.url).toContain('generation-1-0');

    expect(images.started()).toBe(1);
    await expect.poll(() => keyed(survivor).length).toBe(1);
    expect(keyed(survivor)[0]).toMatchObject({
      caller: { id: 'tenant-a' },
      route: 'images.generations',
      model: 'x-image-plus',
      provider: 'dashscope',
      status: 200,
      images: 1,
      vendorWork: { images: 1, attempts: [{ provider: 'dashscope', id: 'ds-task-1', images: 1, outcome: 'made' }] },
    });
    expect(keyed(survivor)[0]!.absorbedImages).toBeUndefined();
    expect(survivor.usage.filter((event) => event.errorCode === 'idempotency_key_interrupted')).toEqual([]);
    expect(await quotaUsed(survivor.router, 'images')).toBe(chargedIn(keyed(survivor)));
    expect(await quotaUsed(survivor.router, 'images')).toBe(1);
  }, 120_000);

  it("killed after DashScope's task id was recorded, nobody retrying: the key's watch follows it, and the later retry gets the answer", async () => {
    const { url, kill } = await cluster.spawn();
    const survivor = cluster.instance();
    hold();
    const key = `watched-${randomBytes(6).toString('hex')}`;
    const body = { model: 'x-image-plus', prompt: 'followed by the watch' };
    const first = sendFirst(url, key, body);
    await expect.poll(recordedTask, { timeout: 10_000, interval: 50 }).toMatchObject({ provider: 'dashscope' });
    const killedAt = await kill();
    await first;
    for (const release of releases.splice(0)) release();

    await expect.poll(() => keyed(survivor).length, { timeout: RESOLVED_WITHIN_MS, interval: 100 }).toBe(1);
    console.log(`[key-recovery] no retry: followed to its end by the watch ${Date.now() - killedAt} ms after SIGKILL (lease 2 s)`);
    expect(keyed(survivor)[0]).toMatchObject({ status: 200, images: 1, vendorWork: { images: 1, attempts: [{ provider: 'dashscope', id: 'ds-task-1', images: 1, outcome: 'made' }] } });
    const retry = await request(survivor.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', key).send(body);
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.data).toEqual([expect.objectContaining({ url: expect.stringContaining('generation-1-0') })]);
    expect(images.started()).toBe(1);
    expect(keyed(survivor)).toHaveLength(1);
    expect(await quotaUsed(survivor.router, 'images')).toBe(1);
  }, 120_000);

  it('killed after the task id was recorded, and the upstream task fails: booked as failed (nothing billed), the retry is told interrupted', async () => {
    const { url, kill } = await cluster.spawn();
    const survivor = cluster.instance();
    hold();
    images.script = () => ({ taskFails: true });
    const key = `failed-${randomBytes(6).toString('hex')}`;
    const body = { model: 'x-image-plus', prompt: 'a task that fails' };
    const first = sendFirst(url, key, body);
    await expect.poll(recordedTask, { timeout: 10_000, interval: 50 }).toMatchObject({ provider: 'dashscope' });
    const killedAt = await kill();
    await first;
    for (const release of releases.splice(0)) release();

    const { answer } = await retryUntilAnswered(survivor, key, body, killedAt, 'upstream task failed');
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe('idempotency_key_interrupted');
    const booked = keyed(survivor).filter((event) => event.status !== 409);
    expect(booked).toHaveLength(1);
    expect(booked[0]).toMatchObject({ images: 0, vendorWork: { images: 0, attempts: [{ provider: 'dashscope', id: 'ds-task-1', images: 0, outcome: 'failed' }] } });
    expect(booked[0]!.absorbedImages).toBeUndefined();
    expect(booked[0]!.cost?.amount ?? 0).toBe(0);
    expect(images.started()).toBe(1);
    expect(await quotaUsed(survivor.router, 'images')).toBe(0);
  }, 120_000);

  it("killed before DashScope's task id was recorded: booked once as possibly paid, and the retry is told interrupted (as before)", async () => {
    const { url, kill } = await cluster.spawn();
    const survivor = cluster.instance();
    images.holdSubmits = true;
    hold();
    const key = `window-${randomBytes(6).toString('hex')}`;
    const body = { model: 'x-image-plus', prompt: 'the window before the id' };
    const first = sendFirst(url, key, body);
    // DashScope has made the task (paid); its id has not reached the victim
    await expect.poll(() => images.started(), { timeout: 10_000, interval: 20 }).toBe(1);
    const killedAt = await kill();
    await first;
    for (const release of releases.splice(0)) release();
    expect(await recordedTask()).toBeUndefined();

    const { answer } = await retryUntilAnswered(survivor, key, body, killedAt, 'before the task id');
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe('idempotency_key_interrupted');
    expect(answer.headers['x-should-retry']).toBe('false');
    const lost = survivor.usage.filter((event) => event.errorCode === 'idempotency_key_interrupted' && event.status === 502);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ images: 0, absorbedImages: 1, lostBy: 'gateway', vendorWork: { images: 1, attempts: [{ provider: 'dashscope', images: 1, outcome: 'unknown' }] } });
    expect(images.started()).toBe(1);
    expect(await quotaUsed(survivor.router, 'images')).toBe(0);
  }, 120_000);

  it("killed after Replicate's prediction id was recorded: the survivor reads the prediction to its end, and the retry gets the image, paid once", async () => {
    const { url, kill } = await cluster.spawn();
    const survivor = cluster.instance();
    const release = replicate.hold();
    releases.push(release);
    const key = `replicate-${randomBytes(6).toString('hex')}`;
    const body = { model: REPLICATE_MODEL, prompt: 'a prediction followed from its id' };
    const first = sendFirst(url, key, body);
    await expect.poll(recordedTask, { timeout: 10_000, interval: 50 }).toMatchObject({ provider: 'replicate' });
    const recorded = (await recordedTask())!;
    const killedAt = await kill();
    await first;
    for (const item of releases.splice(0)) item();

    const { answer } = await retryUntilAnswered(survivor, key, body, killedAt, 'Replicate prediction id recorded');
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers['idempotent-replayed']).toBe('true');
    expect(answer.body.data).toHaveLength(1);
    expect(replicate.created()).toBe(1);
    await expect.poll(() => keyed(survivor).length).toBe(1);
    expect(keyed(survivor)[0]).toMatchObject({
      status: 200,
      images: 1,
      provider: 'replicate',
      vendorWork: { images: 1, attempts: [{ provider: 'replicate', id: recorded.id, images: 1, outcome: 'made' }] },
    });
    expect(await quotaUsed(survivor.router, 'images')).toBe(1);
  }, 120_000);
});
