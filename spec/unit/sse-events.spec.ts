// Server-sent events read from an upstream's bytes (lib/json/sse-events.ts) wherever the chunks are cut,
// and Ark's image group events in the gateway's terms (lib/providers/ark/ark-image-stream.ts, upstreams §2.7).
import { describe, expect, it } from 'vitest';
import { SseReader } from '../../lib/json/sse-events.js';
import { arkRefusesStream, readArkImageEvent } from '../../lib/providers/ark/ark-image-stream.js';
import { GatewayError } from '../../lib/errors/gateway-error.js';

const STREAM = 'event: a\ndata: {"x":1}\n\n: keep-alive\n\ndata: line one\ndata: line two\n\nevent: b\r\ndata: é\r\n\r\n';
const EVENTS = [
  { event: 'a', data: '{"x":1}' },
  { event: undefined, data: 'line one\nline two' },
  { event: 'b', data: 'é' },
];

describe('SseReader', () => {
  it.each([1, 2, 3, 5, 7, 64])('the same events whatever the chunk size (%i bytes)', (size) => {
    const bytes = Buffer.from(STREAM);
    const reader = new SseReader(1024);
    const events = [];
    for (let start = 0; start < bytes.length; start += size) events.push(...reader.take(bytes.subarray(start, start + size)));
    events.push(...reader.end());
    expect(events).toEqual(EVENTS);
  });

  it('an event the stream ended without its blank line is still read', () => {
    const reader = new SseReader(1024);
    expect(reader.take('data: last')).toEqual([]);
    expect(reader.end()).toEqual([{ event: undefined, data: 'last' }]);
  });

  it('a line longer than the bound is an error, not a buffer that grows', () => {
    const reader = new SseReader(16);
    expect(() => reader.take('data: ' + 'x'.repeat(32))).toThrow(/longer than 16/);
  });
});

describe('readArkImageEvent', () => {
  const event = (data: unknown, name?: string) => ({ event: name, data: typeof data === 'string' ? data : JSON.stringify(data) });

  it.each([
    ['partial_succeeded with b64_json', { type: 'image_generation.partial_succeeded', image_index: 0, b64_json: 'AAAA', size: '2048x2048' }, { kind: 'image', b64: 'AAAA', size: '2048x2048' }],
    ['partial_succeeded with url', { type: 'image_generation.partial_succeeded', image_index: 1, url: 'https://ark.example/1.jpeg' }, { kind: 'image', url: 'https://ark.example/1.jpeg' }],
    [
      'completed with usage',
      { type: 'image_generation.completed', usage: { generated_images: 2, output_tokens: 10, total_tokens: 10 } },
      { kind: 'done', usage: { generated_images: 2, output_tokens: 10, total_tokens: 10 } },
    ],
    ['completed without usage', { type: 'image_generation.completed' }, { kind: 'done' }],
    ['an unknown event', { type: 'image_generation.progress' }, undefined],
    ['[DONE]', '[DONE]', undefined],
  ])('%s', (_name, data, expected) => {
    expect(readArkImageEvent(event(data))).toEqual(expected);
  });

  it('partial_failed carries the normalized error of the failed image', () => {
    const read = readArkImageEvent(event({ type: 'image_generation.partial_failed', error: { code: 'OutputImageSensitiveContentDetected', message: 'sensitive' } }));
    expect(read?.kind).toBe('failed');
    expect((read as { error: GatewayError }).error.code).toBe('content_policy_violation');
  });

  it.each([
    ['not JSON', '{oops'],
    ['an error envelope', { error: { code: 'InternalServiceError', message: 'boom' } }],
    ['partial_succeeded with no image', { type: 'image_generation.partial_succeeded' }],
  ])('%s is an error of the stream', (_name, data) => {
    expect(readArkImageEvent(event(data))?.kind).toBe('error');
  });

  it.each([
    [GatewayError.invalidRequest('The parameter `stream` specified in the request is not valid'), true],
    [GatewayError.invalidRequest('size is not valid'), false],
    [GatewayError.internal(), false],
    [new Error('stream'), false],
  ])('a refusal of stream: %s', (error, expected) => {
    expect(arkRefusesStream(error)).toBe(expected);
  });
});
