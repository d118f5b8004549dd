// Content safety (docs/content-safety.md): the moderation policy checks the prompt and the caller's images
// before any paid call (a refusal costs nothing and queues no task), and the images made before any byte
// of them reaches the caller, storage, a callback or a stream. The fake upstream counts the generations it
// starts; the checker here flags the word "forbidden" and the red test image, and the output images it is
// told to, so every test holds what was paid and what was answered against the events.
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateImage } from 'ai';
import OpenAI, { toFile } from 'openai';
import request from 'supertest';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { localResultStorage } from '../../lib/storage.js';
import { startCallbackReceiver } from '../helpers/callback-receiver.js';
import { tempDir } from '../helpers/temp-dir.js';
import {
  type GatewayOptions,
  type ModerationCheckInput,
  type ModerationEvent,
  type ModerationPolicy,
  type ModerationVerdict,
  GatewayConfigError,
  createGatewayRouter,
  staticKeys,
} from '../../lib/index.js';
import { OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { postAndLeave } from '../helpers/paid-work.js';
import { type GatewayFixture, gatewayWith } from '../helpers/gateway-with.js';
import { BLUE_PNG, RED_PNG } from '../helpers/solid-png.js';

const DASHSCOPE_MODEL = 'x-image-2.0';
// qwen-image-plus runs on DashScope's asynchronous synthesis (upstreams §1.5)
const ASYNC_MODEL = 'x-image-plus';
const OPENAI_MODEL = 'gpt-image-1';
const ARK_MODEL = 'doubao-seedream-4-0-250828';

type Fixture = GatewayFixture<{ images: typeof startFakePaidImages }> & { events: ModerationEvent[]; checks: ModerationCheckInput[] };

/** A checker: the word "forbidden", the red image, and the first `flagOutputs` output images are flagged. */
function testChecker(state: { flagOutputs: number; checks: ModerationCheckInput[] }): ModerationPolicy['check'] {
  return async function houseRules(input): Promise<ModerationVerdict> {
    state.checks.push(input);
    if (input.stage === 'prompt') return /forbidden/i.test(input.text ?? '') ? { flagged: true, categories: ['violence'], scores: { violence: 0.97 } } : { flagged: false, categories: [] };
    if (input.stage === 'inputImages') return input.images?.some((image) => image.bytes.equals(RED_PNG)) ? { flagged: true, categories: ['self-harm'] } : { flagged: false, categories: [] };
    if (state.flagOutputs > 0) {
      state.flagOutputs -= 1;
      return { flagged: true, categories: ['sexual'] };
    }
    return { flagged: false, categories: [], scores: { sexual: 0.01 } };
  };
}

async function start(
  policy: (check: ModerationPolicy['check']) => GatewayOptions['moderation'],
  state = { flagOutputs: 0, checks: [] as ModerationCheckInput[] },
  options: Partial<GatewayOptions> = {},
): Promise<Fixture & { state: typeof state }> {
  const events: ModerationEvent[] = [];
  const gw = await gatewayWith({
    fakes: { images: startFakePaidImages },
    resolve: ({ model }, { images }) =>
      model === DASHSCOPE_MODEL
        ? { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-2.0' }
        : model === ASYNC_MODEL
          ? { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-plus' }
          : { provider: 'openai', baseURL: images.openaiBaseURL, apiKey: 'sk-up' },
    moderation: policy(testChecker(state)),
    onModeration: (event) => events.push(event),
    ...options,
  });
  return { ...gw, events, checks: state.checks, state };
}

/** Every file under `directory`, at any depth. */
function filesUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter((name) => statSync(path.join(directory, name)).isFile());
}

const client = (gw: { url: string }, key = KEY_A) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1` });

async function refusal(work: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

describe('the option', () => {
  it.each([
    ['a policy without a checker', { prompt: true }, /moderation\.check must be a function/],
    ['a timeout that is not a positive number', { check: () => ({ flagged: false, categories: [] }), timeoutMs: 0 }, /moderation\.timeoutMs must be a positive number/],
    ['an unknown onCheckerError', { check: () => ({ flagged: false, categories: [] }), onCheckerError: 'maybe' }, /onCheckerError must be 'refuse' or 'allow'/],
  ])('%s is refused when the router is created, with the fix', (_name, moderation, message) => {
    const create = () => createGatewayRouter({ verifyKey: staticKeys({ [KEY_A]: { id: 'tenant-a' } }), resolveUpstream: () => null, moderation: moderation as ModerationPolicy });
    expect(create).toThrow(GatewayConfigError);
    expect(create).toThrow(message);
  });
});

describe('input checks, before any paid call', () => {
  it('a flagged prompt is a 400 content_policy_violation naming the prompt and its categories; the upstream is never called', async () => {
    const gw = await start((check) => ({ check }));
    const error = await refusal(client(gw).images.generate({ model: OPENAI_MODEL, prompt: 'something forbidden' }));
    expect(error.status).toBe(400);
    expect(error.error).toEqual({
      message: 'The prompt was refused by the content policy (violence).',
      type: 'invalid_request_error',
      code: 'content_policy_violation',
      param: 'prompt',
      categories: ['violence'],
      stage: 'input',
    });
    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect(gw.fakes.images.started()).toBe(0);
    // one verdict, one event: no scores, no text
    expect(gw.events).toHaveLength(1);
    expect(gw.events[0]).toMatchObject({
      caller: { id: 'tenant-a' },
      route: 'images.generations',
      model: OPENAI_MODEL,
      stage: 'prompt',
      flagged: true,
      categories: ['violence'],
      checker: 'houseRules',
    });
    expect(gw.events[0]!.requestId).toMatch(/./);
    expect(gw.events[0]).not.toHaveProperty('text');
    expect(gw.usage).toHaveLength(1);
    expect(gw.usage[0]).toMatchObject({ status: 400, errorCode: 'content_policy_violation', images: 0 });
  });

  it('a clean prompt passes, checked once, and the images are answered', async () => {
    const gw = await start((check) => ({ check }));
    const answer = await client(gw).images.generate({ model: OPENAI_MODEL, prompt: 'a quiet lake' });
    expect(answer.data).toHaveLength(1);
    expect(gw.fakes.images.started()).toBe(1);
    expect(gw.events.map((event) => [event.stage, event.flagged])).toEqual([['prompt', false]]);
  });

  it('a flagged uploaded image (multipart edit) is a 400 naming the image; the upstream is never called', async () => {
    const gw = await start((check) => ({ check }));
    const error = await refusal(client(gw).images.edit({ model: DASHSCOPE_MODEL, prompt: 'make it nicer', image: await toFile(RED_PNG, 'red.png', { type: 'image/png' }) }));
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ code: 'content_policy_violation', param: 'image', categories: ['self-harm'], stage: 'input' });
    expect(gw.fakes.images.started()).toBe(0);
    // the prompt and the images are two verdicts, checked in parallel
    expect(gw.events.map((event) => [event.stage, event.flagged]).sort()).toEqual([
      ['inputImages', true],
      ['prompt', false],
    ]);
    const imageCheck = gw.checks.find((check) => check.stage === 'inputImages')!;
    expect(imageCheck.images![0]!.mediaType).toBe('image/png');
    expect(imageCheck.images![0]!.dataUrl()).toBe(`data:image/png;base64,${RED_PNG.toString('base64')}`);
  });

  it('a flagged Data URL image of a JSON edit is a 400; a clean one is edited', async () => {
    const gw = await start((check) => ({ check }));
    const refused = await request(gw.app)
      .post('/v1/images/edits')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: DASHSCOPE_MODEL, prompt: 'brighter', images: [{ image_url: `data:image/png;base64,${RED_PNG.toString('base64')}` }] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', param: 'image', categories: ['self-harm'] });
    expect(gw.fakes.images.started()).toBe(0);
    const edited = await request(gw.app)
      .post('/v1/images/edits')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: DASHSCOPE_MODEL, prompt: 'brighter', images: [{ image_url: `data:image/png;base64,${BLUE_PNG.toString('base64')}` }] });
    expect(edited.status).toBe(200);
    expect(gw.fakes.images.started()).toBe(1);
  });

  it('an image task with a flagged prompt is refused before its 202: no task, no charge, no call', async () => {
    const gw = await start((check) => ({ check }), undefined, { tenancy: { quotas: { limits: { imagesPerMinute: 10 } } } });
    const res = await request(gw.app).post(OPENAI_IMAGES).set('Authorization', `Bearer ${KEY_A}`).set('Prefer', 'respond-async').send({ model: DASHSCOPE_MODEL, prompt: 'forbidden things' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'content_policy_violation', param: 'prompt' });
    expect(res.headers['x-should-retry']).toBe('false');
    expect(gw.fakes.images.started()).toBe(0);
    const quota = await gw.router.quota({ id: 'tenant-a' });
    expect(quota.find((entry) => entry.name === 'images')).toMatchObject({ remaining: 10 });
  });

  it('a checker that is down refuses with 503 moderation_unavailable by default, or lets the request through under allow', async () => {
    const down: ModerationPolicy['check'] = () => Promise.reject(new Error('connect ECONNREFUSED'));
    const refuse = await start(() => ({ check: down }));
    const error = await refusal(client(refuse).images.generate({ model: OPENAI_MODEL, prompt: 'a quiet lake' }, { maxRetries: 0 }));
    expect(error.status).toBe(503);
    expect(error.error).toMatchObject({ code: 'moderation_unavailable' });
    expect(refuse.fakes.images.started()).toBe(0);
    expect(refuse.events[0]).toMatchObject({ stage: 'prompt', flagged: false, checkerError: { decision: 'refuse' } });

    const allow = await start(() => ({ check: down, onCheckerError: 'allow' }));
    const answer = await client(allow).images.generate({ model: OPENAI_MODEL, prompt: 'a quiet lake' });
    expect(answer.data).toHaveLength(1);
    expect(allow.fakes.images.started()).toBe(1);
    expect(allow.events[0]).toMatchObject({ stage: 'prompt', flagged: false, checkerError: { decision: 'allow' } });
  });

  it("an image URL the gateway cannot fetch for the check is the caller's 400; under allow it goes on unchecked, and the event says so", async () => {
    const body = { model: DASHSCOPE_MODEL, input: { messages: [{ role: 'user', content: [{ image: 'https://images.example.com/subject.png' }, { text: 'snow' }] }] } };
    const refuse = await start((check) => ({ check }));
    const refused = await request(refuse.app).post(OPENAI_IMAGES).set('Authorization', `Bearer ${KEY_A}`).send(body);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_request_error', param: 'image' });
    expect(refuse.fakes.images.started()).toBe(0);

    const allow = await start((check) => ({ check, onCheckerError: 'allow' }));
    const allowed = await request(allow.app).post(OPENAI_IMAGES).set('Authorization', `Bearer ${KEY_A}`).send(body);
    expect(allowed.status).toBe(200);
    expect(allow.events.find((event) => event.stage === 'inputImages')).toMatchObject({
      flagged: false,
      checkerError: { decision: 'allow', message: '1 image URL could not be fetched for the check' },
    });
  });

  it('a checker that never answers is cut at timeoutMs', async () => {
    const hangs: ModerationPolicy['check'] = () => new Promise(() => {});
    const gw = await start(() => ({ check: hangs, timeoutMs: 50 }));
    const error = await refusal(client(gw).images.generate({ model: OPENAI_MODEL, prompt: 'a quiet lake' }, { maxRetries: 0 }));
    expect(error.error).toMatchObject({ code: 'moderation_unavailable' });
    expect(gw.events[0]!.checkerError!.message).toMatch(/did not answer within 50 ms/);
  });

  it('a policy per tenant: null for one tenant means no checks for it', async () => {
    const gw = await start((check) => (caller) => (caller.id === 'tenant-a' ? { check } : null));
    await refusal(client(gw, KEY_A).images.generate({ model: OPENAI_MODEL, prompt: 'forbidden' }));
    const answer = await client(gw, KEY_B).images.generate({ model: OPENAI_MODEL, prompt: 'forbidden' });
    expect(answer.data).toHaveLength(1);
    expect(gw.fakes.images.started()).toBe(1);
    expect(gw.events.map((event) => event.caller.id)).toEqual(['tenant-a']);
  });

  it('thresholds flag a category by its score; auditContent puts the text in the event', async () => {
    const scored: ModerationPolicy['check'] = () => ({ flagged: false, categories: [], scores: { harassment: 0.4, violence: 0.1 } });
    const gw = await start(() => ({ check: scored, thresholds: { harassment: 0.3 }, auditContent: true }));
    const error = await refusal(client(gw).images.generate({ model: OPENAI_MODEL, prompt: 'mild words' }));
    expect(error.error).toMatchObject({ categories: ['harassment'] });
    expect(gw.events[0]).toMatchObject({ text: 'mild words', categories: ['harassment'] });
  });
});

describe('output checks, before any byte leaves', () => {
  it('a flagged image is dropped from the answer, paid as flagged (flaggedImages), one event per image', async () => {
    const gw = await start((check) => ({ check, outputImages: true }), { flagOutputs: 1, checks: [] });
    const answer = await client(gw).images.generate({ model: DASHSCOPE_MODEL, prompt: 'two lakes', n: 2, response_format: 'b64_json' });
    expect(answer.data).toHaveLength(1);
    expect(gw.fakes.images.imagesMade()).toBe(2);
    expect(gw.events.map((event) => [event.stage, event.flagged])).toEqual([
      ['prompt', false],
      ['outputImages', true],
      ['outputImages', false],
    ]);
    expect(gw.usage[0]).toMatchObject({ status: 200, images: 1, flaggedImages: 1, undeliveredImages: 1, lostBy: 'flagged' });
  });

  it('every image flagged is a 400 with stage output; nothing of them is answered', async () => {
    const gw = await start((check) => ({ check, outputImages: true }), { flagOutputs: 5, checks: [] });
    const error = await refusal(client(gw).images.generate({ model: OPENAI_MODEL, prompt: 'a lake' }));
    expect(error.status).toBe(400);
    expect(error.error).toEqual({
      message: 'Every image made was refused by the content policy (sexual).',
      type: 'invalid_request_error',
      code: 'content_policy_violation',
      param: null,
      categories: ['sexual'],
      stage: 'output',
    });
    expect(JSON.stringify(error.error)).not.toContain('b64');
    expect(gw.fakes.images.started()).toBe(1);
    expect(gw.usage[0]).toMatchObject({ status: 400, images: 0, flaggedImages: 1, undeliveredImages: 1 });
  });

  it('a stream with output checks asks the whole answer and sends no partial image; a flagged image is never sent', async () => {
    const gw = await start((check) => ({ check, outputImages: true }), { flagOutputs: 1, checks: [] });
    const res = await request(gw.app).post(OPENAI_IMAGES).set('Authorization', `Bearer ${KEY_A}`).send({ model: OPENAI_MODEL, prompt: 'two lakes', n: 2, stream: true, partial_images: 2 });
    expect(res.status).toBe(200);
    const types = [...res.text.matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
    expect(types).toEqual(['image_generation.completed']);
    // the upstream was asked for the whole answer: nothing streamed past the checks
    expect((gw.fakes.images.generations[0]!.request.json as Record<string, unknown>).stream).toBeUndefined();
    expect(gw.events.filter((event) => event.stage === 'outputImages')).toHaveLength(2);
    expect(gw.usage[0]).toMatchObject({ images: 1, flaggedImages: 1 });
  });

  it('an image task whose only image is flagged fails with content_policy_violation; nothing is stored or called back', async () => {
    const gw = await start((check) => ({ check, outputImages: true }), { flagOutputs: 1, checks: [] });
    const res = await request(gw.app).post(OPENAI_IMAGES).set('Authorization', `Bearer ${KEY_A}`).set('Prefer', 'respond-async').send({ model: DASHSCOPE_MODEL, prompt: 'a lake' });
    expect(res.status).toBe(202);
    const id = String(res.body.id);
    let task: Record<string, unknown> = {};
    await expect
      .poll(
        async () => {
          task = (await request(gw.app).get(`/v1/images/tasks/${id}`).set('Authorization', `Bearer ${KEY_A}`)).body as Record<string, unknown>;
          return task.status;
        },
        { timeout: 20_000 },
      )
      .toBe('failed');
    expect(task.error).toMatchObject({ code: 'content_policy_violation' });
    expect(JSON.stringify(task)).not.toContain('generation-1');
    const ended = gw.usage.find((event) => event.task?.status === 'failed');
    expect(ended).toMatchObject({ flaggedImages: 1, images: 0 });
  });
});

describe('the Vercel AI SDK', () => {
  it('generateImage of a flagged prompt fails with the 400 and its categories, without a retry; an edit with a red image too', async () => {
    const gw = await start((check) => ({ check }));
    const provider = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });
    const byPrompt = await generateImage({ model: provider.image(OPENAI_MODEL), prompt: 'forbidden' }).catch((error: unknown) => error);
    expect(APICallError.isInstance(byPrompt)).toBe(true);
    expect((byPrompt as APICallError).statusCode).toBe(400);
    expect((byPrompt as APICallError).isRetryable).toBe(false);
    expect(JSON.parse((byPrompt as APICallError).responseBody!)).toMatchObject({ error: { code: 'content_policy_violation', categories: ['violence'] } });
    const byImage = await generateImage({ model: provider.image(OPENAI_MODEL), prompt: { text: 'nicer', images: [RED_PNG] } }).catch((error: unknown) => error);
    expect((byImage as APICallError).statusCode).toBe(400);
    expect(gw.fakes.images.started()).toBe(0);
    expect(gw.events).toHaveLength(3);
  });
});

describe('output checks before storage and callbacks', () => {
  it('a task keeps and calls back only the image that passed; a task on the upstream’s own task whose image is flagged stores nothing', async () => {
    const receiver = await startCallbackReceiver();
    onTestFinished(() => receiver.close());
    const directory = tempDir('content-safety-');
    const gw = await start(
      (check) => ({ check, outputImages: true }),
      { flagOutputs: 1, checks: [] },
      {
        storage: localResultStorage({ directory, secret: 'content-safety-results-secret-0123456789' }),
        callbacks: { allowLocal: true, retryBaseMs: 10, retryMaxMs: 50, pollIntervalsMs: { image: [1000] } },
      },
    );
    const submit = (body: Record<string, unknown>) =>
      request(gw.app)
        .post(OPENAI_IMAGES)
        .set('Authorization', `Bearer ${KEY_A}`)
        .set('Prefer', 'respond-async')
        .send({ ...body, callback_url: receiver.url });
    const first = await submit({ model: DASHSCOPE_MODEL, prompt: 'two lakes', n: 2 });
    expect(first.status).toBe(202);
    const deliveries = await receiver.accepted(2);
    const succeeded = JSON.parse(deliveries.at(-1)!.body) as { status: string; result: { data: Array<{ url: string }> } };
    expect(succeeded.status).toBe('succeeded');
    expect(succeeded.result.data).toHaveLength(1);
    // the stored image is the one that passed; the flagged one was never written
    expect(filesUnder(directory)).toHaveLength(1);
    expect(gw.fakes.images.imagesMade()).toBe(2);

    // on DashScope's own task: followed by id, its one image flagged when it comes in
    gw.state.flagOutputs = 1;
    const second = await submit({ model: ASYNC_MODEL, prompt: 'a slow lighthouse' });
    expect(second.status).toBe(202);
    const all = await receiver.accepted(4, 20_000);
    const failed = JSON.parse(all.at(-1)!.body) as { status: string; error?: { code: string } };
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'content_policy_violation' } });
    expect(filesUnder(directory)).toHaveLength(1);
    await expect.poll(() => gw.usage.filter((event) => event.task?.status === 'failed')).toHaveLength(1);
    expect(gw.usage.find((event) => event.task?.status === 'failed')).toMatchObject({ images: 0, flaggedImages: 1 });
  });
});

describe('the native image route and video tasks', () => {
  it('/api/v3/images/generations: a flagged reference image is refused before the call; a flagged image made is dropped', async () => {
    const gw = await start((check) => ({ check, outputImages: true }), { flagOutputs: 1, checks: [] });
    const native = (body: Record<string, unknown>) => request(gw.app).post('/api/v3/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    const refused = await native({ model: ARK_MODEL, prompt: 'a lake', image: `data:image/png;base64,${RED_PNG.toString('base64')}` });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', param: 'image', categories: ['self-harm'] });
    expect(gw.fakes.images.started()).toBe(0);
    const answered = await native({ model: ARK_MODEL, prompt: 'two lakes', n: 2, response_format: 'b64_json' });
    expect(answered.status).toBe(200);
    expect(answered.body.data).toHaveLength(1);
    expect(gw.fakes.images.imagesMade()).toBe(2);
    expect(gw.usage.at(-1)).toMatchObject({ route: 'images.native', images: 1, flaggedImages: 1 });
    // with output checks, a relayed stream would carry unchecked images: refused before any call
    const streamed = await native({ model: ARK_MODEL, prompt: 'a lake', stream: true });
    expect(streamed.status).toBe(400);
    expect(gw.fakes.images.started()).toBe(1);
  });

  it('/api/v3/images/generations: every image made flagged is the output refusal, booked as made and charged as flagged', async () => {
    const gw = await start((check) => ({ check, outputImages: true }), { flagOutputs: 2, checks: [] });
    const refused = await request(gw.app).post('/api/v3/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: ARK_MODEL, prompt: 'two lakes', n: 2, response_format: 'b64_json' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', stage: 'output', param: null });
    expect(gw.fakes.images.imagesMade()).toBe(2);
    expect(gw.usage.at(-1)).toMatchObject({
      route: 'images.native',
      status: 400,
      images: 0,
      flaggedImages: 2,
      undeliveredImages: 2,
      lostBy: 'flagged',
      vendorWork: { images: gw.fakes.images.imagesMade(), attempts: [{ outcome: 'made', images: 2 }] },
    });
  });

  it('a video task with a flagged prompt or reference image is refused before the create; Ark is never called', async () => {
    const events: ModerationEvent[] = [];
    const state = { flagOutputs: 0, checks: [] as ModerationCheckInput[] };
    const gw = await gatewayWith({
      fakes: { ark: startFakeArk },
      resolve: ({ route }, { ark }) => (route === 'video.tasks' ? { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-operator-key', model: 'doubao-seedance-1-5-pro-251215' } : null),
      moderation: { check: testChecker(state) },
      onModeration: (event) => events.push(event),
    });
    const create = (content: unknown[]) => request(gw.app).post('/api/v3/contents/generations/tasks').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'seedance', content, duration: 5 });
    const byPrompt = await create([{ type: 'text', text: 'a forbidden scene' }]);
    expect(byPrompt.status).toBe(400);
    expect(byPrompt.body.error).toMatchObject({ code: 'content_policy_violation', param: 'prompt' });
    const byImage = await create([
      { type: 'text', text: 'the cat walks' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${RED_PNG.toString('base64')}` }, role: 'first_frame' },
    ]);
    expect(byImage.status).toBe(400);
    expect(byImage.body.error).toMatchObject({ code: 'content_policy_violation', param: 'image' });
    expect(gw.fakes.ark.requests).toHaveLength(0);
    const created = await create([{ type: 'text', text: 'the cat walks' }]);
    expect(created.status).toBe(200);
    expect(gw.fakes.ark.requests.filter((sent) => sent.method === 'POST')).toHaveLength(1);
    expect(events.map((event) => [event.route, event.stage, event.flagged])).toEqual([
      ['video.tasks', 'prompt', true],
      ['video.tasks', 'prompt', false],
      ['video.tasks', 'inputImages', true],
      ['video.tasks', 'prompt', false],
    ]);
  });
});

describe('strikes', () => {
  it('a tenant over maxStrikes gets 403 tenant_suspended until the host clears it', async () => {
    const limits: Array<{ strikes: number; clear(): Promise<void> }> = [];
    const gw = await start((check) => ({ check, maxStrikes: 2, strikeWindowSeconds: 600 }), undefined, { onStrikeLimit: (event) => void limits.push(event) });
    await refusal(client(gw).images.generate({ model: OPENAI_MODEL, prompt: 'forbidden one' }));
    await refusal(client(gw).images.generate({ model: OPENAI_MODEL, prompt: 'forbidden two' }));
    const suspended = await refusal(client(gw).images.generate({ model: OPENAI_MODEL, prompt: 'a quiet lake' }));
    expect(suspended.status).toBe(403);
    expect(suspended.error).toMatchObject({ code: 'tenant_suspended', type: 'permission_error' });
    // another tenant is not touched
    expect((await client(gw, KEY_B).images.generate({ model: OPENAI_MODEL, prompt: 'a quiet lake' })).data).toHaveLength(1);
    expect(limits.map((event) => event.strikes)).toEqual([2]);
    await limits[0]!.clear();
    expect((await client(gw).images.generate({ model: OPENAI_MODEL, prompt: 'a quiet lake' })).data).toHaveLength(1);
    expect(gw.fakes.images.started()).toBe(2);
  });
});

describe('output checks on an Idempotency-Key request whose client left', () => {
  it('the flagged refusal is kept under the key: the retry gets it replayed, nothing is made again, one moderation event', async () => {
    const directory = tempDir('content-safety-key-');
    const gw = await start(
      (check) => ({ check, outputImages: true }),
      { flagOutputs: 1, checks: [] },
      { storage: localResultStorage({ directory, secret: 'content-safety-results-secret-0123456789' }) },
    );
    const release = gw.fakes.images.hold();
    const body = JSON.stringify({ model: DASHSCOPE_MODEL, prompt: 'a lake' });
    await postAndLeave({ url: gw.url, path: OPENAI_IMAGES, key: KEY_A, body, headers: { 'idempotency-key': 'left-while-made' }, upstream: gw.fakes.images });
    release();
    await expect.poll(() => gw.usage.length, { timeout: 20_000 }).toBe(1);
    const retry = await request(gw.app).post(OPENAI_IMAGES).set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'left-while-made').set('Content-Type', 'application/json').send(body);
    expect(retry.status).toBe(400);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.error).toMatchObject({ code: 'content_policy_violation', stage: 'output', categories: ['sexual'] });
    expect(retry.text).not.toMatch(/generation-\d|b64_json|"url"/);
    expect(filesUnder(directory)).toEqual([]);
    // made once, booked once: the refusal's status, the flagged image, the one generation
    expect(gw.fakes.images.started()).toBe(1);
    expect(gw.usage).toHaveLength(1);
    expect(gw.usage[0]).toMatchObject({ status: 400, images: 0, flaggedImages: 1, vendorWork: { images: gw.fakes.images.imagesMade(), attempts: [{ outcome: 'made' }] } });
    expect(gw.events.filter((event) => event.stage === 'outputImages')).toEqual([expect.objectContaining({ flagged: true })]);
  });
});

describe('output checks on a request without an Idempotency-Key whose client left', () => {
  it('the flagged refusal is kept for the retry as a kept answer is: the retry gets it, nothing is made again, one moderation event', async () => {
    const gw = await start((check) => ({ check, outputImages: true }), { flagOutputs: 1, checks: [] });
    const release = gw.fakes.images.hold();
    const body = JSON.stringify({ model: DASHSCOPE_MODEL, prompt: 'a lake' });
    await postAndLeave({ url: gw.url, path: OPENAI_IMAGES, key: KEY_A, body, upstream: gw.fakes.images });
    release();
    await expect.poll(() => gw.usage.length, { timeout: 20_000 }).toBe(1);
    // the official SDK's retry of the request its client gave up on
    const retry = await request(gw.app).post(OPENAI_IMAGES).set('Authorization', `Bearer ${KEY_A}`).set('x-stainless-retry-count', '1').set('Content-Type', 'application/json').send(body);
    expect(retry.status).toBe(400);
    expect(retry.body.error).toMatchObject({ code: 'content_policy_violation', stage: 'output', categories: ['sexual'] });
    expect(retry.text).not.toMatch(/generation-\d|b64_json|"url"/);
    // made once, booked once (the first try's event charges the flagged image); the retry pays nothing
    expect(gw.fakes.images.started()).toBe(1);
    expect(gw.usage).toHaveLength(1);
    expect(gw.usage[0]).toMatchObject({ status: 400, images: 0, flaggedImages: 1, vendorWork: { images: gw.fakes.images.imagesMade() } });
    expect(gw.events.filter((event) => event.stage === 'outputImages')).toEqual([expect.objectContaining({ flagged: true })]);
  });
});
