// fieldPath and the compiled imageGenerationSchema validator: the exact 400 each malformed field gets.
import { describe, expect, it } from 'vitest';
import { GatewayError, type GatewayErrorBody } from '../../lib/errors/gateway-error.js';
import { type ImageGenerationBody, imageGenerationSchema } from '../../lib/schemas/image-generation-schema.js';
import { type Validator, createSchemaCompiler, fieldPath } from '../../lib/schemas/validator.js';

describe('fieldPath', () => {
  it.each<{ instancePath: string; child?: string; expected: string }>([
    { instancePath: '', expected: '' },
    { instancePath: '', child: 'model', expected: 'model' },
    { instancePath: '/model', expected: 'model' },
    { instancePath: '/parameters', child: 'n', expected: 'parameters.n' },
    { instancePath: '/input/messages/0/content/1', expected: 'input.messages[0].content[1]' },
    { instancePath: '/input/messages/0', child: 'role', expected: 'input.messages[0].role' },
    { instancePath: '/0', expected: '[0]' },
    { instancePath: '/0/a', expected: '[0].a' },
    // RFC 6901 escapes: ~1 is '/', ~0 is '~' (and ~01 is the literal '~1')
    { instancePath: '/a~1b/0', expected: 'a/b[0]' },
    { instancePath: '/a~0b', expected: 'a~b' },
    { instancePath: '/a~01', expected: 'a~1' },
  ])("fieldPath('$instancePath', $child) -> '$expected'", ({ instancePath, child, expected }) => {
    expect(fieldPath(instancePath, child)).toBe(expected);
  });
});

// an assertion function is called only through a name with a declared type (TS2775)
const validate: Validator<ImageGenerationBody> = createSchemaCompiler()(imageGenerationSchema);
const user = (content: unknown[]): unknown => ({ role: 'user', content });

function invalid(message: string, param: string): GatewayErrorBody {
  return { error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param } };
}

describe('imageGenerationSchema validator: refused bodies', () => {
  it.each<{ name: string; body: unknown; expected: GatewayErrorBody }>([
    // contract §7: exactly this text
    { name: 'missing model', body: { input: { messages: [user([{ text: 'a cat' }])] } }, expected: invalid('model is required', 'model') },
    { name: 'model 42', body: { model: 42, prompt: 'a cat' }, expected: invalid('model is required', 'model') },
    { name: 'empty model', body: { model: '', prompt: 'a cat' }, expected: invalid('model is required', 'model') },
    {
      name: 'messages with 2 items',
      body: { model: 'x-image-2.0', input: { messages: [user([{ text: 'a' }]), user([{ text: 'b' }])] } },
      expected: invalid('input.messages must hold exactly one message ({ role: "user", content: [...] })', 'input.messages'),
    },
    {
      name: 'messages empty',
      body: { model: 'x-image-2.0', input: { messages: [] } },
      expected: invalid('input.messages must hold exactly one message ({ role: "user", content: [...] })', 'input.messages'),
    },
    {
      name: 'input without messages',
      body: { model: 'x-image-2.0', input: {} },
      expected: invalid('input.messages is required', 'input.messages'),
    },
    {
      name: "role 'assistant'",
      body: { model: 'x-image-2.0', input: { messages: [{ role: 'assistant', content: [{ text: 'a' }] }] } },
      expected: invalid("input.messages[0].role must be 'user'", 'input.messages[0].role'),
    },
    {
      name: 'message without content',
      body: { model: 'x-image-2.0', input: { messages: [{ role: 'user' }] } },
      expected: invalid('input.messages[0].content is required', 'input.messages[0].content'),
    },
    {
      name: 'empty content',
      body: { model: 'x-image-2.0', input: { messages: [user([])] } },
      expected: invalid('input.messages[0].content must have at least 1 item(s)', 'input.messages[0].content'),
    },
    {
      name: 'content item with both text and image',
      body: { model: 'x-image-2.0', input: { messages: [user([{ text: 'a', image: 'https://example.com/a.png' }])] } },
      expected: invalid("input.messages[0].content[0] must have exactly one of 'text' (the prompt) or 'image' (a URL or Data URL)", 'input.messages[0].content[0]'),
    },
    {
      name: "content item with the legacy 'images' key",
      body: { model: 'x-image-2.0', input: { messages: [user([{ images: ['https://example.com/a.png'] }, { text: 'a' }])] } },
      expected: invalid(
        "input.messages[0].content[0] has an unknown field 'images' (the legacy 'images' field is not supported); it must have exactly one of 'text' (the prompt) or 'image' (a URL or Data URL)",
        'input.messages[0].content[0]',
      ),
    },
    {
      name: 'empty image (spec §2.2 rule 1: no empty image field)',
      body: { model: 'x-image-2.0', input: { messages: [user([{ text: 'a' }, { image: '' }])] } },
      expected: invalid("input.messages[0].content[1].image must be a non-empty public http(s) URL or a 'data:image/...;base64,' URL", 'input.messages[0].content[1].image'),
    },
    {
      name: 'text not a string',
      body: { model: 'x-image-2.0', input: { messages: [user([{ text: 5 }])] } },
      expected: invalid('input.messages[0].content[0].text must be a string, got number', 'input.messages[0].content[0].text'),
    },
    {
      name: "response_format 'png'",
      body: { model: 'x-image-2.0', prompt: 'a', response_format: 'png' },
      expected: invalid("response_format must be one of 'url', 'b64_json'", 'response_format'),
    },
    {
      name: 'parameters.n 0',
      body: { model: 'x-image-2.0', prompt: 'a', parameters: { n: 0 } },
      expected: invalid('parameters.n must be >= 1', 'parameters.n'),
    },
    {
      name: "parameters.n '2'",
      body: { model: 'x-image-2.0', prompt: 'a', parameters: { n: '2' } },
      expected: invalid('parameters.n must be an integer, got string', 'parameters.n'),
    },
    {
      name: "parameters.watermark 'yes'",
      body: { model: 'x-image-2.0', prompt: 'a', parameters: { watermark: 'yes' } },
      expected: invalid('parameters.watermark must be a boolean, got string', 'parameters.watermark'),
    },
    {
      name: "parameters.size 'big'",
      body: { model: 'x-image-2.0', prompt: 'a', parameters: { size: 'big' } },
      expected: invalid("parameters.size must be '<width>*<height>', e.g. '1024*1024', or a named size such as '2K'", 'parameters.size'),
    },
    {
      name: 'parameters.seed -1',
      body: { model: 'x-image-2.0', prompt: 'a', parameters: { seed: -1 } },
      expected: invalid('parameters.seed must be >= 0', 'parameters.seed'),
    },
    {
      name: "top-level size 'big'",
      body: { model: 'x-image-2.0', prompt: 'a', size: 'big' },
      expected: invalid("size must look like '1024x1024', '1024*1024' or a named size such as '2K'", 'size'),
    },
    { name: 'body an array', body: [{ model: 'x-image-2.0' }], expected: invalid('body must be an object, got an array', 'body') },
    { name: 'body null', body: null, expected: invalid('body must be an object, got null', 'body') },
  ])('$name', ({ body, expected }) => {
    let error: unknown;
    try {
      validate(body);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(400);
    expect((error as GatewayError).toJSON()).toEqual(expected);
  });
});

describe('imageGenerationSchema validator: accepted bodies', () => {
  it.each<{ name: string; body: unknown }>([
    { name: 'text-to-image', body: { model: 'x-image-2.0', input: { messages: [user([{ text: 'a cat' }])] } } },
    {
      name: 'multi-image edit with every parameter',
      body: {
        model: 'x-image-edit-plus',
        prompt: 'placeholder',
        input: { messages: [user([{ image: 'https://example.com/1.png' }, { image: 'data:image/png;base64,AAAA' }, { text: 'merge' }])] },
        parameters: { size: '1024*1536', n: 2, watermark: false, prompt_extend: true, negative_prompt: 'blurry', seed: 42 },
        response_format: 'b64_json',
      },
    },
    { name: 'OpenAI-client shape (top-level prompt, size with x, n)', body: { model: 'x-image-2.0', prompt: 'a cat', size: '1024x1024', n: 1 } },
    { name: 'unknown fields pass through (vendors add parameters)', body: { model: 'x-image-2.0', prompt: 'a', user: 'u1', parameters: { thinking_mode: true } } },
  ])('$name', ({ body }) => {
    expect(validate(body)).toBeUndefined();
  });
});
