// readImageGenerationRequest: a POST /v1/images/generations body read into the normalized image request (contract §2.1-2.3, §8).
import { describe, expect, it } from 'vitest';
import { GatewayError, type GatewayErrorBody } from '../../lib/errors/gateway-error.js';
import { type ImageGenerationRequest, type ImageRequestRules, readImageGenerationRequest } from '../../lib/images/image-request.js';
import { DEFAULT_IMAGE_MODELS, compileImageModelTable } from '../../lib/images/model-families.js';
import { DEFAULT_LIMITS } from '../../lib/default-limits.js';
import { imageGenerationSchema } from '../../lib/schemas/image-generation-schema.js';
import { createSchemaCompiler } from '../../lib/schemas/validator.js';
import type { ImageModelFamily } from '../../lib/options/request-limits.js';

const rules: ImageRequestRules = { validate: createSchemaCompiler()(imageGenerationSchema), limits: DEFAULT_LIMITS, allowPrivateImageUrls: false };
const table = compileImageModelTable(DEFAULT_IMAGE_MODELS);

function familyOf(model: string): ImageModelFamily {
  const family = table.find(model);
  if (!family) throw new Error(`no family for ${model}`);
  return family;
}

const user = (content: unknown[]) => ({ messages: [{ role: 'user', content }] });
const PUBLIC_IMAGE = 'https://cdn.example.com/in.png';

describe('readImageGenerationRequest: accepted', () => {
  it.each<{ name: string; body: Record<string, unknown>; expected: ImageGenerationRequest }>([
    {
      name: 'text-to-image',
      body: {
        model: 'x-image-max',
        prompt: 'placeholder',
        input: user([{ text: 'a snowy street' }]),
        parameters: { negative_prompt: 'blurry', prompt_extend: true, watermark: false, size: '1664*928', n: 1 },
      },
      expected: {
        model: 'x-image-max',
        content: [{ text: 'a snowy street' }],
        parameters: { negative_prompt: 'blurry', prompt_extend: true, watermark: false, size: '1664*928', n: 1 },
        responseFormat: 'url',
      },
    },
    {
      name: 'top-level prompt only (OpenAI-client compatibility)',
      body: { model: 'x-image-plus', prompt: 'a cat' },
      expected: { model: 'x-image-plus', content: [{ text: 'a cat' }], parameters: {}, responseFormat: 'url' },
    },
    {
      name: "top-level size '1024x1024' and n fill parameters",
      body: { model: 'x-image-2.0', prompt: 'a cat', size: '1024x1024', n: 2, response_format: 'b64_json' },
      expected: { model: 'x-image-2.0', content: [{ text: 'a cat' }], parameters: { size: '1024*1024', n: 2 }, responseFormat: 'b64_json' },
    },
    {
      name: 'parameters win over top-level size and n',
      body: { model: 'x-image-2.0', prompt: 'a cat', size: '1024x1024', n: 2, parameters: { size: '512*512', n: 3 } },
      expected: { model: 'x-image-2.0', content: [{ text: 'a cat' }], parameters: { size: '512*512', n: 3 }, responseFormat: 'url' },
    },
    {
      name: 'input wins over the top-level prompt placeholder',
      body: { model: 'x-image-2.0', prompt: 'placeholder', input: user([{ text: 'the real prompt' }]) },
      expected: { model: 'x-image-2.0', content: [{ text: 'the real prompt' }], parameters: {}, responseFormat: 'url' },
    },
    {
      name: 'single-image edit',
      body: { model: 'x-image-edit', input: user([{ image: PUBLIC_IMAGE }, { text: 'make it blue' }]), parameters: { watermark: false } },
      expected: {
        model: 'x-image-edit',
        content: [{ image: PUBLIC_IMAGE }, { text: 'make it blue' }],
        parameters: { watermark: false },
        responseFormat: 'url',
      },
    },
    {
      name: 'multi-image edit, 3 images incl. a Data URL, order kept',
      body: {
        model: 'x-image-edit-plus',
        input: user([{ image: 'https://cdn.example.com/1.png' }, { image: 'data:image/png;base64,AAAA' }, { image: 'https://cdn.example.com/3.png' }, { text: 'merge' }]),
      },
      expected: {
        model: 'x-image-edit-plus',
        content: [{ image: 'https://cdn.example.com/1.png' }, { image: 'data:image/png;base64,AAAA' }, { image: 'https://cdn.example.com/3.png' }, { text: 'merge' }],
        parameters: {},
        responseFormat: 'url',
      },
    },
    {
      name: 'vendor parameters pass through',
      body: { model: 'x-image-2.0', prompt: 'a', parameters: { seed: 42, prompt_extend_mode: 'fast' } },
      expected: { model: 'x-image-2.0', content: [{ text: 'a' }], parameters: { seed: 42, prompt_extend_mode: 'fast' }, responseFormat: 'url' },
    },
  ])('$name', ({ body, expected }) => {
    expect(readImageGenerationRequest(body, familyOf(String(body.model)), rules)).toStrictEqual(expected);
  });

  it('does not mutate the caller body when filling parameters', () => {
    const body = { model: 'x-image-2.0', prompt: 'a', size: '1024x1024', parameters: { watermark: true } };
    readImageGenerationRequest(body, familyOf('x-image-2.0'), rules);
    expect(body).toStrictEqual({ model: 'x-image-2.0', prompt: 'a', size: '1024x1024', parameters: { watermark: true } });
  });
});

const IMG0 = 'input.messages[0].content[0].image';

function invalid(message: string, param: string, code = 'invalid_request_error'): GatewayErrorBody {
  return { error: { message, type: 'invalid_request_error', code, param } };
}

// a Data URL just over the default limit (a whole number of 3-byte groups, so no padding)
const HUGE_BYTES = Math.ceil((DEFAULT_LIMITS.dataUrlBytes + 1) / 3) * 3;
const HUGE_DATA_URL = `data:image/png;base64,${'A'.repeat((HUGE_BYTES / 3) * 4)}`;

describe('readImageGenerationRequest: refused', () => {
  it.each<{ name: string; body: Record<string, unknown>; status: number; expected: GatewayErrorBody }>([
    {
      name: "parameters.size '1024x1024' says to use '*'",
      body: { model: 'x-image-2.0', prompt: 'a', parameters: { size: '1024x1024' } },
      status: 400,
      expected: invalid("parameters.size must use '*' between width and height: '1024*1024', not '1024x1024'", 'parameters.size'),
    },
    {
      name: 'legacy input.prompt names input.messages[].content[]',
      body: { model: 'x-image-2.0', input: { prompt: 'a cat' } },
      status: 400,
      expected: invalid(
        'input.prompt and input.negative_prompt are the legacy structure and are not supported: put the prompt in input.messages[].content[] as { "text": ... } and negative_prompt in parameters',
        'input.prompt',
      ),
    },
    {
      name: 'legacy input.negative_prompt beside messages',
      body: { model: 'x-image-2.0', input: { ...user([{ text: 'a' }]), negative_prompt: 'blurry' } },
      status: 400,
      expected: invalid(
        'input.prompt and input.negative_prompt are the legacy structure and are not supported: put the prompt in input.messages[].content[] as { "text": ... } and negative_prompt in parameters',
        'input.negative_prompt',
      ),
    },
    {
      name: 'missing model (spec §7)',
      body: { prompt: 'a cat' },
      status: 400,
      expected: invalid('model is required', 'model'),
    },
    {
      name: 'neither input nor prompt',
      body: { model: 'x-image-2.0' },
      status: 400,
      expected: invalid(
        'input.messages is required: send input.messages[0].content[] with one { "text": ... } item (and up to 3 { "image": ... } items), or a top-level prompt for text-to-image',
        'input.messages',
      ),
    },
    {
      name: 'x-image-max with an image',
      body: { model: 'x-image-max', input: user([{ image: PUBLIC_IMAGE }, { text: 'a' }]) },
      status: 400,
      expected: invalid("Model 'x-image-max' is text-to-image only: send one text item and no image field at all (got 1 image)", 'input.messages[0].content'),
    },
    {
      name: 'x-image-edit with 0 images',
      body: { model: 'x-image-edit', input: user([{ text: 'make it blue' }]) },
      status: 400,
      expected: invalid("Model 'x-image-edit' edits images: send 1 to 3 image items and one text item (got 0 images)", 'input.messages[0].content'),
    },
    {
      name: '4 images',
      body: { model: 'x-image-2.0', input: user([{ image: PUBLIC_IMAGE }, { image: PUBLIC_IMAGE }, { image: PUBLIC_IMAGE }, { image: PUBLIC_IMAGE }, { text: 'a' }]) },
      status: 400,
      expected: invalid("Model 'x-image-2.0' takes 0 to 3 image items and one text item (got 4 images)", 'input.messages[0].content'),
    },
    {
      name: '4 images to an edit model',
      body: { model: 'x-image-edit-plus', input: user([{ image: PUBLIC_IMAGE }, { image: PUBLIC_IMAGE }, { image: PUBLIC_IMAGE }, { image: PUBLIC_IMAGE }, { text: 'a' }]) },
      status: 400,
      expected: invalid("Model 'x-image-edit-plus' edits images: send 1 to 3 image items and one text item (got 4 images)", 'input.messages[0].content'),
    },
    {
      name: 'two text items',
      body: { model: 'x-image-2.0', input: user([{ text: 'a' }, { text: 'b' }]) },
      status: 400,
      expected: invalid("input.messages[0].content must hold exactly one 'text' item (the prompt), found 2", 'input.messages[0].content'),
    },
    {
      name: 'no text item',
      body: { model: 'x-image-edit', input: user([{ image: PUBLIC_IMAGE }]) },
      status: 400,
      expected: invalid("input.messages[0].content must hold exactly one 'text' item (the prompt), found 0", 'input.messages[0].content'),
    },
    {
      name: 'empty text',
      body: { model: 'x-image-2.0', input: user([{ text: '   ' }]) },
      status: 400,
      expected: invalid('The prompt is empty: the text item of input.messages[0].content must not be empty', 'input.messages[0].content'),
    },
    {
      name: 'parameters.n over the family max',
      body: { model: 'x-image-max', input: user([{ text: 'a' }]), parameters: { n: 2 } },
      status: 400,
      expected: invalid("parameters.n must be at most 1 for model 'x-image-max', got 2", 'parameters.n'),
    },
    {
      name: 'top-level n over the family max',
      body: { model: 'x-image-2.0', prompt: 'a', n: 7 },
      status: 400,
      expected: invalid("parameters.n must be at most 6 for model 'x-image-2.0', got 7", 'parameters.n'),
    },
    {
      name: 'ftp:// image',
      body: { model: 'x-image-edit', input: user([{ image: 'ftp://files.example.com/a.png' }, { text: 'a' }]) },
      status: 400,
      expected: invalid(`${IMG0} must be a public http(s) URL or a 'data:image/...;base64,' URL, not 'ftp:'`, IMG0),
    },
    {
      name: 'not a URL',
      body: { model: 'x-image-edit', input: user([{ image: 'cat.png' }, { text: 'a' }]) },
      status: 400,
      expected: invalid(`${IMG0} must be a public http(s) URL or a 'data:image/...;base64,' URL`, IMG0),
    },
    {
      name: 'URL with credentials',
      body: { model: 'x-image-edit', input: user([{ image: 'https://user:pw@cdn.example.com/a.png' }, { text: 'a' }]) },
      status: 400,
      expected: invalid(`${IMG0} must not carry credentials (user:password@): the URL must be publicly reachable without login`, IMG0),
    },
    ...['http://127.0.0.1/a.png', 'http://2130706433/a.png', 'http://[::1]/a.png', 'http://169.254.169.254/latest/meta-data', 'http://intranet/a.png'].map((url) => ({
      name: `${url} says publicly reachable`,
      body: { model: 'x-image-edit', input: user([{ image: url }, { text: 'a' }]) },
      status: 400,
      expected: invalid(`${IMG0} names a loopback, private or link-local host; the URL must be publicly reachable (or send the image as a Data URL)`, IMG0),
    })),
    {
      name: 'the second image is the one named',
      body: { model: 'x-image-edit', input: user([{ image: PUBLIC_IMAGE }, { image: 'http://10.0.0.5/b.png' }, { text: 'a' }]) },
      status: 400,
      expected: invalid(
        'input.messages[0].content[1].image names a loopback, private or link-local host; the URL must be publicly reachable (or send the image as a Data URL)',
        'input.messages[0].content[1].image',
      ),
    },
    {
      name: 'Data URL not an image',
      body: { model: 'x-image-edit', input: user([{ image: 'data:text/plain;base64,aGVsbG8=' }, { text: 'a' }]) },
      status: 400,
      expected: invalid(`${IMG0} must be an image Data URL: 'data:image/<type>;base64,<data>'`, IMG0),
    },
    {
      name: 'Data URL with bad base64',
      body: { model: 'x-image-edit', input: user([{ image: 'data:image/png;base64,AA*A' }, { text: 'a' }]) },
      status: 400,
      expected: invalid(`${IMG0} is not valid base64 after the Data URL header`, IMG0),
    },
    {
      name: 'Data URL too large -> 413',
      body: { model: 'x-image-edit', input: user([{ image: HUGE_DATA_URL }, { text: 'a' }]) },
      status: 413,
      expected: invalid(`${IMG0} is a Data URL of ${HUGE_BYTES} bytes; the limit is ${DEFAULT_LIMITS.dataUrlBytes} bytes. Use a public URL for large images`, IMG0, 'request_too_large'),
    },
  ])('$name', ({ body, status, expected }) => {
    const family = table.find(String(body.model)) ?? familyOf('x-image-2.0');
    let error: unknown;
    try {
      readImageGenerationRequest(body, family, rules);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(status);
    expect((error as GatewayError).toJSON()).toEqual(expected);
  });
});

describe('readImageGenerationRequest: allow.privateImageUrls', () => {
  it.each(['http://127.0.0.1/a.png', 'http://192.168.1.10:8080/a.png', 'http://localhost:3000/a.png'])('%s is accepted when allowed', (url) => {
    const body = { model: 'x-image-edit', input: user([{ image: url }, { text: 'a' }]) };
    expect(readImageGenerationRequest(body, familyOf('x-image-edit'), { ...rules, allowPrivateImageUrls: true })).toStrictEqual({
      model: 'x-image-edit',
      content: [{ image: url }, { text: 'a' }],
      parameters: {},
      responseFormat: 'url',
    });
  });

  it('the scheme is still checked when private URLs are allowed', () => {
    const body = { model: 'x-image-edit', input: user([{ image: 'file:///etc/passwd' }, { text: 'a' }]) };
    expect(() => readImageGenerationRequest(body, familyOf('x-image-edit'), { ...rules, allowPrivateImageUrls: true })).toThrow(
      `${IMG0} must be a public http(s) URL or a 'data:image/...;base64,' URL, not 'file:'`,
    );
  });
});
