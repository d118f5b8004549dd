// Crashes found by leases (docs/image-tasks.md "Restarts and several instances", docs/tenancy-and-billing.md
// "Retries"): two gateway instances on one Redis, the one holding the work killed with SIGKILL at each
// moment that matters: a task queued behind another, a task mid-call, a task whose upstream has made
// its images but whose answer is held, a task between DashScope's asynchronous submit and the record of
// its id, a task after that id was recorded, and a synchronous request with an Idempotency-Key mid-call.
// The survivor resolves each about one (short) lease later, never starts a second generation, reports
// one usage event with the vendor work as the ledger books it, and its quota counters equal the events.
// The time to resolution is logged, not asserted. Runs when REDIS_URL is set (.ci/run always sets it).
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { UsageEvent } from '../../lib/index.js';
import { type FakePaidImages, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { quotaUsed } from '../helpers/paid-work.js';
import { redisCluster } from '../helpers/redis-cluster.js';
import type { RedisInstance } from '../helpers/redis-instance.js';

const REDIS_URL = process.env.REDIS_URL;
const SECRET = `whsec_${Buffer.from('crash-lease-test-secret-0123456').toString('base64')}`;
// generous: the configured lease is 2 s, so the normal time is a few seconds
const RESOLVED_WITHIN_MS = 60_000;

describe.runIf(Boolean(REDIS_URL))('crashes found by leases, across instances sharing Redis', () => {
  let images: FakePaidImages;
  const cluster = redisCluster(REDIS_URL!, 'gw-crash');
  const releases: Array<() => void> = [];

  beforeAll(async () => {
    images = await startFakePaidImages();
  });
  beforeEach(() => {
    cluster.start({
      arkBaseURL: images.arkBaseURL,
      signingSecret: SECRET,
      imagesBaseURL: images.dashscopeBaseURL,
      imagesPerMinute: 100,
      // the upstream's own deadline is far: only the lease can end the work soon
      imageTimeoutMs: 120_000,
      leaseSeconds: 2,
      imageTasksConcurrency: 1,
      idempotency: true,
    });
  });
  afterEach(async () => {
    for (const release of releases.splice(0)) release();
    await cluster.stop();
    await images.settled();
    images.reset();
  }, 30_000);
  afterAll(async () => {
    await images.close();
  });

  const hold = (): void => {
    releases.push(images.hold());
  };
  const submit = async (url: string, body: Record<string, unknown>): Promise<string> => {
    const created = await request(url).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Prefer', 'respond-async').send(body);
    expect(created.status, created.text).toBe(202);
    return created.body.id as string;
  };
  /** Polls the task on the survivor until it is terminal; logs how long that took after the kill. */
  const resolved = async (survivor: RedisInstance, id: string, killedAt: number, moment: string): Promise<Record<string, unknown>> => {
    let task: Record<string, unknown> = {};
    await expect
      .poll(
        async () => {
          task = (await request(survivor.app).get(`/v1/images/tasks/${id}`).set('Authorization', `Bearer ${KEY_A}`)).body as Record<string, unknown>;
          return ['succeeded', 'failed', 'cancelled'].includes(String(task.status));
        },
        { timeout: RESOLVED_WITHIN_MS, interval: 100 },
      )
      .toBe(true);
    console.log(`[crash-leases] ${moment}: task ${String(task.status)} ${Date.now() - killedAt} ms after SIGKILL (lease 2 s)`);
    return task;
  };
  const eventsOf = (survivor: RedisInstance, id: string): UsageEvent[] => survivor.usage.filter((event) => event.task?.id === id);
  /** The tenant's images in the events, as the quota counts them: delivered and charged undelivered. */
  const chargedIn = (events: UsageEvent[]): number => events.reduce((sum, event) => sum + event.images + (event.undeliveredImages ?? 0), 0);

  it('a task mid-call and one queued behind it: both end task_interrupted; the call is booked as possibly paid and absorbed, the queued one as nothing', async () => {
    const { url, kill } = await cluster.spawn();
    const survivor = cluster.instance();
    // the upstream works for a while: the victim is killed in the middle of its call
    images.workMs = 5_000;
    const runningId = await submit(url, { model: 'x-image-2.0', prompt: 'mid-call', n: 2 });
    const queuedId = await submit(url, { model: 'x-image-2.0', prompt: 'queued' });
    // the first task's paid call has started in the victim; the second waits for its slot there
    await expect.poll(() => images.started(), { timeout: 10_000, interval: 20 }).toBe(1);
    expect(await quotaUsed(survivor.router, 'images')).toBe(3);
    const killedAt = await kill();

    const midCall = await resolved(survivor, runningId, killedAt, 'mid-call');
    const queued = await resolved(survivor, queuedId, killedAt, 'queued');
    expect(midCall).toMatchObject({ status: 'failed', error: { code: 'task_interrupted' } });
    expect(String((midCall.error as { message: string }).message)).toContain('outcome is unknown');
    expect(queued).toMatchObject({ status: 'failed', error: { code: 'task_interrupted' } });
    expect(String((queued.error as { message: string }).message)).toContain('nothing was generated');

    await expect.poll(() => eventsOf(survivor, runningId).length + eventsOf(survivor, queuedId).length).toBe(2);
    expect(eventsOf(survivor, runningId)).toEqual([
      expect.objectContaining({
        images: 0,
        absorbedImages: 2,
        lostBy: 'gateway',
        errorCode: 'task_interrupted',
        vendorWork: { images: 2, attempts: [{ provider: 'dashscope', images: 2, outcome: 'unknown' }] },
        task: { id: runningId, status: 'failed' },
      }),
    ]);
    const [queuedEvent] = eventsOf(survivor, queuedId);
    expect(queuedEvent).toMatchObject({ images: 0, errorCode: 'task_interrupted', vendorWork: { images: 0, attempts: [] }, task: { id: queuedId, status: 'failed' } });
    expect(queuedEvent!.absorbedImages).toBeUndefined();
    expect(queuedEvent!.undeliveredImages).toBeUndefined();
    // the vendor's work is in the books once: what the fake made (it finishes its work, paid)
    expect(images.started()).toBe(1);
    expect(await quotaUsed(survivor.router, 'images')).toBe(chargedIn([...eventsOf(survivor, runningId), queuedEvent!]));
    expect(await quotaUsed(survivor.router, 'images')).toBe(0);
  }, 90_000);

  it('a task whose upstream made its images but whose answer was not received: booked as possibly paid, never run again', async () => {
    const { url, kill } = await cluster.spawn();
    const survivor = cluster.instance();
    hold();
    const id = await submit(url, { model: 'x-image-2.0', prompt: 'answered, not stored' });
    // the fake has made the image (paid) and holds its answer
    await expect.poll(() => images.started(), { timeout: 10_000, interval: 20 }).toBe(1);
    const killedAt = await kill();
    for (const release of releases.splice(0)) release();

    const task = await resolved(survivor, id, killedAt, 'answered but not stored');
    expect(task).toMatchObject({ status: 'failed', error: { code: 'task_interrupted' } });
    await expect.poll(() => eventsOf(survivor, id).length).toBe(1);
    expect(eventsOf(survivor, id)[0]).toMatchObject({
      images: 0,
      absorbedImages: 1,
      lostBy: 'gateway',
      vendorWork: { images: 1, attempts: [{ provider: 'dashscope', images: 1, outcome: 'unknown' }] },
    });
    expect(images.started()).toBe(1);
    expect(await quotaUsed(survivor.router, 'images')).toBe(chargedIn(eventsOf(survivor, id)));
  }, 90_000);

  it("a task killed between DashScope's asynchronous submit and the record of its id: booked as possibly paid", async () => {
    const { url, kill } = await cluster.spawn();
    const survivor = cluster.instance();
    images.holdSubmits = true;
    hold();
    const id = await submit(url, { model: 'x-image-plus', prompt: 'the window' });
    // DashScope has made the task (paid); its id has not reached the victim
    await expect.poll(() => images.started(), { timeout: 10_000, interval: 20 }).toBe(1);
    const killedAt = await kill();
    for (const release of releases.splice(0)) release();

    const task = await resolved(survivor, id, killedAt, 'between the async submit and its id');
    expect(task).toMatchObject({ status: 'failed', error: { code: 'task_interrupted' } });
    await expect.poll(() => eventsOf(survivor, id).length).toBe(1);
    expect(eventsOf(survivor, id)[0]).toMatchObject({
      images: 0,
      absorbedImages: 1,
      lostBy: 'gateway',
      vendorWork: { images: 1, attempts: [{ provider: 'dashscope', images: 1, outcome: 'unknown' }] },
    });
    expect(images.started()).toBe(1);
    expect(await quotaUsed(survivor.router, 'images')).toBe(0);
  }, 90_000);

  it("a task killed after DashScope's id was recorded: the survivor follows it to its end, and it succeeds", async () => {
    const { url, kill } = await cluster.spawn();
    const survivor = cluster.instance();
    hold();
    const id = await submit(url, { model: 'x-image-plus', prompt: 'followed' });
    // the victim has recorded the id and read the upstream task once
    await expect.poll(() => images.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v1/tasks/')).length, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0);
    const killedAt = await kill();
    for (const release of releases.splice(0)) release();

    const task = await resolved(survivor, id, killedAt, 'after the upstream id was stored');
    expect(task.status).toBe('succeeded');
    await expect.poll(() => eventsOf(survivor, id).length).toBe(1);
    expect(eventsOf(survivor, id)[0]).toMatchObject({ images: 1, task: { status: 'succeeded' } });
    expect(images.started()).toBe(1);
    expect(await quotaUsed(survivor.router, 'images')).toBe(chargedIn(eventsOf(survivor, id)));
  }, 90_000);

  it('a synchronous request with an Idempotency-Key killed mid-call: booked once by the survivor; the retry is told, never paid again', async () => {
    const { url, kill } = await cluster.spawn();
    const survivor = cluster.instance();
    hold();
    const key = `crash-${randomBytes(6).toString('hex')}`;
    const body = { model: 'x-image-2.0', prompt: 'keyed', n: 2 };
    const first = fetch(`${url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    }).catch((error: unknown) => error);
    await expect.poll(() => images.started(), { timeout: 10_000, interval: 20 }).toBe(1);
    const killedAt = await kill();
    expect(await first).toBeInstanceOf(Error);
    for (const release of releases.splice(0)) release();

    // the retries an SDK would send: "in use" while the lease holds, then told the request was interrupted
    let answer: request.Response | undefined;
    await expect
      .poll(
        async () => {
          answer = await request(survivor.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', key).send(body);
          return answer.body?.error?.code as string;
        },
        { timeout: RESOLVED_WITHIN_MS, interval: 100 },
      )
      .toBe('idempotency_key_interrupted');
    console.log(`[crash-leases] Idempotency-Key mid-call: retry told ${Date.now() - killedAt} ms after SIGKILL (lease 2 s)`);
    expect(answer!.status).toBe(409);
    expect(answer!.headers['x-should-retry']).toBe('false');

    const lost = (): UsageEvent[] => survivor.usage.filter((event) => event.errorCode === 'idempotency_key_interrupted' && event.status === 502);
    await expect.poll(() => lost().length).toBe(1);
    expect(lost()[0]).toMatchObject({
      caller: { id: 'tenant-a' },
      route: 'images.generations',
      model: 'x-image-2.0',
      provider: 'dashscope',
      images: 0,
      absorbedImages: 2,
      lostBy: 'gateway',
      vendorWork: { images: 2, attempts: [{ provider: 'dashscope', images: 2, outcome: 'unknown' }] },
    });
    expect(images.started()).toBe(1);
    // the survivor's events: the lost request's, and its refused retries (nothing charged)
    expect(await quotaUsed(survivor.router, 'images')).toBe(chargedIn(survivor.usage));
    expect(await quotaUsed(survivor.router, 'images')).toBe(0);

    // the key is free now: a deliberate new attempt runs (and is paid) once
    const again = await request(survivor.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', key).send(body);
    expect(again.status, again.text).toBe(200);
    expect(images.started()).toBe(2);
    const replay = await request(survivor.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', key).send(body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(images.started()).toBe(2);
  }, 90_000);

  it("an Idempotency-Key request killed mid-call that nobody retries: the key's watch on the survivor books it; the next request with the key is told", async () => {
    const { url, kill } = await cluster.spawn();
    const survivor = cluster.instance();
    hold();
    const key = `crash-${randomBytes(6).toString('hex')}`;
    const body = { model: 'x-image-2.0', prompt: 'keyed, never retried' };
    const first = fetch(`${url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    }).catch((error: unknown) => error);
    await expect.poll(() => images.started(), { timeout: 10_000, interval: 20 }).toBe(1);
    const killedAt = await kill();
    await first;
    for (const release of releases.splice(0)) release();

    const lost = (): UsageEvent[] => survivor.usage.filter((event) => event.errorCode === 'idempotency_key_interrupted');
    await expect.poll(() => lost().length, { timeout: RESOLVED_WITHIN_MS, interval: 100 }).toBe(1);
    console.log(`[crash-leases] Idempotency-Key mid-call, no retry: booked by the watch ${Date.now() - killedAt} ms after SIGKILL (lease 2 s)`);
    expect(lost()[0]).toMatchObject({ status: 502, images: 0, absorbedImages: 1, lostBy: 'gateway', vendorWork: { images: 1, attempts: [{ provider: 'dashscope', images: 1, outcome: 'unknown' }] } });
    expect(await quotaUsed(survivor.router, 'images')).toBe(0);

    const retry = await request(survivor.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', key).send(body);
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('idempotency_key_interrupted');
    expect(retry.headers['x-should-retry']).toBe('false');
    // booked once: the retry that was told did not book it again
    expect(lost().filter((event) => event.status === 502)).toHaveLength(1);
    expect(images.started()).toBe(1);
  }, 90_000);
});
