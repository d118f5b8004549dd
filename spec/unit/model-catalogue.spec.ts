// The model catalogue's pure parts (docs/models.md): finding an entry (exact id, then the longest prefix),
// the `models` option (add, override, replace, config errors), the rules an entry carries, and Ark's
// Seedream translation from the one normalized image request.
import { describe, expect, it } from 'vitest';
import { compileCatalogue, resolveModelCatalogue } from '../../lib/models/model-catalogue.js';
import { DEFAULT_MODEL_CATALOGUE, defaultModelRows, modelEntry } from '../../lib/providers/registry.js';
import { checkDuration, checkRefusedFields, checkSize, familyOf, mostVideoSeconds, refusesOn } from '../../lib/models/model-rules.js';
import { translateArkImageRequest, translateArkImageResponse } from '../../lib/providers/ark/ark-images.js';
import { GatewayConfigError } from '../../lib/errors/config-error.js';
import { GatewayError } from '../../lib/errors/gateway-error.js';
import type { ModelEntry, ModelCatalogueOption } from '../../lib/options/model-catalogue.js';
import type { ImageGenerationRequest } from '../../lib/images/image-request.js';

const entry = (id: string, extra: Partial<ModelEntry> = {}): ModelEntry => ({ id, endpoints: { '/v1/images/generations': 'translated' }, supported_parameters: ['prompt'], streams: false, ...extra });

describe('find', () => {
  const catalogue = compileCatalogue(DEFAULT_MODEL_CATALOGUE);
  it.each([
    { model: 'x-image-2.0-pro', id: 'x-image-2.0*' },
    { model: 'x-image-max', id: 'x-image-max' },
    { model: 'x-image-max-2', id: undefined },
    { model: 'qwen-image', id: 'qwen-image' },
    { model: 'qwen-image-2.0-pro-2026-03-03', id: 'qwen-image-2.0*' },
    { model: 'qwen-image-edit', id: 'qwen-image-edit' },
    { model: 'qwen-image-edit-plus-2025-12-15', id: 'qwen-image-edit-plus*' },
    { model: 'wan2.7-image-pro', id: 'wan2.7-image*' },
    { model: 'doubao-seedream-5-0-lite-260128', id: 'doubao-seedream-5-0-lite*' },
    { model: 'doubao-seedream-5-0-pro-260128', id: 'doubao-seedream-5-0-pro*' },
    { model: 'doubao-seedance-1-0-pro-fast-251015', id: 'doubao-seedance-1-0-pro*' },
    { model: 'dreamina-seedance-2-0-260128', id: 'dreamina-seedance-2-0*' },
    { model: 'seedream-4-5-251128', id: 'seedream-4-5*' },
    { model: 'gpt-image-2.6-flare', id: 'gpt-image-2.6*' },
    { model: 'gpt-image-2', id: 'gpt-image-2*' },
    { model: 'gpt-image-1-mini', id: 'gpt-image-1*' },
    { model: 'something-else', id: undefined },
  ])('$model -> $id', ({ model, id }) => {
    expect(catalogue.find(model)?.id).toBe(id);
  });

  it('modelEntry finds a vendor row to give a name of the host', () => {
    expect({ ...modelEntry('doubao-seedream-4-0-250828')!, id: 'x-seedream' }).toMatchObject({ id: 'x-seedream', provider: 'ark', streams: true });
  });
});

describe('resolveModelCatalogue', () => {
  it('a list adds entries and replaces a default of the same id; a function returns the whole catalogue', () => {
    const added = resolveModelCatalogue([entry('x-seedream'), entry('qwen-image', { streams: true })], DEFAULT_MODEL_CATALOGUE);
    expect(added.find('x-seedream')?.id).toBe('x-seedream');
    expect(added.find('qwen-image')?.streams).toBe(true);
    expect(added.entries).toHaveLength(DEFAULT_MODEL_CATALOGUE.length + 1);
    const replaced = resolveModelCatalogue(() => [entry('only')], DEFAULT_MODEL_CATALOGUE);
    expect(replaced.entries.map((item) => item.id)).toEqual(['only']);
    expect(replaced.find('x-image-2.0')).toBeUndefined();
  });

  it('imageModels replaces the contract families only', () => {
    const catalogue = resolveModelCatalogue(undefined, defaultModelRows([{ pattern: 'y-image*', minImages: 0, maxImages: 0, maxN: 2 }]));
    expect(catalogue.find('x-image-2.0')).toBeUndefined();
    expect(catalogue.find('y-image-1')).toMatchObject({ endpoints: { '/v1/images/generations': 'translated' }, limits: { n: { min: 1, max: 2 } } });
    expect(catalogue.find('qwen-image-2.0')).toBeDefined();
  });

  it('is frozen', () => {
    const catalogue = resolveModelCatalogue(undefined, DEFAULT_MODEL_CATALOGUE);
    expect(Object.isFrozen(catalogue.entries)).toBe(true);
    expect(Object.isFrozen(catalogue.find('x-image-2.0')!.limits)).toBe(true);
  });

  it.each<{ name: string; models: unknown; problem: string }>([
    { name: 'not a list', models: { id: 'x' }, problem: 'options.models.catalogue must be a list of model entries or a function (defaults) => entries.' },
    { name: 'a function returning nothing', models: () => undefined, problem: 'options.models.catalogue, as a function, must return a list of model entries.' },
    { name: 'no id', models: [{ ...entry('x'), id: '*' }], problem: "options.models.catalogue[0].id must be a model name or a prefix ending in '*'." },
    { name: 'no endpoints', models: [entry('x', { endpoints: {} })], problem: "options.models.catalogue[0] ('x').endpoints must name at least one endpoint with how it is served." },
    {
      name: 'unknown endpoint',
      models: [entry('x', { endpoints: { '/v1/audio/speech': 'native' } as unknown as ModelEntry['endpoints'] })],
      problem: "options.models.catalogue[0] ('x').endpoints has unknown endpoint '/v1/audio/speech'.",
    },
    {
      name: 'unknown serving',
      models: [entry('x', { endpoints: { '/v1/images/generations': 'proxied' } as unknown as ModelEntry['endpoints'] })],
      problem: "options.models.catalogue[0] ('x').endpoints['/v1/images/generations'] must be 'translated', 'passthrough' or 'native'.",
    },
    { name: 'parameters not names', models: [entry('x', { supported_parameters: [''] })], problem: "options.models.catalogue[0] ('x').supported_parameters must be a list of field names." },
    { name: 'streams missing', models: [{ ...entry('x'), streams: undefined }], problem: "options.models.catalogue[0] ('x').streams must be a boolean." },
    {
      name: 'a range upside down',
      models: [entry('x', { limits: { n: { min: 3, max: 1 } } })],
      problem: "options.models.catalogue[0] ('x').limits.n must be { min, max }: whole numbers, min <= max.",
    },
    { name: 'sizes not strings', models: [entry('x', { limits: { sizes: [1024] as unknown as string[] } })], problem: "options.models.catalogue[0] ('x').limits.sizes must be a list of strings." },
  ])('$name: a GatewayConfigError', ({ models, problem }) => {
    let thrown: unknown;
    try {
      resolveModelCatalogue(models as ModelCatalogueOption, DEFAULT_MODEL_CATALOGUE);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GatewayConfigError);
    expect((thrown as Error).message).toContain(problem);
  });
});

/** The 400 a rule throws, as `{ message, param }`, or undefined when it passes. */
function refusal(rule: () => void): { message: string; param?: string } | undefined {
  try {
    rule();
    return undefined;
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    expect(error.status).toBe(400);
    return { message: error.message, param: error.param };
  }
}

describe('rules', () => {
  const pro = entry('doubao-seedream-5-0-pro*', { endpoints: { '/v1/images/generations': 'translated', '/v1/images/edits': 'passthrough' }, refused_parameters: ['sequential_image_generation'] });
  it.each([
    { body: { prompt: 'x' }, expected: undefined },
    { body: { sequential_image_generation: 'auto' }, expected: 'sequential_image_generation' },
    { body: { parameters: { sequential_image_generation: 'auto' } }, expected: 'parameters.sequential_image_generation' },
  ])('refused fields: $body', ({ body, expected }) => {
    expect(refusal(() => checkRefusedFields(pro, 'x-pro', body))?.param).toBe(expected);
  });

  it('refuses on translated and native endpoints, never on passthrough ones', () => {
    expect([refusesOn(pro, '/v1/images/generations'), refusesOn(pro, '/v1/images/edits'), refusesOn(pro, '/api/v3/images/generations')]).toEqual([true, false, false]);
  });

  const sized = entry('s', { limits: { tiers: ['2K', '4K'], pixels: { min: 2560 * 1440, max: 4096 * 4096 }, sizes: undefined } });
  const fixed = entry('f', { limits: { sizes: ['1664x928', '1328x1328'] } });
  it.each([
    { rules: sized, size: '2k', refused: false },
    { rules: sized, size: '1K', refused: true },
    { rules: sized, size: '2048x2048', refused: false },
    { rules: sized, size: '2048*2048', refused: false },
    { rules: sized, size: '1024x1024', refused: true },
    { rules: sized, size: '8192x8192', refused: true },
    { rules: fixed, size: '1328*1328', refused: false },
    { rules: fixed, size: '1024*1024', refused: true },
    { rules: fixed, size: undefined, refused: false },
    { rules: entry('none'), size: '99999x1', refused: false },
  ])('size $size for $rules.id: refused $refused', ({ rules, size, refused }) => {
    expect(refusal(() => checkSize(rules, rules.id, size, 'size')) !== undefined).toBe(refused);
  });

  const auto = entry('a', { limits: { durations: { min: 4, max: 12, auto: true } } });
  const fixedLength = entry('b', { limits: { durations: { min: 2, max: 12 } } });
  it.each([
    { rules: auto, duration: -1, refused: false, most: 12 },
    { rules: auto, duration: 3, refused: true, most: undefined },
    { rules: auto, duration: 12, refused: false, most: undefined },
    { rules: fixedLength, duration: -1, refused: true, most: undefined },
    { rules: fixedLength, duration: 2, refused: false, most: undefined },
    { rules: fixedLength, duration: undefined, refused: false, most: undefined },
  ])('duration $duration for $rules.id: refused $refused, reserves $most', ({ rules, duration, refused, most }) => {
    expect(refusal(() => checkDuration(rules, rules.id, duration)) !== undefined).toBe(refused);
    expect(mostVideoSeconds(rules, duration)).toBe(most);
  });

  it('familyOf: the contract family view, generic bounds where the entry has none', () => {
    expect(familyOf(entry('x', { limits: { n: { min: 1, max: 12 }, reference_images: { min: 0, max: 9 } } }))).toEqual({ pattern: 'x', minImages: 0, maxImages: 9, maxN: 12 });
    expect(familyOf(entry('y'))).toEqual({ pattern: 'y', minImages: 0, maxImages: 3, maxN: 6 });
  });
});

describe('Ark Seedream translation', () => {
  const base: ImageGenerationRequest = { model: 'x-seedream', content: [{ text: 'a cat' }], parameters: {}, responseFormat: 'url' };
  it.each<{ name: string; request: ImageGenerationRequest; expected: Record<string, unknown> }>([
    { name: 'text only', request: base, expected: { model: 'up', prompt: 'a cat', response_format: 'url' } },
    {
      name: 'one image, contract parameters',
      request: { ...base, content: [{ image: 'https://a.example/1.png' }, { text: 'a cat' }], parameters: { size: '2048*2048', watermark: false, prompt_extend: true, negative_prompt: 'x', n: 1 } },
      expected: { model: 'up', prompt: 'a cat', image: 'https://a.example/1.png', size: '2048x2048', watermark: false, response_format: 'url' },
    },
    {
      name: 'several images, n > 1, a named size, top-level Ark fields',
      request: {
        ...base,
        content: [{ image: 'https://a.example/1.png' }, { image: 'https://a.example/2.png' }, { text: 'a cat' }],
        parameters: { size: '2K', n: 3 },
        responseFormat: 'b64_json',
        extra: { optimize_prompt_options: { mode: 'fast' }, stream: true },
      },
      expected: {
        model: 'up',
        prompt: 'a cat',
        image: ['https://a.example/1.png', 'https://a.example/2.png'],
        size: '2K',
        sequential_image_generation: 'auto',
        sequential_image_generation_options: { max_images: 3 },
        optimize_prompt_options: { mode: 'fast' },
        response_format: 'b64_json',
      },
    },
    {
      name: "the caller's own group setting wins over n",
      request: { ...base, parameters: { n: 4 }, extra: { sequential_image_generation: 'disabled' } },
      expected: { model: 'up', prompt: 'a cat', sequential_image_generation: 'disabled', response_format: 'url' },
    },
  ])('$name', ({ request, expected }) => {
    expect(translateArkImageRequest(request, 'up')).toEqual(expected);
  });

  it('answers the contract shape: urls and b64 kept, failed group items left out, sizes and usage for the usage event', () => {
    const body = {
      created: 1757323224,
      data: [{ url: 'https://r.example/1.jpeg', size: '2048x2048' }, { error: { code: 'OutputImageSensitiveContentDetected', message: 'no' } }, { b64_json: 'AAAA', size: '2048x2048' }],
      usage: { generated_images: 2, output_tokens: 32000, total_tokens: 32000 },
    };
    expect(translateArkImageResponse(body, { now: 0, headerRequestId: 'req-1' })).toEqual({
      created: 1757323224,
      data: [
        { url: 'https://r.example/1.jpeg', b64_json: '', revised_prompt: '' },
        { url: '', b64_json: 'AAAA', revised_prompt: '' },
      ],
      extra: { request_id: 'req-1' },
      sizes: ['2048x2048', '2048x2048'],
      usage: { generated_images: 2, output_tokens: 32000, total_tokens: 32000 },
    });
  });

  it('no image at all is a 502 naming the failed item code', () => {
    const thrown = refusalOf(() => translateArkImageResponse({ data: [{ error: { code: 'OutputImageSensitiveContentDetected' } }] }, { now: 5_000 }));
    expect(thrown?.status).toBe(502);
    expect(thrown?.message).toContain('OutputImageSensitiveContentDetected');
  });
});

function refusalOf(run: () => unknown): GatewayError | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof GatewayError ? error : undefined;
  }
}
