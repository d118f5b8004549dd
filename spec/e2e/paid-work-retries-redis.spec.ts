// A client's retry never pays twice across instances (README "Tenant controls"): two routers on one Redis
// (the stores of spec/helpers/paid-work-names.ts), one counting upstream, and a load balancer that sends
// each attempt of a client to the other instance. A retry on the other instance finds the running work
// or the kept answer and starts no second generation; a delivered answer is not handed out again; a kept
// answer expires on every instance; the shared quota and the usage events count each image once.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import request from 'supertest';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { GatewayOptions, UsageEvent } from '../../lib/index.js';
import { type FakePaidImages, OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A, type TestGateway, createTestGateway, listen } from '../helpers/gateway-app.js';
import { generationTags, imagesAccounted, imagesCharged, postAndLeave, quotaUsed } from '../helpers/paid-work.js';
import { keptAnswers, redisStores } from '../helpers/paid-work-names.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const MODEL = 'gpt-image-1';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const body = (prompt = 'a harbour in fog') => JSON.stringify({ model: MODEL, prompt });

interface Instance extends TestGateway {
  url: string;
}

interface Cluster {
  upstream: FakePaidImages;
  one: Instance;
  two: Instance;
  events(): UsageEvent[];
}

/** Two listening routers on one Redis namespace and one counting upstream, torn down when the test ends. */
async function cluster(options: Partial<GatewayOptions> = {}): Promise<Cluster> {
  const namespace = `paid-${randomBytes(6).toString('hex')}:`;
  const upstream = await startFakePaidImages();
  const clients: Redis[] = [];
  const closers: Array<() => Promise<void>> = [];
  const instance = async (): Promise<Instance> => {
    const client = new Redis(REDIS_URL);
    clients.push(client);
    const stores = redisStores(client, namespace, { imagesPerMinute: 100 });
    const gateway = createTestGateway({
      ...stores,
      resolveUpstream: () => ({ provider: 'openai', baseURL: upstream.openaiBaseURL, apiKey: 'sk-upstream-paid-work' }),
      ...options,
      // the kept answers' bounds go into the same Redis idempotency option
      ...(options.idempotency ? { idempotency: { ...(stores.idempotency as object), ...options.idempotency } } : {}),
    });
    const server = await listen(gateway.app);
    closers.push(
      () => server.close(),
      () => gateway.close(),
    );
    return { ...gateway, url: server.url };
  };
  const one = await instance();
  const two = await instance();
  onTestFinished(async () => {
    for (const close of closers) await close();
    await upstream.close();
    const keys = await clients[0]!.keys(`${namespace}*`);
    if (keys.length > 0) await clients[0]!.del(...keys);
    for (const client of clients) client.disconnect();
  });
  return { upstream, one, two, events: () => [...one.usage, ...two.usage] };
}

const post = (gw: Instance, text: string) => request(gw.app).post(OPENAI_IMAGES).set('Authorization', `Bearer ${KEY_A}`).set('Content-Type', 'application/json').send(text);
const leave = (gw: Instance, upstream: FakePaidImages, text: string) => postAndLeave({ url: gw.url, path: OPENAI_IMAGES, key: KEY_A, body: text, upstream });

/** A client whose attempts a load balancer sends to the instances in turn: the first to `first`, its retries to the other. */
function balancedClient(first: Instance, other: Instance, timeout?: number): OpenAI {
  let attempt = 0;
  return new OpenAI({
    baseURL: `${first.url}/v1`,
    apiKey: KEY_A,
    ...(timeout !== undefined ? { timeout } : {}),
    fetch: (input, init) => {
      // the SDK calls its fetch with the URL as a string
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const target = attempt++ % 2 === 0 ? url : url.replace(first.url, other.url);
      return fetch(target, init);
    },
  });
}

async function expectTruthfulBill(c: Cluster): Promise<void> {
  await c.upstream.settled();
  const made = c.upstream.imagesMade();
  await expect.poll(() => imagesAccounted(c.events()), { timeout: 5_000 }).toBe(made);
  await expect.poll(async () => (await quotaUsed(c.one.router, 'images')) === imagesCharged(c.events()), { timeout: 5_000 }).toBe(true);
}

describe('two routers on one Redis', () => {
  it('openai with a 1 s client timeout on a 2 s job, each attempt on the other instance: one generation, and the client ends with the image', async () => {
    const c = await cluster();
    c.upstream.workMs = 2_000;
    const client = balancedClient(c.one, c.two, 1_000);
    const outcome = await client.images.generate({ model: MODEL, prompt: 'a harbour in fog' }).then(
      (value) => value,
      (error: unknown) => error,
    );
    expect(outcome).not.toBeInstanceOf(Error);
    expect(generationTags(JSON.stringify(outcome))).toEqual(['generation-1-0']);
    expect(c.upstream.started()).toBe(1);
    await expectTruthfulBill(c);
  });

  it('a retry on the other instance while the work runs finds it: no second generation, and the image reaches the client', async () => {
    const c = await cluster();
    c.upstream.workMs = 1_500;
    await leave(c.one, c.upstream, body());
    // the openai SDK at its defaults, as the caller's retry would be sent
    const client = new OpenAI({ baseURL: `${c.two.url}/v1`, apiKey: KEY_A });
    const result = await client.images.generate({ model: MODEL, prompt: 'a harbour in fog' });
    expect(generationTags(JSON.stringify(result))).toEqual(['generation-1-0']);
    expect(c.upstream.started()).toBe(1);
    await expectTruthfulBill(c);
  });

  it('a retry on the other instance after the work ended gets the kept answer, once', async () => {
    const c = await cluster();
    c.upstream.workMs = 500;
    await leave(c.one, c.upstream, body());
    await c.upstream.settled();
    await sleep(200);
    const retry = await post(c.two, body());
    expect(retry.status).toBe(200);
    expect(generationTags(retry.text)).toEqual(['generation-1-0']);
    // delivered: neither instance hands it out again
    const again = await post(c.one, body());
    expect(generationTags(again.text)).toEqual(['generation-2-0']);
    expect(c.upstream.started()).toBe(2);
    await expectTruthfulBill(c);
  });

  it('a kept answer never outlives its time on any instance', async () => {
    const c = await cluster(keptAnswers({ ttlMs: 1_000 }));
    c.upstream.workMs = 500;
    await leave(c.one, c.upstream, body('kept'));
    await leave(c.one, c.upstream, body('expired'));
    await c.upstream.settled();
    const early = await post(c.two, body('kept'));
    expect(generationTags(early.text)).toEqual(['generation-1-0']);
    await sleep(1_600);
    const late = await post(c.two, body('expired'));
    expect(late.status).toBe(200);
    expect(generationTags(late.text)).toEqual(['generation-3-0']);
    expect(c.upstream.started()).toBe(3);
  });
});
