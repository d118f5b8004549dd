// `n` read as one whole number wherever it arrives (lib/images/image-count.ts), and the token counts of
// OpenAI-compatible answers, whole or streamed (lib/json/token-usage.ts).
import { describe, expect, it } from 'vitest';
import { type CountSource, readImageCount } from '../../lib/images/image-count.js';
import { StreamTokenReader, tokensOfAnswer } from '../../lib/json/token-usage.js';

describe('readImageCount', () => {
  it.each<{ value: unknown; source: CountSource; count: number | undefined }>([
    { value: undefined, source: 'json', count: undefined },
    { value: 1, source: 'json', count: 1 },
    { value: 10, source: 'json', count: 10 },
    { value: '3', source: 'form', count: 3 },
    { value: ' 4 ', source: 'form', count: 4 },
  ])('$source $value is $count', ({ value, source, count }) => {
    expect(readImageCount(value, 'n', 10, source)).toBe(count);
  });

  it.each<{ name: string; value: unknown; source: CountSource; message: RegExp }>([
    { name: 'a repeated form field', value: ['1', '5'], source: 'form', message: /n must be one whole number from 1 to 10, got several values/ },
    { name: 'n[0] (a nested form field)', value: { 0: '5' }, source: 'form', message: /got several values/ },
    { name: 'a JSON array', value: [2], source: 'json', message: /got several values/ },
    { name: 'a fraction', value: 1.5, source: 'json', message: /got 1.5/ },
    { name: 'zero', value: 0, source: 'json', message: /got 0/ },
    { name: 'a number in a JSON string', value: '2', source: 'json', message: /got "2"/ },
    { name: 'a form word', value: 'two', source: 'form', message: /got "two"/ },
    { name: 'above the route ceiling', value: 50, source: 'json', message: /n must be at most 10, got 50/ },
    { name: 'above the ceiling in a form', value: '11', source: 'form', message: /n must be at most 10, got 11/ },
  ])('$name is a 400 naming n', ({ value, source, message }) => {
    expect(() => readImageCount(value, 'n', 10, source)).toThrow(expect.objectContaining({ status: 400, param: 'n', message: expect.stringMatching(message) }));
  });
});

describe('tokensOfAnswer', () => {
  it.each<{ name: string; answer: unknown; tokens: unknown }>([
    { name: 'chat', answer: { usage: { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 } }, tokens: { input: 12, output: 30 } },
    {
      name: 'chat with details',
      answer: { usage: { prompt_tokens: 12, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 8 }, completion_tokens_details: { reasoning_tokens: 20 } } },
      tokens: { input: 12, output: 30, cached: 8, reasoning: 20 },
    },
    {
      name: 'responses',
      answer: { usage: { input_tokens: 5, output_tokens: 7, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 3 } } },
      tokens: { input: 5, output: 7, cached: 0, reasoning: 3 },
    },
    { name: 'a responses event', answer: { type: 'response.completed', response: { usage: { input_tokens: 1, output_tokens: 2 } } }, tokens: { input: 1, output: 2 } },
    { name: 'no usage', answer: { choices: [] }, tokens: undefined },
    { name: 'usage without tokens', answer: { usage: { generated_images: 2 } }, tokens: undefined },
    { name: 'negative counts are not counts', answer: { usage: { prompt_tokens: -1, completion_tokens: 'x' } }, tokens: undefined },
  ])('$name', ({ answer, tokens }) => {
    expect(tokensOfAnswer(answer)).toEqual(tokens);
  });
});

describe('StreamTokenReader', () => {
  const chat = [
    'data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n',
    'data: {"choices":[{"delta":{"content":"lo"}}]}\n\n',
    'data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2}}\n\n',
    'data: [DONE]\n\n',
  ].join('');

  it.each([1, 7, 16, 64, chat.length])('reads the final usage chunk of a chat stream cut every %i bytes', (size) => {
    const reader = new StreamTokenReader();
    const bytes = Buffer.from(chat);
    for (let at = 0; at < bytes.length; at += size) reader.take(bytes.subarray(at, at + size));
    expect(reader.tokens).toEqual({ input: 9, output: 2 });
  });

  it('reads response.completed of a Responses stream', () => {
    const reader = new StreamTokenReader();
    reader.take(Buffer.from('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"hi"}\n\n'));
    reader.take(Buffer.from('event: response.completed\ndata: {"type":"response.completed","response":{"usage":{"input_tokens":4,"output_tokens":6}}}\n\n'));
    expect(reader.tokens).toEqual({ input: 4, output: 6 });
  });

  it('reports nothing for a stream without usage', () => {
    const reader = new StreamTokenReader();
    reader.take(Buffer.from('data: {"choices":[{"delta":{"content":"usage is a word"}}]}\n\ndata: [DONE]\n\n'));
    expect(reader.tokens).toBeUndefined();
  });
});
