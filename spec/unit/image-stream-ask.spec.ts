// `stream` and `partial_images` of the image routes (docs/routes.md "Streamed images"), read from a JSON
// body and from form fields: what is a stream, what is an ordinary request, and what is a 400 naming
// its field.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/errors/gateway-error.js';
import { asksStream, readImageStreamAsk } from '../../lib/images/image-stream-ask.js';

describe('readImageStreamAsk', () => {
  it.each([
    ['no stream field', {}, 'json', undefined],
    ['stream: false', { stream: false }, 'json', undefined],
    ['stream: null', { stream: null }, 'json', undefined],
    ['stream: true', { stream: true }, 'json', { partialImages: 0 }],
    ['stream with partial_images 3', { stream: true, partial_images: 3 }, 'json', { partialImages: 3 }],
    ['stream with partial_images 0', { stream: true, partial_images: 0 }, 'json', { partialImages: 0 }],
    ['stream with response_format b64_json', { stream: true, response_format: 'b64_json' }, 'json', { partialImages: 0 }],
    ['form stream=true', { stream: 'true' }, 'form', { partialImages: 0 }],
    ['form stream=false', { stream: 'false' }, 'form', undefined],
    ['form stream=TRUE and partial_images=2', { stream: 'TRUE', partial_images: ' 2 ' }, 'form', { partialImages: 2 }],
  ] as const)('%s', (_name, fields, source, expected) => {
    expect(readImageStreamAsk(fields, source)).toEqual(expected);
  });

  it.each([
    ['partial_images without stream', { partial_images: 1 }, 'json', 'partial_images'],
    ['partial_images with stream: false', { stream: false, partial_images: 0 }, 'json', 'partial_images'],
    ['partial_images 4', { stream: true, partial_images: 4 }, 'json', 'partial_images'],
    ['partial_images -1', { stream: true, partial_images: -1 }, 'json', 'partial_images'],
    ['partial_images 1.5', { stream: true, partial_images: 1.5 }, 'json', 'partial_images'],
    ['partial_images as a JSON string', { stream: true, partial_images: '2' }, 'json', 'partial_images'],
    ['stream as a JSON string', { stream: 'true' }, 'json', 'stream'],
    ['stream 1', { stream: 1 }, 'json', 'stream'],
    ['form stream=yes', { stream: 'yes' }, 'form', 'stream'],
    ['a repeated form stream field', { stream: ['true', 'true'] }, 'form', 'stream'],
    ['form partial_images=two', { stream: 'true', partial_images: 'two' }, 'form', 'partial_images'],
    ['response_format url with stream', { stream: true, response_format: 'url' }, 'json', 'response_format'],
  ] as const)('400 naming the field: %s', (_name, fields, source, param) => {
    let thrown: unknown;
    try {
      readImageStreamAsk(fields, source);
    } catch (error) {
      thrown = error;
    }
    expect(GatewayError.is(thrown)).toBe(true);
    expect((thrown as GatewayError).toJSON().error).toMatchObject({ code: 'invalid_request_error', param });
  });
});

describe('asksStream (the guards that run before validation)', () => {
  it.each([
    [{ stream: true }, true],
    [{ stream: 'true' }, true],
    [{ stream: false }, false],
    [{ stream: 'false' }, false],
    [{}, false],
    [undefined, false],
  ] as const)('%j -> %s', (fields, expected) => {
    expect(asksStream(fields)).toBe(expected);
  });
});
