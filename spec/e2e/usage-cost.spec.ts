// Cost in money on the usage events (docs/tenancy-and-billing.md "Cost in money"): every event of a
// priced model carries `cost`, computed from what the upstream made (the fakes count it): DashScope
// images by their reported size, Seedream through the OpenAI route, gpt-image by quality and tokens,
// chat tokens, a video task's terminal event by its seconds and resolution (`duration: -1` priced at the
// length Ark reports), and amount 0 for work that failed.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { Upstream } from '../../lib/index.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { startFakePaidImages } from '../helpers/fake-paid-images.js';

const gateway = await gatewayWith({
  fakes: { images: startFakePaidImages, ark: startFakeArk, llm: startFakeLlm },
  resolve: ({ model, route }, fakes): Upstream | null => {
    if (route === 'video.tasks') return { provider: 'ark', baseURL: fakes.ark.baseURL, apiKey: 'ark-key' };
    if (route === 'chat.completions' || route === 'responses') return { provider: 'openai', baseURL: fakes.llm.baseURL, apiKey: 'llm-key' };
    if (model === 'x-broken') return { provider: 'dashscope', baseURL: 'http://127.0.0.1:9/api/v1', apiKey: 'ds-key' };
    if (model.startsWith('doubao-seedream')) return { provider: 'ark', baseURL: fakes.images.arkBaseURL, apiKey: 'ark-key' };
    if (model.startsWith('gpt-image')) return { provider: 'openai', baseURL: fakes.images.openaiBaseURL, apiKey: 'oa-key' };
    return { provider: 'dashscope', baseURL: fakes.images.dashscopeBaseURL, apiKey: 'ds-key' };
  },
  tenancy: {
    pricing: {
      currency: 'USD',
      models: {
        'x-image-2.0*': { image: { default: 0.1, by: { '1024x1024': 0.05 } } },
        'x-broken': { image: 0.1 },
        'doubao-seedream-4-0*': { image: 0.03 },
        'gpt-image-1': { image: 0.01, imageQuality: { high: 3 }, tokens: { input: 5, output: 40 } },
        'x-chat': { tokens: { input: 1, output: 2 } },
        'doubao-seedance-1-5-pro*': { videoSecond: { default: 0.2, by: { '720p': 0.1 } } },
      },
    },
  },
  resetEach: true,
});

const auth = { Authorization: `Bearer ${KEY_A}` };
const lastEvent = () => gateway.usage.at(-1)!;

describe('UsageEvent.cost', () => {
  it('DashScope images: the count the fake made at the size it reported', async () => {
    const before = gateway.fakes.images.imagesMade();
    const response = await request(gateway.app).post('/v1/images/generations').set(auth).send({ model: 'x-image-2.0', prompt: 'a cat', n: 3 });
    expect(response.status).toBe(200);
    const made = gateway.fakes.images.imagesMade() - before;
    expect(made).toBe(3);
    expect(lastEvent()).toMatchObject({ images: 3, cost: { amount: expect.closeTo(made * 0.05, 6), currency: 'USD' } });
    // the same cost on the answer, for clients such as the playground
    expect(response.headers['x-request-cost']).toBe(`${lastEvent().cost!.amount} USD`);
  });

  it('Seedream through the OpenAI route: per image returned', async () => {
    const response = await request(gateway.app).post('/v1/images/generations').set(auth).send({ model: 'doubao-seedream-4-0-250828', prompt: 'two cats', n: 2 });
    expect(response.status).toBe(200);
    expect(lastEvent()).toMatchObject({ provider: 'ark', images: 2, cost: { amount: expect.closeTo(0.06, 6), currency: 'USD' } });
  });

  it('gpt-image: images by the quality asked, plus the tokens the upstream reported', async () => {
    const response = await request(gateway.app).post('/v1/images/generations').set(auth).send({ model: 'gpt-image-1', prompt: 'a cat', quality: 'high' });
    expect(response.status).toBe(200);
    // the fake reports 10 input and 100 output tokens per image
    expect(lastEvent()).toMatchObject({ imageQuality: 'high', upstreamUsage: { input_tokens: 10, output_tokens: 100 }, cost: { amount: expect.closeTo(0.03 + (10 * 5 + 100 * 40) / 1e6, 9) } });
  });

  it('chat: the tokens of the answer', async () => {
    const response = await request(gateway.app)
      .post('/v1/chat/completions')
      .set(auth)
      .send({ model: 'x-chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(200);
    expect(lastEvent()).toMatchObject({ tokens: { input: 5, output: 2 }, cost: { amount: expect.closeTo((5 * 1 + 2 * 2) / 1e6, 9), currency: 'USD' } });
    expect(response.headers['x-request-cost']).toBe(`${lastEvent().cost!.amount} USD`);
  });

  it('a stream: the tokens of its last event, on the event when the stream ended (no header: it began before)', async () => {
    const response = await request(gateway.app).post('/v1/responses').set(auth).send({ model: 'x-chat', input: 'hi', stream: true });
    expect(response.status).toBe(200);
    expect(response.text).toContain('response.completed');
    expect(response.headers['x-request-cost']).toBeUndefined();
    await expect.poll(() => lastEvent().route).toBe('responses');
    expect(lastEvent()).toMatchObject({ tokens: { input: 5, output: 2 }, cost: { amount: expect.closeTo((5 * 1 + 2 * 2) / 1e6, 9), currency: 'USD' } });
  });

  it('a request that failed before any work: amount 0', async () => {
    const response = await request(gateway.app).post('/v1/images/generations').set(auth).send({ model: 'x-broken', prompt: 'a cat' });
    expect(response.status).toBeGreaterThanOrEqual(500);
    expect(lastEvent()).toMatchObject({ images: 0, cost: { amount: 0, currency: 'USD' } });
  });

  it('an unpriced model has no cost', async () => {
    const response = await request(gateway.app).post('/v1/images/generations').set(auth).send({ model: 'x-image-max', prompt: 'a cat' });
    expect(response.status).toBe(200);
    expect(lastEvent().cost).toBeUndefined();
  });

  it('a video task with duration -1: the terminal event priced by the seconds and resolution Ark reports', async () => {
    const created = await request(gateway.app)
      .post('/api/v3/contents/generations/tasks')
      .set(auth)
      .send({ model: 'doubao-seedance-1-5-pro-251215', content: [{ type: 'text', text: 'a cat' }], duration: -1 });
    expect(created.status).toBe(200);
    expect(lastEvent()).toMatchObject({ route: 'video.tasks', cost: { amount: 0, currency: 'USD' } });
    let status = '';
    for (let poll = 0; poll < 5 && status !== 'succeeded'; poll += 1) {
      status = (
        await request(gateway.app)
          .get(`/api/v3/contents/generations/tasks/${created.body.id as string}`)
          .set(auth)
      ).body.status as string;
    }
    expect(status).toBe('succeeded');
    const terminal = gateway.usage.find((event) => event.task?.status === 'succeeded')!;
    // the fake Ark made 5 s at 720p
    expect(terminal).toMatchObject({ video: { seconds: 5, resolution: '720p' }, cost: { amount: expect.closeTo(0.5, 6), currency: 'USD' } });
  });
});
