// What an opted-in span may say about a forwarded JSON exchange: prompt text only (never an image
// reference), and the model and token usage an OpenAI-style answer reports.
import { describe, expect, it } from 'vitest';
import { promptTextOf, responseOfJson } from '../../lib/telemetry/genai-fields.js';

describe('promptTextOf', () => {
  it.each<[string, Record<string, unknown>, string | undefined]>([
    [
      'chat, string content',
      {
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hi' },
        ],
      },
      'be brief\nhi',
    ],
    [
      'chat, parts: text kept, images skipped',
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'describe' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            ],
          },
        ],
      },
      'describe',
    ],
    ['responses, string input', { input: 'write a haiku' }, 'write a haiku'],
    ['responses, an image URL item only', { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x.example/a.png' }] }] }, undefined],
    ['nothing', {}, undefined],
  ])('%s', (_name, body, expected) => {
    expect(promptTextOf(body)).toBe(expected);
  });
});

describe('responseOfJson', () => {
  it.each<[string, string, ReturnType<typeof responseOfJson>]>([
    ['chat usage', '{"model":"m","usage":{"prompt_tokens":5,"completion_tokens":7}}', { model: 'm', inputTokens: 5, outputTokens: 7 }],
    ['responses usage', '{"model":"m","usage":{"input_tokens":3,"output_tokens":4}}', { model: 'm', inputTokens: 3, outputTokens: 4 }],
    ['no usage', '{"model":"m"}', { model: 'm' }],
    ['not JSON', 'nope', undefined],
  ])('%s', (_name, body, expected) => {
    expect(responseOfJson(Buffer.from(body))).toEqual(expected);
  });
});
