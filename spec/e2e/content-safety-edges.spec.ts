// Content safety at its edges (docs/content-safety.md): a verdict flags by `flagged` or by a score at
// its threshold, never by its categories alone; every text field the gateway forwards on an image route
// is checked on its own; a body bound for Ark carries no case variant of a checked key. The fake upstream
// counts what it receives: a refusal leaves it uncalled.
import OpenAI from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { ModerationChecker, ModerationEvent, ModerationPolicy } from '../../lib/index.js';
import { OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';

const DASHSCOPE_MODEL = 'x-image-2.0';
const OPENAI_MODEL = 'gpt-image-1';

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
