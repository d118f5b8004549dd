// Content safety on chat completions and responses that make images (docs/content-safety.md "Chat and
// responses that make images"): a responses body with the `image_generation` tool, and chat for an image
// model (`modalities` with `image`, or a catalogue row that is an image model), are covered by the image
// routes' policy: every text part the caller sent, in every role, is its own check before the upstream
// is called; every image answered is checked before the answer; with output checks a stream is refused.
// Plain chat and responses are not read. The fake upstream counts the paid answers it started.
import OpenAI from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { GatewayOptions, ModerationCheckInput, ModerationEvent, ModerationPolicy, ModerationVerdict } from '../../lib/index.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { BLUE_PNG, RED_PNG } from '../helpers/solid-png.js';

const IMAGE_CHAT_MODEL = 'gemini-2.5-flash-image';
const dataUrl = (png: Buffer): string => `data:image/png;base64,${png.toString('base64')}`;

/** Flags the word "forbidden" in a text, and a red image at either image stage. */
function redAndForbidden(checks: ModerationCheckInput[]): ModerationPolicy['check'] {
  return async function houseRules(input): Promise<ModerationVerdict> {
    checks.push(input);
    if (input.stage === 'prompt') return /forbidden/i.test(input.text ?? '') ? { flagged: true, categories: ['violence'] } : { flagged: false, categories: [] };
    return input.images?.some((image) => image.bytes.equals(RED_PNG)) ? { flagged: true, categories: ['gore'] } : { flagged: false, categories: [] };
  };
}

async function start(policy: Omit<ModerationPolicy, 'check'> = {}, options: Partial<GatewayOptions> = {}) {
  const checks: ModerationCheckInput[] = [];
  const events: ModerationEvent[] = [];
  const gw = await gatewayWith({
    fakes: { llm: startFakeLlm },
    resolve: (_input, { llm }) => ({ provider: 'openai', baseURL: llm.baseURL, apiKey: 'sk-llm-operator' }),
    moderation: { check: redAndForbidden(checks), ...policy },
    onModeration: (event) => events.push(event),
    ...options,
  });
  const post = (path: string, body: Record<string, unknown>) => request(gw.app).post(path).set('Authorization', `Bearer ${KEY_A}`).send(body);
  return { ...gw, checks, events, post, llm: gw.fakes.llm };
}

const texts = (checks: readonly ModerationCheckInput[]) =>
  checks
    .filter((check) => check.stage === 'prompt')
    .map((check) => [check.field, check.role, check.text])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));

const TOOL = { type: 'image_generation' };

describe('the input of a response with the image_generation tool', () => {
  const conversation = (last: string) => ({
    model: 'gpt-5',
    instructions: 'Draw in pencil',
    tools: [TOOL],
    input: [
      { role: 'system', content: 'Be brief' },
      { role: 'developer', content: [{ type: 'input_text', text: 'Use soft lines' }] },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'A cat' },
          { type: 'input_image', image_url: dataUrl(BLUE_PNG) },
        ],
      },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Which cat?' }] },
      { role: 'user', content: last },
    ],
  });

  it('every text part, in every role and the instructions, is its own check; a flagged one is a 400 naming its path, the upstream never called', async () => {
    const gw = await start();
    const refused = await gw.post('/v1/responses', conversation('A forbidden cat'));
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error: {
        message: 'The text at input[4].content was refused by the content policy (violence).',
        type: 'invalid_request_error',
        code: 'content_policy_violation',
        param: 'input[4].content',
        categories: ['violence'],
        stage: 'input',
      },
    });
    expect(refused.headers['x-should-retry']).toBe('false');
    expect(gw.llm.requests).toHaveLength(0);
    expect(texts(gw.checks)).toEqual([
      ['input[0].content', 'system', 'Be brief'],
      ['input[1].content[0].text', 'developer', 'Use soft lines'],
      ['input[2].content[0].text', 'user', 'A cat'],
      ['input[3].content[0].text', 'assistant', 'Which cat?'],
      ['input[4].content', 'user', 'A forbidden cat'],
      ['instructions', undefined, 'Draw in pencil'],
    ]);
    // the caller's image is checked at its own stage
    expect(gw.checks.filter((check) => check.stage === 'inputImages').map((check) => check.images?.map((image) => image.mediaType))).toEqual([['image/png']]);
    expect(gw.events.every((event) => event.route === 'responses' && event.model === 'gpt-5')).toBe(true);
    expect(gw.usage.at(-1)).toMatchObject({ route: 'responses', status: 400 });
    expect(gw.usage.at(-1)!.vendorWork).toBeUndefined();

    // a clean one is forwarded as sent
    const answered = await gw.post('/v1/responses', conversation('A tabby cat'));
    expect(answered.status).toBe(200);
    expect(gw.llm.paidWork()).toBe(1);
    expect(gw.llm.requests[0]!.json).toEqual({ ...conversation('A tabby cat') });
  });

  it('a string input, and a flagged instruction, name their fields', async () => {
    const gw = await start();
    const refused = await gw.post('/v1/responses', { model: 'gpt-5', instructions: 'forbidden style', input: 'A dog', tools: [TOOL] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', param: 'instructions', stage: 'input' });
    expect(texts(gw.checks)).toEqual([
      ['input', 'user', 'A dog'],
      ['instructions', undefined, 'forbidden style'],
    ]);
    expect(gw.llm.requests).toHaveLength(0);
  });
});

describe('the input of a chat for an image model', () => {
  const messages = (last: string) => [
    { role: 'system', content: 'You draw' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'A lighthouse' },
        { type: 'image_url', image_url: { url: dataUrl(BLUE_PNG) } },
      ],
    },
    { role: 'assistant', content: 'Day or night?', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'Clear skies' },
    { role: 'user', content: last },
  ];

  it('modalities with image: each message checked in every role; a flagged part is a 400 naming its path, the upstream never called', async () => {
    const gw = await start();
    const refused = await gw.post('/v1/chat/completions', { model: 'chat-painter', modalities: ['image', 'text'], messages: messages('Night, and forbidden') });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', param: 'messages[4].content', categories: ['violence'], stage: 'input' });
    expect(gw.llm.requests).toHaveLength(0);
    expect(texts(gw.checks)).toEqual([
      ['messages[0].content', 'system', 'You draw'],
      ['messages[1].content[0].text', 'user', 'A lighthouse'],
      ['messages[2].content', 'assistant', 'Day or night?'],
      ['messages[3].content', 'tool', 'Clear skies'],
      ['messages[4].content', 'user', 'Night, and forbidden'],
    ]);
  });

  it('a flagged image the caller sent is a 400 naming image; the upstream never called', async () => {
    const gw = await start();
    const refused = await gw.post('/v1/chat/completions', {
      model: 'chat-painter',
      modalities: ['image'],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Like this' },
            { type: 'image_url', image_url: { url: dataUrl(RED_PNG) } },
          ],
        },
      ],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', param: 'image', categories: ['gore'], stage: 'input' });
    expect(gw.llm.requests).toHaveLength(0);
  });

  it('a model whose catalogue row is an image model is covered without modalities', async () => {
    const gw = await start();
    const refused = await gw.post('/v1/chat/completions', { model: IMAGE_CHAT_MODEL, messages: [{ role: 'user', content: 'a forbidden banana' }] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', param: 'messages[0].content' });
    expect(gw.llm.requests).toHaveLength(0);
  });
});

describe('the images a chat or a response answers', () => {
  it('a response whose every image is flagged is the output refusal: paid, booked as flagged, one event per image, a strike', async () => {
    const limits: number[] = [];
    const gw = await start({ outputImages: true, maxStrikes: 1 }, { onStrikeLimit: (event) => void limits.push(event.strikes) });
    gw.llm.images = [RED_PNG];
    const refused = await gw.post('/v1/responses', { model: 'gpt-5', input: 'A cat', tools: [TOOL] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'content_policy_violation', param: null, categories: ['gore'], stage: 'output' });
    expect(refused.text).not.toContain(RED_PNG.toString('base64'));
    // the vendor made the answer once: the books say so
    expect(gw.llm.paidWork()).toBe(1);
    const [event] = gw.usage;
    expect(event).toMatchObject({ route: 'responses', status: 400, flaggedImages: 1 });
    expect(event!.vendorWork!.attempts.filter((attempt) => attempt.outcome === 'made')).toHaveLength(gw.llm.paidWork());
    expect(gw.events.filter((moderation) => moderation.stage === 'outputImages').map((moderation) => [moderation.route, moderation.flagged, moderation.categories])).toEqual([
      ['responses', true, ['gore']],
    ]);
    // the strike suspends the tenant on what the policy covers, not on plain chat
    expect(limits).toEqual([1]);
    const suspended = await gw.post('/v1/chat/completions', { model: 'chat-painter', modalities: ['image'], messages: [{ role: 'user', content: 'A dog' }] });
    expect(suspended.status).toBe(403);
    expect(suspended.body.error).toMatchObject({ code: 'tenant_suspended' });
    expect((await gw.post('/v1/chat/completions', { model: 'chat-small', messages: [{ role: 'user', content: 'Hello' }] })).status).toBe(200);
    expect(gw.llm.paidWork()).toBe(2);
  });

  it('a chat answer with one flagged image of two: the flagged one dropped, the text and the other answered', async () => {
    const gw = await start({ outputImages: true });
    gw.llm.images = [BLUE_PNG, RED_PNG];
    const client = new OpenAI({ apiKey: KEY_A, baseURL: `${gw.url}/v1` });
    const body = { model: 'chat-painter', modalities: ['image', 'text'], messages: [{ role: 'user' as const, content: 'Two lighthouses' }] };
    const answer = (await client.chat.completions.create(body as OpenAI.ChatCompletionCreateParamsNonStreaming)) as OpenAI.ChatCompletion & {
      choices: Array<{ message: { images?: Array<{ image_url: { url: string } }> } }>;
    };
    expect(answer.choices[0]!.message.content).toBe('Here it is');
    expect(answer.choices[0]!.message.images!.map((image) => image.image_url.url)).toEqual([dataUrl(BLUE_PNG)]);
    expect(gw.llm.paidWork()).toBe(1);
    expect(gw.usage.at(-1)).toMatchObject({ route: 'chat.completions', status: 200, flaggedImages: 1 });
    expect(gw.events.filter((event) => event.stage === 'outputImages').map((event) => event.flagged)).toEqual([false, true]);
  });

  it('the tokens of an answer refused at output are the tenant’s, as a flagged image is', async () => {
    const gw = await start({ outputImages: true }, { tenancy: { pricing: { currency: 'USD', models: { 'chat-painter': { tokens: { input: 1, output: 2 } } } } } });
    gw.llm.images = [RED_PNG];
    const refused = await gw.post('/v1/chat/completions', { model: 'chat-painter', modalities: ['image'], messages: [{ role: 'user', content: 'A cat' }] });
    expect(refused.status).toBe(400);
    expect(gw.usage.at(-1)).toMatchObject({ status: 400, flaggedImages: 1, tokens: { input: 5, output: 2 }, cost: { amount: expect.closeTo((5 * 1 + 2 * 2) / 1e6, 9), currency: 'USD' } });
  });
});

describe('streams under output checks', () => {
  it('stream: true is a 400 on a response with the image tool and on an image chat, before any check or call', async () => {
    const gw = await start({ outputImages: true });
    const response = await gw.post('/v1/responses', { model: 'gpt-5', input: 'A cat', tools: [TOOL], stream: true });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_request_error', param: 'stream' });
    const chat = await gw.post('/v1/chat/completions', { model: 'chat-painter', modalities: ['image'], messages: [{ role: 'user', content: 'A cat' }], stream: true });
    expect(chat.status).toBe(400);
    expect(chat.body.error).toMatchObject({ code: 'invalid_request_error', param: 'stream' });
    expect(gw.llm.requests).toHaveLength(0);
    expect(gw.checks).toHaveLength(0);
  });

  it('without output checks, a covered stream is relayed once its input passed', async () => {
    const gw = await start();
    const streamed = await gw.post('/v1/responses', { model: 'gpt-5', input: 'A cat', tools: [TOOL], stream: true });
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('response.completed');
    expect(texts(gw.checks)).toEqual([['input', 'user', 'A cat']]);
  });
});

describe('plain chat and responses', () => {
  it('are not read: no checker call, streams relayed, under a policy with every check on', async () => {
    const gw = await start({ outputImages: true });
    expect((await gw.post('/v1/chat/completions', { model: 'chat-small', messages: [{ role: 'user', content: 'something forbidden' }] })).status).toBe(200);
    expect((await gw.post('/v1/chat/completions', { model: 'chat-small', messages: [{ role: 'user', content: 'Hi' }], stream: true })).status).toBe(200);
    expect((await gw.post('/v1/responses', { model: 'gpt-5', input: 'something forbidden', tools: [{ type: 'web_search' }] })).status).toBe(200);
    expect((await gw.post('/v1/responses', { model: 'gpt-5', input: 'Hi', stream: true })).status).toBe(200);
    expect(gw.checks).toHaveLength(0);
    expect(gw.events).toHaveLength(0);
    expect(gw.llm.paidWork()).toBe(4);
  });
});
