// Money budgets across two gateway instances sharing one Redis (docs/tenancy-and-billing.md "Money
// budgets"): each request reserves the most it may cost by the price table and is settled to what the
// upstream made (the fake counts its paid work); a refused request is a 429 naming the budget and
// reaches no upstream; a request that failed before any work gives its reservation back; the budget
// refills when its window ends (a 1 s window, `quotas.budgetWindowSeconds`); a Seedance task with
// `duration: -1` reserves the model's longest video and settles on the length Ark reports.
// Runs when REDIS_URL is set.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { QuotaLimits, Upstream } from '../../lib/index.js';
import { type FakeArk, startFakeArk } from '../helpers/fake-ark.js';
import { type FakePaidImages, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.js';
import { KEY_A, type TestGateway, createTestGateway } from '../helpers/gateway-app.js';
import { removeRedisKeys } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.REDIS_URL;
const GENERATIONS = '/v1/images/generations';
const TASKS = '/api/v3/contents/generations/tasks';
const CALLER = { id: 'tenant-a' };
const auth = { Authorization: `Bearer ${KEY_A}` };

interface Instance extends TestGateway {
  client: Redis;
}

describe.runIf(Boolean(REDIS_URL))('money budgets across instances sharing Redis', () => {
  let images: FakePaidImages;
  let ark: FakeArk;
  let llm: FakeLlm;
  let namespace = '';
  const running: Instance[] = [];

  const instance = (limits: QuotaLimits, budgetWindowSeconds?: number): Instance => {
    const client = new Redis(REDIS_URL!, { maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    const gateway = createTestGateway({
      resolveUpstream: ({ model, route }): Upstream => {
        if (route === 'video.tasks') return { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-key' };
        if (route === 'chat.completions') return { provider: 'openai', baseURL: llm.baseURL, apiKey: 'llm-key' };
        // nothing listens on port 9: the call fails before any work starts
        if (model === 'x-image-2.0-down') return { provider: 'dashscope', baseURL: 'http://127.0.0.1:9/api/v1', apiKey: 'ds-key' };
        return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'ds-key' };
      },
      tenancy: {
        pricing: {
          currency: 'USD',
          models: {
            // the fake reports 1024x1024 images; a size no row names costs the default
            'x-image-2.0*': { image: { default: 0.1, by: { '1024x1024': 0.05 } } },
            'doubao-seedance-1-5-pro*': { videoSecond: { default: 0.05, by: { '720p': 0.02 } } },
            // the fake answers 5 input and 2 output tokens: 0.05 + 0.04
            'x-chat': { tokens: { input: 10_000, output: 20_000 } },
          },
        },
        quotas: { limits, redis: client, prefix: `${namespace}:quota:`, ...(budgetWindowSeconds ? { budgetWindowSeconds } : {}) },
      },
    });
    const started: Instance = {
      ...gateway,
      client,
      close: async () => {
        await gateway.close();
        client.disconnect();
      },
    };
    running.push(started);
    return started;
  };

  const budgetOf = async (gw: Instance) => (await gw.router.quota(CALLER)).find((state) => state.name === 'budget')!;
  const costs = (...instances: Instance[]) => instances.flatMap((gw) => gw.usage.map((event) => event.cost?.amount ?? 0)).reduce((sum, amount) => sum + amount, 0);

  beforeAll(async () => {
    images = await startFakePaidImages();
    ark = await startFakeArk();
    llm = await startFakeLlm();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((gw) => gw.close()));
    await removeRedisKeys(REDIS_URL!, [`${namespace}:*`]);
  });
  afterAll(async () => {
    await images.close();
    await ark.close();
    await llm.close();
  });

  it('two instances draw from one budget: reserved at the most, settled to what was made, a 429 naming the budget', async () => {
    namespace = `gw-mb-${randomBytes(4).toString('hex')}`;
    const a = instance({ budget: 0.3 });
    const b = instance({ budget: 0.3 });
    const made = images.imagesMade();
    const started = images.started();
    // no size asked: each reserves 2 x 0.10 (the dearest image), and is settled to 2 x 0.05 (the size made)
    expect((await request(a.app).post(GENERATIONS).set(auth).send({ model: 'x-image-2.0', prompt: 'a cat', n: 2 })).status).toBe(200);
    expect(await budgetOf(b)).toMatchObject({ limit: 0.3, remaining: 0.2 });
    expect((await request(b.app).post(GENERATIONS).set(auth).send({ model: 'x-image-2.0', prompt: 'a cat', n: 2 })).status).toBe(200);
    expect(await budgetOf(a)).toMatchObject({ remaining: 0.1 });

    // 0.20 more may be spent, 0.10 remains: refused before any upstream call
    const refused = await request(a.app).post(GENERATIONS).set(auth).send({ model: 'x-image-2.0', prompt: 'a cat', n: 2 });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit_error' });
    expect(refused.body.error.message).toBe('Budget exceeded: 0.30 USD per 86400 s (budget); this request may cost up to 0.20 USD and 0.10 USD remain. Retry in 86400 s.');
    expect(refused.headers['ratelimit-policy']).toBe('"budget";q=300000;w=86400');

    // what the upstream made is what was spent, and what the events cost
    expect(images.started() - started).toBe(2);
    expect(images.imagesMade() - made).toBe(4);
    expect(costs(a, b)).toBeCloseTo(4 * 0.05, 6);
    expect(await budgetOf(b)).toMatchObject({ remaining: expect.closeTo(0.3 - 4 * 0.05, 6) });
  });

  it('a request that failed before any work gives its reservation back', async () => {
    namespace = `gw-mb-${randomBytes(4).toString('hex')}`;
    const a = instance({ budget: 1 });
    const b = instance({ budget: 1 });
    const started = images.started();
    const failed = await request(a.app).post(GENERATIONS).set(auth).send({ model: 'x-image-2.0-down', prompt: 'a cat', n: 4 });
    expect(failed.status).toBe(502);
    expect(images.started()).toBe(started);
    expect(a.usage.at(-1)).toMatchObject({ status: 502, cost: { amount: 0, currency: 'USD' } });
    expect(await budgetOf(b)).toMatchObject({ limit: 1, remaining: 1 });
  });

  it('the budget refills when its window ends', async () => {
    namespace = `gw-mb-${randomBytes(4).toString('hex')}`;
    const a = instance({ budget: 0.1 }, 1);
    const b = instance({ budget: 0.1 }, 1);
    expect((await request(a.app).post(GENERATIONS).set(auth).send({ model: 'x-image-2.0', prompt: 'a cat' })).status).toBe(200);
    expect((await request(b.app).post(GENERATIONS).set(auth).send({ model: 'x-image-2.0', prompt: 'a cat' })).status).toBe(429);
    // wait for the window to end as the counters say, not for a guessed time
    const deadline = Date.now() + 10_000;
    while ((await budgetOf(b)).remaining < 0.1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await budgetOf(b)).toMatchObject({ remaining: 0.1 });
    expect((await request(b.app).post(GENERATIONS).set(auth).send({ model: 'x-image-2.0', prompt: 'a cat' })).status).toBe(200);
  });

  it('tokens cannot be reserved: each chat is settled to its tokens, and a caller past the budget is refused', async () => {
    namespace = `gw-mb-${randomBytes(4).toString('hex')}`;
    const a = instance({ budget: 0.1 });
    const b = instance({ budget: 0.1 });
    const chat = (gw: Instance) =>
      request(gw.app)
        .post('/v1/chat/completions')
        .set(auth)
        .send({ model: 'x-chat', messages: [{ role: 'user', content: 'hi' }] });
    const calls = llm.requests.length;
    expect((await chat(a)).status).toBe(200);
    expect(await budgetOf(b)).toMatchObject({ remaining: expect.closeTo(0.01, 6) });
    // 0.01 remains and nothing is reserved: it runs, and the budget is spent past its end
    expect((await chat(b)).status).toBe(200);
    expect(await budgetOf(a)).toMatchObject({ remaining: 0 });
    const refused = await chat(a);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toContain('(budget)');
    expect(llm.requests.length - calls).toBe(2);
    expect(costs(a, b)).toBeCloseTo(0.18, 6);
  });

  it('Seedance duration -1 reserves the model longest video and settles on the length Ark reports', async () => {
    namespace = `gw-mb-${randomBytes(4).toString('hex')}`;
    const a = instance({ budget: 1, videoSecondsPerDay: 100 });
    const b = instance({ budget: 1, videoSecondsPerDay: 100 });
    const created = await request(a.app)
      .post(TASKS)
      .set(auth)
      .send({ model: 'doubao-seedance-1-5-pro-251215', content: [{ type: 'text', text: 'a cat' }], duration: -1, resolution: '720p' });
    expect(created.status).toBe(200);
    // 12 s (the model's longest) at 720p reserved; the seconds too
    expect(await budgetOf(b)).toMatchObject({ remaining: expect.closeTo(1 - 12 * 0.02, 6) });
    expect((await b.router.quota(CALLER)).find((state) => state.name === 'video-seconds')).toMatchObject({ remaining: 88 });
    let status = '';
    // the task record is in a's memory store (the budget is what the instances share)
    for (let poll = 0; poll < 5 && status !== 'succeeded'; poll += 1)
      status = (
        await request(a.app)
          .get(`${TASKS}/${created.body.id as string}`)
          .set(auth)
      ).body.status as string;
    expect(status).toBe('succeeded');
    // the fake Ark made 5 s at 720p: settled to 5 x 0.02, and 7 seconds back
    const terminal = a.usage.find((event) => event.task?.status === 'succeeded')!;
    expect(terminal.cost).toEqual({ amount: 0.1, currency: 'USD' });
    await expect.poll(async () => (await budgetOf(b)).remaining).toBeCloseTo(0.9, 6);
    await expect.poll(async () => (await b.router.quota(CALLER)).find((state) => state.name === 'video-seconds')?.remaining).toBe(95);
  });
});
