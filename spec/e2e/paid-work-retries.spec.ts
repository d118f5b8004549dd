// A client's retry never pays twice (README "Tenant controls", billing contract): the official `openai` SDK
// and the Vercel AI SDK at their default retry settings against an upstream that counts the generations it
// starts. Each client call starts at most one generation; a client that timed out gets the image on a
// later attempt; error answers after which paid work may have started say `x-should-retry: false`; a
// retry during the work joins it, one after it gets the kept answer, once, and only for the same caller
// and body; kept answers expire and are bounded; an Idempotency-Key whose outcome is unknown stays taken;
// and the usage events and the quota count every image the upstream made, once.
import { createOpenAI } from '@ai-sdk/openai';
import { generateImage } from 'ai';
import OpenAI, { APIError } from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { GatewayOptions, Upstream } from '../../lib/index.js';
import { type FakePaidImages, OPENAI_EDITS, OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { chatCompletion } from '../helpers/fake-llm.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { TINY_PNG } from '../helpers/images.js';
import { type GatewayFixture, gatewayWith } from '../helpers/gateway-with.js';
import { generationTags, imagesAccounted, imagesCharged, postAndLeave, quotaUsed } from '../helpers/paid-work.js';
import { SHOULD_RETRY_HEADER, keptAnswers, undeliveredImagesOf } from '../helpers/paid-work-names.js';

const MODEL = 'gpt-image-1';
const NATIVE = '/api/v3/images/generations';
const UPSTREAM_KEY = 'sk-upstream-paid-work';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** One body, as bytes: a retry sends the same bytes (the SDKs do). */
const body = (prompt = 'a lighthouse at dusk') => JSON.stringify({ model: MODEL, prompt });

type Fixture = GatewayFixture<{ images: typeof startFakePaidImages }>;

/**
 * A gateway in front of the counting upstream, with an images quota so the charge can be read. `timeoutMs`
 * is the gateway's deadline for the upstream call (the resolver's `Upstream.timeoutMs`).
 */
function start(options: { timeoutMs?: number; upstream?: (fake: FakePaidImages) => Upstream } & Partial<GatewayOptions> = {}): Promise<Fixture> {
  const { timeoutMs, upstream, ...gatewayOptions } = options;
  return gatewayWith(
    {
      fakes: { images: startFakePaidImages },
      resolve: ({ model, route }, { images }) => {
        if (upstream) return upstream(images);
        const deadline = timeoutMs !== undefined ? { timeoutMs } : {};
        if (route === 'images.native' || route === 'video.tasks') return { provider: 'ark', baseURL: images.arkBaseURL, apiKey: UPSTREAM_KEY, ...deadline };
        if (model === 'x-image-2.0') return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: UPSTREAM_KEY, model: 'qwen-image-2.0', ...deadline };
        if (model === 'x-image-edit') return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: UPSTREAM_KEY, model: 'qwen-image-edit-plus', ...deadline };
        return { provider: 'openai', baseURL: images.openaiBaseURL, apiKey: UPSTREAM_KEY, ...deadline };
      },
      tenancy: { quotas: { limits: { imagesPerMinute: 100 } } },
    },
    gatewayOptions,
  );
}

const post = (gw: Fixture, text: string, key = KEY_A, headers: Record<string, string> = {}) =>
  request(gw.app).post(OPENAI_IMAGES).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').set(headers).send(text);

const leave = (gw: Fixture, text: string, key = KEY_A, headers: Record<string, string> = {}) => postAndLeave({ url: gw.url, path: OPENAI_IMAGES, key, body: text, headers, upstream: gw.fakes.images });

/**
 * The bill tells the truth once the work is over: the usage events account for every image the upstream
 * made (`vendorWork`), each once, and the caller's quota was charged exactly what its events charge it.
 */
async function expectTruthfulBill(gw: Fixture): Promise<void> {
  await gw.fakes.images.settled();
  const made = gw.fakes.images.imagesMade();
  await expect.poll(() => imagesAccounted(gw.usage), { timeout: 5_000 }).toBe(made);
  await expect.poll(async () => (await quotaUsed(gw.router, 'images')) === imagesCharged(gw.usage), { timeout: 5_000 }).toBe(true);
}

const outcomeOf = <T>(promise: Promise<T>): Promise<T | Error> =>
  promise.then(
    (value) => value,
    (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
  );

describe('the retry table: one client call, at most one generation', () => {
  it('openai images.generate, the upstream timeoutMs (1 s) ends a 2.5 s job: one generation, an error that says not to retry, and the image billed', async () => {
    const gw = await start({ timeoutMs: 1_000 });
    gw.fakes.images.workMs = 2_500;
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });
    const outcome = await outcomeOf(client.images.generate({ model: MODEL, prompt: 'a lighthouse at dusk' }));
    expect(gw.fakes.images.started()).toBe(1);
    if (outcome instanceof Error) {
      expect(outcome).toBeInstanceOf(APIError);
      expect((outcome as APIError).status).toBe(504);
      expect((outcome as APIError).headers?.get(SHOULD_RETRY_HEADER)).toBe('false');
    } else {
      // a gateway may also hand the retry the work it joined
      expect(generationTags(JSON.stringify(outcome))).toEqual(['generation-1-0']);
    }
    await expectTruthfulBill(gw);
    expect(gw.fakes.images.started()).toBe(1);
  });

  it('Vercel AI SDK generateImage, the same deadline and job: one generation (the SDK retries a 504 whatever the headers say), and the image billed', async () => {
    const gw = await start({ timeoutMs: 1_000 });
    gw.fakes.images.workMs = 2_500;
    const provider = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });
    const outcome = await outcomeOf(generateImage({ model: provider.image(MODEL), prompt: 'a lighthouse at dusk' }));
    expect(gw.fakes.images.started()).toBe(1);
    if (!(outcome instanceof Error)) expect(outcome.images).toHaveLength(1);
    await expectTruthfulBill(gw);
    expect(gw.fakes.images.started()).toBe(1);
  });

  it('openai with a 1 s client timeout on a 2 s job (the gateway deadline is long): one generation, and the client ends with the image', async () => {
    const gw = await start();
    gw.fakes.images.workMs = 2_000;
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A, timeout: 1_000 });
    const outcome = await outcomeOf(client.images.generate({ model: MODEL, prompt: 'a lighthouse at dusk' }));
    expect(outcome).not.toBeInstanceOf(Error);
    expect(generationTags(JSON.stringify(outcome))).toEqual(['generation-1-0']);
    expect(gw.fakes.images.started()).toBe(1);
    await expectTruthfulBill(gw);
  });

  it('Vercel AI SDK with a 1 s timeout on a 2 s job (it does not retry its own timeout): one generation, and the image billed', async () => {
    const gw = await start();
    gw.fakes.images.workMs = 2_000;
    // the AI SDK has no per-attempt timeout of its own: its fetch gets one, as a host would set it
    const provider = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A, fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(1_000) }) });
    const outcome = await outcomeOf(generateImage({ model: provider.image(MODEL), prompt: 'a lighthouse at dusk' }));
    expect(gw.fakes.images.started()).toBe(1);
    if (!(outcome instanceof Error)) expect(outcome.images).toHaveLength(1);
    await expectTruthfulBill(gw);
  });

  it('openai images.generate({ stream: true, partial_images: 1 }) on an upstream that streams: at most one generation, and what was made is billed', async () => {
    const gw = await start();
    gw.fakes.images.workMs = 1_000;
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });
    const outcome = await outcomeOf(
      (async () => {
        const stream = await client.images.generate({ model: MODEL, prompt: 'a lighthouse at dusk', stream: true, partial_images: 1 });
        const types: string[] = [];
        for await (const event of stream) types.push(event.type);
        return types;
      })(),
    );
    expect(gw.fakes.images.started()).toBeLessThanOrEqual(1);
    if (Array.isArray(outcome)) expect(outcome.at(-1)).toBe('image_generation.completed');
    await expectTruthfulBill(gw);
  });
});

describe('x-should-retry on error answers', () => {
  interface Failure {
    name: string;
    paidWorkMayHaveStarted: boolean;
    arrange: (gw: Fixture) => void;
    options?: { timeoutMs?: number; upstream?: (fake: FakePaidImages) => Upstream } & Partial<GatewayOptions>;
    /** The request; default an image generation. */
    send?: (gw: Fixture) => request.Test;
  }
  const chat = (gw: Fixture) =>
    request(gw.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'chat-small', messages: [{ role: 'user', content: 'hi' }] });
  const task = (gw: Fixture) =>
    request(gw.app)
      .post('/api/v3/contents/generations/tasks')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'seedance', content: [{ type: 'text', text: 'a cat on a wall' }] });
  /** An upstream that answers after the gateway's deadline (500 ms) passed. */
  const late = (answer: object) => (gw: Fixture) =>
    gw.fakes.images.next(async (_req, res) => {
      await sleep(1_500);
      sendJson(res, 200, answer);
    });
  const failures: Failure[] = [
    // with kept answers on, the same 504 says x-should-retry: true: the retry receives the work (kept-work.spec.ts)
    {
      name: 'the gateway deadline passed while the upstream worked, nothing kept (504)',
      paidWorkMayHaveStarted: true,
      options: { timeoutMs: 500, idempotency: { keptAnswerSeconds: false } },
      arrange: (gw) => void (gw.fakes.images.workMs = 1_500),
    },
    {
      name: 'the upstream failed with a 500 after taking the request',
      paidWorkMayHaveStarted: true,
      arrange: (gw) => gw.fakes.images.next((_req, res) => sendJson(res, 500, { error: { message: 'boom', type: 'server_error', param: null, code: null } })),
    },
    { name: 'the upstream reset the connection after taking the request', paidWorkMayHaveStarted: true, arrange: (gw) => gw.fakes.images.next((_req, res) => void res.socket?.destroy()) },
    {
      name: 'the upstream refused with a 429',
      paidWorkMayHaveStarted: false,
      arrange: (gw) => gw.fakes.images.next((_req, res) => sendJson(res, 429, { error: { message: 'slow down', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } })),
    },
    {
      name: 'the upstream refused with a 503',
      paidWorkMayHaveStarted: false,
      arrange: (gw) => gw.fakes.images.next((_req, res) => sendJson(res, 503, { error: { message: 'overloaded', type: 'server_error', param: null, code: null } })),
    },
    {
      name: 'the upstream could not be reached',
      paidWorkMayHaveStarted: false,
      options: { upstream: () => ({ provider: 'openai', baseURL: 'http://127.0.0.1:9/v1', apiKey: UPSTREAM_KEY }) },
      arrange: () => {},
    },
    {
      name: 'chat completions: the gateway deadline passed while the upstream worked',
      paidWorkMayHaveStarted: true,
      options: { timeoutMs: 500 },
      arrange: late(chatCompletion('upstream-chat', 'Hello')),
      send: chat,
    },
    {
      name: 'chat completions: the upstream refused with a 429',
      paidWorkMayHaveStarted: false,
      arrange: (gw) => gw.fakes.images.next((_req, res) => sendJson(res, 429, { error: { message: 'slow down', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } })),
      send: chat,
    },
    {
      name: 'a video task create: the gateway deadline passed while Ark worked',
      paidWorkMayHaveStarted: true,
      options: { timeoutMs: 500 },
      arrange: late({ id: 'cgt-20260917121233-late1' }),
      send: task,
    },
  ];
  for (const failure of failures) {
    it(`${failure.name}: ${failure.paidWorkMayHaveStarted ? 'x-should-retry: false' : 'never x-should-retry: false'}`, async () => {
      const gw = await start(failure.options ?? {});
      failure.arrange(gw);
      const answer = await (failure.send ? failure.send(gw) : post(gw, body()));
      expect(answer.status).toBeGreaterThanOrEqual(400);
      if (failure.paidWorkMayHaveStarted) expect(answer.headers[SHOULD_RETRY_HEADER]).toBe('false');
      else expect(answer.headers[SHOULD_RETRY_HEADER]).not.toBe('false');
    });
  }

  it("the gateway's own quota refusal (429) is not marked: nothing was started", async () => {
    const gw = await start({ tenancy: { quotas: { limits: { imagesPerMinute: 1 } } } });
    expect((await post(gw, body())).status).toBe(200);
    const refused = await post(gw, body('another'));
    expect(refused.status).toBe(429);
    expect(refused.headers[SHOULD_RETRY_HEADER]).not.toBe('false');
    expect(gw.fakes.images.started()).toBe(1);
  });
});

describe('paid work is not thrown away', () => {
  it('a client that leaves and never comes back: the upstream call finishes, its answer is kept, and its expiry bills one image made and not delivered', async () => {
    const gw = await start(keptAnswers({ ttlMs: 1_000 }));
    gw.fakes.images.workMs = 1_000;
    await leave(gw, body());
    await gw.fakes.images.settled();
    expect(gw.fakes.images.generations[0]).toMatchObject({ delivered: true, cut: false });
    await expect.poll(() => gw.usage.reduce((sum, event) => sum + undeliveredImagesOf(event), 0), { timeout: 5_000 }).toBe(1);
    await expectTruthfulBill(gw);
  });

  it('a retry that arrives while the work runs joins it: one generation, and the retry gets its image', async () => {
    const gw = await start();
    gw.fakes.images.workMs = 1_500;
    await leave(gw, body());
    const retry = await post(gw, body());
    expect(retry.status).toBe(200);
    expect(generationTags(retry.text)).toEqual(['generation-1-0']);
    expect(gw.fakes.images.started()).toBe(1);
    await expectTruthfulBill(gw);
  });

  it('a retry after the work ended gets the kept answer, once: the answer is never handed out again', async () => {
    const gw = await start();
    gw.fakes.images.workMs = 1_000;
    await leave(gw, body());
    await gw.fakes.images.settled();
    await sleep(200);
    const retry = await post(gw, body());
    expect(retry.status).toBe(200);
    expect(generationTags(retry.text)).toEqual(['generation-1-0']);
    expect(gw.fakes.images.started()).toBe(1);
    // delivered now: the same request again is new work
    const again = await post(gw, body());
    expect(again.status).toBe(200);
    expect(generationTags(again.text)).toEqual(['generation-2-0']);
    expect(gw.fakes.images.started()).toBe(2);
    await expectTruthfulBill(gw);
  });

  /** An edit form as the SDKs send it: model, prompt, one image file. */
  const editForm = (model: string): FormData => {
    const form = new FormData();
    form.append('model', model);
    form.append('prompt', 'make it snow');
    form.append('image', new Blob([new Uint8Array(TINY_PNG)], { type: 'image/png' }), 'in.png');
    return form;
  };
  const routes: Array<{ name: string; path: string; body: () => string | FormData }> = [
    { name: 'JSON /v1/images/generations to a DashScope family', path: OPENAI_IMAGES, body: () => JSON.stringify({ model: 'x-image-2.0', prompt: 'a lighthouse' }) },
    { name: 'JSON /api/v3/images/generations (Ark)', path: NATIVE, body: () => JSON.stringify({ model: 'seedream', prompt: 'a lighthouse' }) },
    { name: 'multipart /v1/images/edits to an OpenAI-compatible upstream', path: OPENAI_EDITS, body: () => editForm(MODEL) },
    { name: 'multipart /v1/images/edits to a DashScope family', path: OPENAI_EDITS, body: () => editForm('x-image-edit') },
  ];
  for (const { name, path, body: make } of routes)
    it(`${name}: the retry after the client left gets the kept answer, with no second generation`, async () => {
      const gw = await start();
      gw.fakes.images.workMs = 500;
      await postAndLeave({ url: gw.url, path, key: KEY_A, body: make(), upstream: gw.fakes.images });
      await gw.fakes.images.settled();
      await sleep(200);
      // a multipart retry comes with another boundary: the form's fields and files are what is compared
      const retry = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY_A}`, ...(path === OPENAI_EDITS ? {} : { 'content-type': 'application/json' }) },
        body: make(),
      });
      const text = await retry.text();
      expect(retry.status, text.slice(0, 160)).toBe(200);
      expect(generationTags(text)[0]).toBe('generation-1-0');
      expect(gw.fakes.images.started()).toBe(1);
      await expectTruthfulBill(gw);
    });

  it('a kept answer is for the same caller and body only: another caller or another body starts its own work', async () => {
    const gw = await start();
    gw.fakes.images.workMs = 500;
    await leave(gw, body());
    await gw.fakes.images.settled();
    await sleep(200);
    const otherCaller = await post(gw, body(), KEY_B);
    expect(generationTags(otherCaller.text)).toEqual(['generation-2-0']);
    const otherBody = await post(gw, body('a lighthouse at dawn'));
    expect(generationTags(otherBody.text)).toEqual(['generation-3-0']);
    const retry = await post(gw, body());
    expect(generationTags(retry.text)).toEqual(['generation-1-0']);
    expect(gw.fakes.images.started()).toBe(3);
  });

  it('two requests from connected clients are two requests, even with the same body at the same time', async () => {
    const gw = await start();
    gw.fakes.images.workMs = 500;
    const [one, two] = await Promise.all([post(gw, body()), post(gw, body())]);
    expect(one.status).toBe(200);
    expect(two.status).toBe(200);
    expect(gw.fakes.images.started()).toBe(2);
    expect([...generationTags(one.text), ...generationTags(two.text)].sort()).toEqual(['generation-1-0', 'generation-2-0']);
    await expectTruthfulBill(gw);
  });

  it('an answer delivered to a connected client is never handed out again', async () => {
    const gw = await start();
    const first = await post(gw, body());
    const second = await post(gw, body());
    expect(generationTags(first.text)).toEqual(['generation-1-0']);
    expect(generationTags(second.text)).toEqual(['generation-2-0']);
    expect(gw.fakes.images.started()).toBe(2);
  });

  it('a kept answer never outlives its time: within it the retry gets it, after it the retry is new work', async () => {
    const gw = await start(keptAnswers({ ttlMs: 1_000 }));
    gw.fakes.images.workMs = 500;
    await leave(gw, body('kept'));
    await leave(gw, body('expired'));
    await gw.fakes.images.settled();
    const early = await post(gw, body('kept'));
    expect(generationTags(early.text)).toEqual(['generation-1-0']);
    await sleep(1_600);
    const late = await post(gw, body('expired'));
    expect(late.status).toBe(200);
    expect(generationTags(late.text)).toEqual(['generation-3-0']);
    expect(gw.fakes.images.started()).toBe(3);
    await expectTruthfulBill(gw);
  });

  it('an answer larger than the kept bytes is not kept, and its image is billed as made and not delivered', async () => {
    const gw = await start(keptAnswers({ maxBytes: 64 }));
    gw.fakes.images.workMs = 500;
    await leave(gw, body());
    await gw.fakes.images.settled();
    await expect.poll(() => gw.usage.reduce((sum, event) => sum + undeliveredImagesOf(event), 0), { timeout: 5_000 }).toBe(1);
    await expectTruthfulBill(gw);
  });

  it('the upstream call is let finish only for a bounded time: past it the call is cut and its image is still billed', async () => {
    const gw = await start({ timeoutMs: 300, ...keptAnswers({ finishMs: 300 }) });
    gw.fakes.images.workMs = 3_000;
    const answer = await post(gw, body());
    expect(answer.status).toBe(504);
    await expect.poll(() => gw.fakes.images.generations[0]?.cut, { timeout: 2_500 }).toBe(true);
    // the outcome is unknown: it may have been paid, and the event says so
    await expect.poll(() => imagesAccounted(gw.usage), { timeout: 2_000 }).toBe(1);
  });
});

describe('Idempotency-Key: a key whose outcome is unknown is not freed', () => {
  it('after a 504 while the upstream still works, a retry with the key starts nothing; once the work ended it gets the answer', async () => {
    const gw = await start({ timeoutMs: 500 });
    gw.fakes.images.workMs = 1_500;
    const headers = { 'Idempotency-Key': 'order-504' };
    const first = await post(gw, body(), KEY_A, headers);
    expect(first.status).toBe(504);
    const during = await post(gw, body(), KEY_A, headers);
    expect(gw.fakes.images.started()).toBe(1);
    if (during.status === 200) expect(generationTags(during.text)).toEqual(['generation-1-0']);
    else expect(during.status).toBe(409);
    await gw.fakes.images.settled();
    await sleep(200);
    const after = await post(gw, body(), KEY_A, headers);
    expect(gw.fakes.images.started()).toBe(1);
    if (during.status !== 200) {
      expect(after.status).toBe(200);
      expect(generationTags(after.text)).toEqual(['generation-1-0']);
    }
    await expectTruthfulBill(gw);
  });

  it('when the upstream call was cut at its bound the outcome stays unknown: the key is not freed and a retry starts nothing', async () => {
    const gw = await start({ timeoutMs: 300, ...keptAnswers({ finishMs: 300 }) });
    gw.fakes.images.workMs = 3_000;
    const headers = { 'Idempotency-Key': 'order-cut' };
    expect((await post(gw, body(), KEY_A, headers)).status).toBe(504);
    await expect.poll(() => gw.fakes.images.generations[0]?.cut, { timeout: 2_500 }).toBe(true);
    const retry = await post(gw, body(), KEY_A, headers);
    expect(retry.status).toBeGreaterThanOrEqual(400);
    expect(gw.fakes.images.started()).toBe(1);
  });
});
