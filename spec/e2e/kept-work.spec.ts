// Paid work is not thrown away (docs/tenancy-and-billing.md "Retries"): a client that gives up while the
// upstream generates, and tries again, receives the image its first try paid for, and the upstream makes
// it once. The official openai SDK at its default retries (two), against a DashScope fake that counts the
// generations it starts and takes 1.5 s for each.
import OpenAI from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { DASHSCOPE_PATH, dashscopeSuccess, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const JOB_MS = 1_500;

async function slowGateway(timeoutMs?: number) {
  const gw = await gatewayWith({
    fakes: { dashscope: startFakeDashscope },
    resolve: ({ model }, { dashscope }) => (model.startsWith('x-image') ? { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'sk-up', ...(timeoutMs ? { timeoutMs } : {}) } : null),
  });
  const { dashscope } = gw.fakes;
  // every generation takes JOB_MS; the default responder serves the result images
  const slow = (): void =>
    dashscope.next(async (_request, res) => {
      await sleep(JOB_MS);
      const payload = dashscopeSuccess([dashscope.resultUrl('kept.png')]);
      sendJson(res, 200, payload, { 'x-request-id': String(payload.request_id) });
    });
  const generations = (): number => dashscope.requests.filter((recorded) => recorded.path === DASHSCOPE_PATH).length;
  return { gw, slow, generations };
}

describe('a client that gives up while its image is generated', () => {
  it('gets the image on its retry, from one generation, billed once (openai SDK, 0.5 s client timeout, default retries)', async () => {
    const { gw, slow, generations } = await slowGateway();
    slow();
    slow();
    slow();
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A, timeout: 600 });
    const image = await client.images.generate({ model: 'x-image-2.0', prompt: 'a lighthouse at dawn' });
    expect(image.data?.[0]?.url).toMatch(/kept\.png/);
    expect(generations()).toBe(1);
    // the image is billed once, on the event of the retry that received it; the first try's event
    // reports the vendor work, kept for that retry (its client left)
    await sleep(200);
    const billed = gw.usage.filter((event) => event.route === 'images.generations' && event.images + (event.undeliveredImages ?? 0) > 0);
    expect(billed).toHaveLength(1);
    expect(billed[0]).toMatchObject({ status: 200, images: 1, kept: { images: 1 } });
    expect(gw.usage.filter((event) => event.keptImages)).toMatchObject([{ status: 499, images: 0, keptImages: 1, vendorWork: { images: 1 } }]);
  });

  it('hands a kept answer out once: a later identical request runs again', async () => {
    const { gw, slow, generations } = await slowGateway();
    slow();
    const body = { model: 'x-image-2.0', prompt: 'once only' };
    const lost = fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(300),
    }).catch(() => undefined);
    await lost;
    await sleep(JOB_MS + 500);
    const retry = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    expect(retry.status).toBe(200);
    expect(retry.headers['x-kept-answer']).toBe('true');
    expect(generations()).toBe(1);
    const again = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    expect(again.status).toBe(200);
    expect(again.headers['x-kept-answer']).toBeUndefined();
    expect(generations()).toBe(2);
  });

  it('keeps nothing for two connected clients, and nothing for another tenant or another body', async () => {
    const { gw, slow, generations } = await slowGateway();
    slow();
    slow();
    const body = { model: 'x-image-2.0', prompt: 'two at once' };
    const [a, b] = await Promise.all([
      request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body),
      request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(generations()).toBe(2);

    slow();
    await fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'x-image-2.0', prompt: 'abandoned' }),
      signal: AbortSignal.timeout(300),
    }).catch(() => undefined);
    await sleep(JOB_MS + 500);
    const other = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_B}`).send({ model: 'x-image-2.0', prompt: 'abandoned' });
    const changed = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'x-image-2.0', prompt: 'abandoned!' });
    expect(other.headers['x-kept-answer']).toBeUndefined();
    expect(changed.headers['x-kept-answer']).toBeUndefined();
    expect(generations()).toBe(5);
  });
});

describe("an upstream slower than the upstream's timeoutMs", () => {
  it('answers 504 at the deadline saying to retry, and the retry receives the image the work made (openai SDK, one generation)', async () => {
    const { gw, slow, generations } = await slowGateway(600);
    slow();
    slow();
    slow();
    const first = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'x-image-2.0', prompt: 'a deadline' });
    expect(first.status).toBe(504);
    expect(first.body.error.code).toBe('upstream_timeout');
    expect(first.headers['x-should-retry']).toBe('true');
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });
    const image = await client.images.generate({ model: 'x-image-2.0', prompt: 'a deadline' });
    expect(image.data?.[0]?.url).toMatch(/kept\.png/);
    expect(generations()).toBe(1);
  });

  it('with nothing kept, cuts the call at the deadline and says not to retry blindly', async () => {
    const gw = await gatewayWith({
      fakes: { dashscope: startFakeDashscope },
      idempotency: { keptAnswerSeconds: false },
      resolve: (_input, { dashscope }) => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'sk-up', timeoutMs: 600 }),
    });
    gw.fakes.dashscope.next(async (_request, res) => {
      await sleep(JOB_MS);
      sendJson(res, 200, dashscopeSuccess([gw.fakes.dashscope.resultUrl('late.png')]));
    });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });
    await expect(client.images.generate({ model: 'x-image-2.0', prompt: 'cut' })).rejects.toMatchObject({ status: 504 });
    // the OpenAI SDK honours x-should-retry: false, so its default retries did not start the work again
    expect(gw.fakes.dashscope.requests.filter((recorded) => recorded.path === DASHSCOPE_PATH)).toHaveLength(1);
  });
});
