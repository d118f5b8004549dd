// The output checks on an Idempotency-Key request finished by another instance (docs/content-safety.md,
// docs/tenancy-and-billing.md "Idempotency-Key"): the instance running a keyed request on DashScope's
// asynchronous synthesis is killed after it recorded the task id; the survivor follows the task to its
// end and asks the caller's policy about the image before anything of it is downloaded, stored or kept.
// The image is flagged: the retry with the same key gets the refusal (never the image's bytes or URL),
// nothing is stored, one usage event books it as `flaggedImages` with the one generation made, and one
// `onModeration` event names it. Runs when REDIS_URL is set.
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModerationCheckInput, ModerationEvent, UsageEvent } from '../../lib/index.js';
import { localResultStorage } from '../../lib/storage.js';
import { type FakePaidImages, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { quotaUsed } from '../helpers/paid-work.js';
import { redisCluster } from '../helpers/redis-cluster.js';
import { tempDir } from '../helpers/temp-dir.js';

const REDIS_URL = process.env.REDIS_URL;
const SECRET = `whsec_${Buffer.from('content-safety-kept-secret-0123').toString('base64')}`;
// generous: the configured lease is 2 s, so the normal time is a few seconds
const RESOLVED_WITHIN_MS = 60_000;

/** Every file under `directory`, at any depth. */
function filesUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter((name) => statSync(path.join(directory, name)).isFile());
}

describe.runIf(Boolean(REDIS_URL))('output checks on an Idempotency-Key request finished by another instance', () => {
  let images: FakePaidImages;
  const cluster = redisCluster(REDIS_URL!, 'gw-cskept');
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
      // the upstream's own deadline is far: the request is still waiting on its task when it is killed
      imageTimeoutMs: 120_000,
      leaseSeconds: 2,
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

  const recordedTask = () => cluster.recordedTask();

  it('the followed image is flagged: the retry gets the refusal, nothing is stored, booked once as flaggedImages with one moderation event', async () => {
    const directory = tempDir('content-safety-kept-');
    const events: ModerationEvent[] = [];
    const checks: ModerationCheckInput[] = [];
    // the victim runs without a policy (a function does not cross to its process): the survivor asks its
    // own, as the policy is never stored with the key
    const survivor = cluster.instance({
      moderation: {
        outputImages: true,
        check: (input) => {
          checks.push(input);
          return input.stage === 'outputImages' ? { flagged: true, categories: ['sexual'] } : { flagged: false, categories: [] };
        },
      },
      onModeration: (event) => events.push(event),
      storage: localResultStorage({ directory, secret: 'content-safety-kept-results-0123456789' }),
    });
    const { url, kill } = await cluster.spawn();
    releases.push(images.hold());
    const key = `flagged-${randomBytes(6).toString('hex')}`;
    const body = { model: 'x-image-plus', prompt: 'a lighthouse followed by its id' };
    const first = fetch(`${url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    }).catch((error: unknown) => error);
    await expect.poll(recordedTask, { timeout: 10_000, interval: 50 }).toMatchObject({ provider: 'dashscope', id: 'ds-task-1' });
    await kill();
    expect(await first).toBeInstanceOf(Error);
    for (const release of releases.splice(0)) release();

    let answer: request.Response | undefined;
    await expect
      .poll(
        async () => {
          answer = await request(survivor.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', key).send(body);
          return answer.body?.error?.code !== 'idempotency_key_in_use';
        },
        { timeout: RESOLVED_WITHIN_MS, interval: 200 },
      )
      .toBe(true);
    expect(answer!.status, answer!.text).toBe(400);
    expect(answer!.body.error).toMatchObject({ code: 'content_policy_violation', categories: ['sexual'], stage: 'output' });
    // neither the image's URL nor its bytes: the fake tags each image with its generation
    expect(answer!.text).not.toMatch(/generation-\d|b64_json|"url"/);
    // a second retry is the same refusal, kept for the key: nothing runs again
    const again = await request(survivor.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', key).send(body);
    expect(again.status).toBe(400);
    expect(again.body).toEqual(answer!.body);
    expect(filesUnder(directory)).toEqual([]);

    const keyed = (): UsageEvent[] => survivor.usage.filter((event) => event.route === 'images.generations' && event.errorCode !== 'idempotency_key_in_use');
    await expect.poll(() => keyed().length).toBe(1);
    expect(keyed()[0]).toMatchObject({
      status: 400,
      errorCode: 'content_policy_violation',
      images: 0,
      flaggedImages: 1,
      vendorWork: { images: 1, attempts: [{ provider: 'dashscope', id: 'ds-task-1', images: 1, outcome: 'made' }] },
    });
    expect(keyed()[0]!.storedBytes ?? 0).toBe(0);
    // the books match the paid work: one image made, once
    expect(images.started()).toBe(1);
    expect(images.imagesMade()).toBe(1);
    expect(keyed()[0]!.vendorWork?.images).toBe(images.imagesMade());
    expect(events.filter((event) => event.stage === 'outputImages')).toEqual([expect.objectContaining({ stage: 'outputImages', flagged: true, categories: ['sexual'] })]);
    expect(checks.filter((input) => input.stage === 'outputImages')).toHaveLength(1);
    // the tenant is charged as the books say: a flagged image is not given
    expect(await quotaUsed(survivor.router, 'images')).toBe(keyed()[0]!.images + (keyed()[0]!.undeliveredImages ?? 0));
  }, 120_000);
});
