// Chat and responses usage events carry the upstream's token usage (README "Tenant controls", billing
// contract), so one `onUsage` bills everything: input and output tokens, cached and reasoning tokens
// where the upstream reported them, from a plain answer and from the final chunk of a stream, with the
// official `openai` SDK and the Vercel AI SDK as clients.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { UsageEvent } from '../../lib/index.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { chatChunks, chatCompletion, responseEvents, responseObject, startFakeLlm, writeSlowly } from '../helpers/fake-llm.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { tokensOf } from '../helpers/paid-work-names.js';

const gw = await gatewayWith({
  fakes: { llm: startFakeLlm },
  resolve: (_input, { llm }) => ({ provider: 'openai', baseURL: llm.baseURL, apiKey: 'sk-upstream-llm', model: 'upstream-chat' }),
  resetEach: true,
});
const { llm } = gw.fakes;
llm.chunkDelayMs = 5;
const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });
const provider = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });

/** The chat usage an upstream reports with every detail (upstreams §4.3). */
const CHAT_USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 3 } };
/** The same usage in the Responses API's names (upstreams §4.4). */
const RESPONSES_USAGE = { input_tokens: 11, output_tokens: 7, total_tokens: 18, input_tokens_details: { cached_tokens: 4 }, output_tokens_details: { reasoning_tokens: 3 } };
const TOKENS = { input: 11, output: 7, cached: 4, reasoning: 3 };

/** The usage event of the one request of the test, once its response ended. */
async function eventOf(route: UsageEvent['route']): Promise<UsageEvent> {
  await expect.poll(() => gw.usage.filter((event) => event.route === route).length, { timeout: 5_000 }).toBe(1);
  return gw.usage.find((event) => event.route === route)!;
}

/** A chat stream whose final chunk, after the finish chunk, carries the usage (`stream_options.include_usage`). */
function chatChunksWithUsage(model: string, usage: object): string[] {
  const chunks = chatChunks(model, ['Hel', 'lo']);
  const final = `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1720000000, model, choices: [], usage })}\n\n`;
  return [...chunks.slice(0, -1), final, chunks.at(-1)!];
}

describe('chat completions', () => {
  it('a plain answer: input, output, cached and reasoning tokens', async () => {
    llm.next((_req, res) => sendJson(res, 200, { ...chatCompletion('upstream-chat', 'Hello'), usage: CHAT_USAGE }));
    await client.chat.completions.create({ model: 'chat-small', messages: [{ role: 'user', content: 'hi' }] });
    const event = await eventOf('chat.completions');
    expect(event.status).toBe(200);
    expect(tokensOf(event)).toEqual(TOKENS);
  });

  it('a stream: the usage of its final chunk', async () => {
    llm.next((_req, res) => writeSlowly(llm, res, chatChunksWithUsage('upstream-chat', CHAT_USAGE)));
    const stream = await client.chat.completions.create({ model: 'chat-small', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    let usage: unknown;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toEqual(CHAT_USAGE);
    expect(tokensOf(await eventOf('chat.completions'))).toEqual(TOKENS);
  });

  it('only what the upstream reported: no cached or reasoning tokens invented', async () => {
    llm.next((_req, res) => sendJson(res, 200, chatCompletion('upstream-chat', 'Hello')));
    await client.chat.completions.create({ model: 'chat-small', messages: [{ role: 'user', content: 'hi' }] });
    expect(tokensOf(await eventOf('chat.completions'))).toEqual({ input: 5, output: 2 });
  });

  it('an upstream that reports no usage: no tokens on the event', async () => {
    llm.next((_req, res) => {
      const { usage: _usage, ...withoutUsage } = chatCompletion('upstream-chat', 'Hello');
      sendJson(res, 200, withoutUsage);
    });
    await client.chat.completions.create({ model: 'chat-small', messages: [{ role: 'user', content: 'hi' }] });
    expect(tokensOf(await eventOf('chat.completions'))).toBeUndefined();
  });

  it('Vercel AI SDK streamText (it asks for the usage chunk itself): the event has the stream usage', async () => {
    llm.next((_req, res) => writeSlowly(llm, res, chatChunksWithUsage('upstream-chat', CHAT_USAGE)));
    const result = streamText({ model: provider.chat('chat-small'), prompt: 'hi' });
    expect(await result.text).toBe('Hello');
    expect((await result.usage).inputTokens).toBe(11);
    expect(tokensOf(await eventOf('chat.completions'))).toEqual(TOKENS);
  });
});

describe('responses', () => {
  it('a plain answer: input, output, cached and reasoning tokens', async () => {
    llm.next((_req, res) => sendJson(res, 200, { ...responseObject('upstream-chat', 'Hello'), usage: RESPONSES_USAGE }));
    await client.responses.create({ model: 'chat-small', input: 'hi' });
    const event = await eventOf('responses');
    expect(event.status).toBe(200);
    expect(tokensOf(event)).toEqual(TOKENS);
  });

  it('a stream: the usage of its response.completed event', async () => {
    const events = responseEvents('upstream-chat', ['Hel', 'lo']);
    const completed = `event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', sequence_number: events.length - 1, response: { ...responseObject('upstream-chat', 'Hello'), usage: RESPONSES_USAGE } })}\n\n`;
    llm.next((_req, res) => writeSlowly(llm, res, [...events.slice(0, -1), completed]));
    const stream = await client.responses.create({ model: 'chat-small', input: 'hi', stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types.at(-1)).toBe('response.completed');
    expect(tokensOf(await eventOf('responses'))).toEqual(TOKENS);
  });

  it('Vercel AI SDK generateText on the Responses API: the event has the usage', async () => {
    llm.next((_req, res) => sendJson(res, 200, { ...responseObject('upstream-chat', 'Hello'), usage: RESPONSES_USAGE }));
    const result = await generateText({ model: provider.responses('chat-small'), prompt: 'hi' });
    expect(result.text).toBe('Hello');
    expect(tokensOf(await eventOf('responses'))).toEqual(TOKENS);
  });
});
