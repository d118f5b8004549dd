// Content safety at its edges (docs/content-safety.md): a verdict flags by `flagged` or by a score at
// its threshold, never by its categories alone; every text field the gateway forwards on an image route
// is checked on its own; a body bound for Ark carries no case variant of a checked key. The fake upstream
// counts what it receives: a refusal leaves it uncalled.
import OpenAI from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { ModerationChecker, ModerationCheckInput, ModerationEvent, ModerationPolicy } from '../../lib/index.js';
import { OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { BLUE_PNG } from '../helpers/solid-png.js';

const DASHSCOPE_MODEL = 'x-image-2.0';
const OPENAI_MODEL = 'gpt-image-1';
const ARK_MODEL = 'doubao-seedream-4-0-250828';

async function start(check: ModerationChecker, policy: Omit<ModerationPolicy, 'check'> = {}) {
  const events: ModerationEvent[] = [];
  const gw = await gatewayWith({
    fakes: { images: startFakePaidImages },
    resolve: ({ model }, { images }) =>
      model === DASHSCOPE_MODEL
        ? { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-2.0' }
        : { provider: 'openai', baseURL: images.openaiBaseURL, apiKey: 'sk-up' },
    moderation: { check, ...policy },
    onModeration: (event) => events.push(event),
  });
  return { ...gw, events };
}

/** A checker that records what it is asked and flags the word "forbidden" in any text. */
function wordChecker(checks: ModerationCheckInput[]): ModerationChecker {
  return async function words(input) {
    checks.push(input);
    return /forbidden/i.test(input.text ?? '') ? { flagged: true, categories: ['violence'] } : { flagged: false, categories: [] };
  };
}

describe('a verdict flags by flagged or a score, never by its categories alone', () => {
  it('the checker of the docs, which names its categories on every verdict, passes a clean prompt and suspends nobody', async () => {
    // docs/content-safety.md "The checker", as a host copies it
    const houseRules: ModerationChecker = async ({ stage, text, images }) => {
      if (stage === 'prompt') return { flagged: /\bforbidden\b/i.test(text ?? ''), categories: ['house-rules'] };
      const tooSmall = (images ?? []).some((image) => image.bytes.length < 100);
      return { flagged: tooSmall, categories: tooSmall ? ['too-small'] : [] };
    };
    const gw = await start(houseRules, { maxStrikes: 1 });
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${gw.url}/v1` });
    for (const prompt of ['a quiet lake', 'a calm sea']) expect((await client.images.generate({ model: OPENAI_MODEL, prompt })).data).toHaveLength(1);
    expect(gw.fakes.images.started()).toBe(2);
    expect(gw.events.map((event) => [event.flagged, event.categories])).toEqual([
      [false, []],
      [false, []],
    ]);
    // the same checker still refuses what it flags, with its categories
    const refused = await request(gw.app).post(OPENAI_IMAGES).set('Authorization', `Bearer ${KEY_A}`).send({ model: OPENAI_MODEL, prompt: 'something forbidden' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', param: 'prompt', categories: ['house-rules'] });
    expect(gw.fakes.images.started()).toBe(2);
  });

  it('a score at its threshold flags under flagged: false, and tells only the categories the thresholds flagged', async () => {
    const scored: ModerationChecker = () => ({ flagged: false, categories: ['house-rules'], scores: { hate: 0.6, violence: 0.1 } });
    const gw = await start(scored, { thresholds: { hate: 0.5, violence: 0.5 } });
    const refused = await request(gw.app).post(OPENAI_IMAGES).set('Authorization', `Bearer ${KEY_A}`).send({ model: OPENAI_MODEL, prompt: 'mild words' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', categories: ['hate'] });
    expect(gw.fakes.images.started()).toBe(0);
  });
});

describe('every text field forwarded on an image route is checked on its own', () => {
  const post = (app: Parameters<typeof request>[0], path: string, body: Record<string, unknown>) => request(app).post(path).set('Authorization', `Bearer ${KEY_A}`).send(body);
  const texts = (checks: ModerationCheckInput[]) => checks.filter((check) => check.stage === 'prompt').map((check) => [check.field, check.text]);

  it('an OpenAI-compatible body: a flagged negative_prompt is a 400 naming it; the upstream is never called', async () => {
    const checks: ModerationCheckInput[] = [];
    const gw = await start(wordChecker(checks));
    const refused = await post(gw.app, OPENAI_IMAGES, { model: OPENAI_MODEL, prompt: 'a quiet lake', negative_prompt: 'nothing forbidden here' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', param: 'negative_prompt', categories: ['violence'], stage: 'input' });
    expect(gw.fakes.images.started()).toBe(0);
    expect(texts(checks).sort()).toEqual([
      ['negative_prompt', 'nothing forbidden here'],
      ['prompt', 'a quiet lake'],
    ]);
    // a clean one is forwarded, field for field
    const answered = await post(gw.app, OPENAI_IMAGES, { model: OPENAI_MODEL, prompt: 'a quiet lake', negative_prompt: 'fog' });
    expect(answered.status).toBe(200);
    expect(gw.fakes.images.started()).toBe(1);
    expect(gw.fakes.images.requests.at(-1)!.json).toMatchObject({ prompt: 'a quiet lake', negative_prompt: 'fog' });
  });

  it('a multipart edit for an OpenAI-compatible upstream: its negative_prompt field is checked', async () => {
    const checks: ModerationCheckInput[] = [];
    const gw = await start(wordChecker(checks));
    const refused = await request(gw.app)
      .post('/v1/images/edits')
      .set('Authorization', `Bearer ${KEY_A}`)
      .field('model', OPENAI_MODEL)
      .field('prompt', 'brighter')
      .field('negative_prompt', 'forbidden shapes')
      .attach('image', BLUE_PNG, { filename: 'blue.png', contentType: 'image/png' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', param: 'negative_prompt' });
    expect(gw.fakes.images.started()).toBe(0);
  });

  it('a translated request: the negative prompt is its own check, never pasted into the prompt', async () => {
    const checks: ModerationCheckInput[] = [];
    const gw = await start(wordChecker(checks));
    const answered = await post(gw.app, OPENAI_IMAGES, {
      model: DASHSCOPE_MODEL,
      input: { messages: [{ role: 'user', content: [{ text: 'a quiet lake' }] }] },
      parameters: { negative_prompt: 'fog' },
    });
    expect(answered.status).toBe(200);
    expect(texts(checks).sort()).toEqual([
      ['negative_prompt', 'fog'],
      ['prompt', 'a quiet lake'],
    ]);
    const refused = await post(gw.app, OPENAI_IMAGES, {
      model: DASHSCOPE_MODEL,
      input: { messages: [{ role: 'user', content: [{ text: 'a quiet lake' }] }] },
      parameters: { negative_prompt: 'forbidden things' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', param: 'negative_prompt' });
    expect(gw.fakes.images.started()).toBe(1);
  });

  it('/api/v3/images/generations: a flagged negative_prompt is refused before the call', async () => {
    const checks: ModerationCheckInput[] = [];
    const gw = await start(wordChecker(checks));
    const refused = await post(gw.app, '/api/v3/images/generations', { model: ARK_MODEL, prompt: 'a lake', negative_prompt: 'forbidden' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', param: 'negative_prompt' });
    expect(gw.fakes.images.started()).toBe(0);
    expect(texts(checks).sort()).toEqual([
      ['negative_prompt', 'forbidden'],
      ['prompt', 'a lake'],
    ]);
  });
});

describe('a body bound for Ark carries no case variant of a checked key', () => {
  const post = (app: Parameters<typeof request>[0], path: string, body: Record<string, unknown>) => request(app).post(path).set('Authorization', `Bearer ${KEY_A}`).send(body);

  it('/api/v3/images/generations: Prompt beside prompt, or a variant at any depth, is a 400 naming it, before any check or call', async () => {
    const checks: ModerationCheckInput[] = [];
    const gw = await start(wordChecker(checks));
    const refused = await post(gw.app, '/api/v3/images/generations', { model: ARK_MODEL, prompt: 'a cat', Prompt: 'something forbidden' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request_error', param: 'Prompt' });
    const nested = await post(gw.app, '/api/v3/images/generations', { model: ARK_MODEL, prompt: 'a cat', extra: [{ IMAGE: 'https://images.example.com/a.png' }] });
    expect(nested.status).toBe(400);
    expect(nested.body.error).toMatchObject({ code: 'invalid_request_error', param: 'extra[0].IMAGE' });
    expect(gw.fakes.images.started()).toBe(0);
    expect(checks).toHaveLength(0);
    // the exact keys pass
    expect((await post(gw.app, '/api/v3/images/generations', { model: ARK_MODEL, prompt: 'a cat' })).status).toBe(200);
    expect(gw.fakes.images.started()).toBe(1);
  });

  it('a policy that checks no input leaves the body as sent', async () => {
    const checks: ModerationCheckInput[] = [];
    const gw = await start(wordChecker(checks), { prompt: false, inputImages: false });
    const answered = await post(gw.app, '/api/v3/images/generations', { model: ARK_MODEL, prompt: 'a cat', Prompt: 'a dog' });
    expect(answered.status).toBe(200);
    expect(gw.fakes.images.requests.at(-1)!.json).toMatchObject({ prompt: 'a cat', Prompt: 'a dog' });
  });

  it('a video task: Text beside text in a content item is a 400 naming it; Ark is never called', async () => {
    const checks: ModerationCheckInput[] = [];
    const gw = await gatewayWith({
      fakes: { ark: startFakeArk },
      resolve: ({ route }, { ark }) => (route === 'video.tasks' ? { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-operator-key', model: 'doubao-seedance-1-5-pro-251215' } : null),
      moderation: { check: wordChecker(checks) },
    });
    const create = (body: Record<string, unknown>) => post(gw.app, '/api/v3/contents/generations/tasks', { model: 'seedance', duration: 5, ...body });
    const refused = await create({ content: [{ type: 'text', text: 'the cat walks', Text: 'a forbidden scene' }] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_request_error', param: 'content[0].Text' });
    const byNegative = await create({ content: [{ type: 'text', text: 'the cat walks' }], Negative_Prompt: 'blur' });
    expect(byNegative.status).toBe(400);
    expect(byNegative.body.error).toMatchObject({ param: 'Negative_Prompt' });
    expect(gw.fakes.ark.requests).toHaveLength(0);
    expect(checks).toHaveLength(0);
    expect((await create({ content: [{ type: 'text', text: 'the cat walks' }] })).status).toBe(200);
  });
});
