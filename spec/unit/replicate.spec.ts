// The Replicate adapter's pure parts (docs/providers/replicate.md): the input of each model family, the
// size mapping, model ids, prediction reading, error normalisation, and the video task translation.
import { describe, expect, it } from 'vitest';
import type { ImageGenerationRequest } from '../../lib/images/image-request.js';
import { imageStateOf, imagesOf } from '../../lib/providers/replicate/replicate.js';
import { familyOf, parseModelRef, sizeInput, translateImageInput } from '../../lib/providers/replicate/replicate-inputs.js';
import { createTarget, normalizeReplicateError, outputUrls, predictionFailure, readPrediction, waitSecondsFor } from '../../lib/providers/replicate/replicate-predictions.js';
import { toCallerVideoTask, translateVideoInput } from '../../lib/providers/replicate/replicate-video.js';
import { thrown } from '../helpers/thrown.js';

const text = (prompt: string, parameters: Record<string, unknown> = {}, extra?: Record<string, unknown>): ImageGenerationRequest => ({
  model: 'm',
  content: [{ text: prompt }],
  parameters,
  responseFormat: 'url',
  ...(extra ? { extra } : {}),
});

describe('parseModelRef', () => {
  it.each([
    ['black-forest-labs/flux-schnell', { owner: 'black-forest-labs', name: 'flux-schnell' }],
    [
      'stability-ai/sdxl:39ed52f2a78e934b3ba6e2a89f5b1c712de7dfea535525255b1aa35c5565e08b',
      { owner: 'stability-ai', name: 'sdxl', version: '39ed52f2a78e934b3ba6e2a89f5b1c712de7dfea535525255b1aa35c5565e08b' },
    ],
    ['flux-schnell', undefined],
    ['a/b/c', undefined],
    ['a/b:../x', undefined],
  ])('%s', (ref, expected) => {
    expect(parseModelRef(ref)).toEqual(expected);
  });
});

describe('createTarget', () => {
  it.each([
    ['https://api.replicate.com/v1', 'google/nano-banana', 'https://api.replicate.com/v1/models/google/nano-banana/predictions', { input: { prompt: 'x' } }],
    ['https://api.replicate.com', 'google/nano-banana', 'https://api.replicate.com/v1/models/google/nano-banana/predictions', { input: { prompt: 'x' } }],
    ['https://api.replicate.com/v1/', 'owner/model:abc123', 'https://api.replicate.com/v1/predictions', { version: 'abc123', input: { prompt: 'x' } }],
  ])('%s + %s', (base, model, url, body) => {
    expect(createTarget(base, model, { prompt: 'x' })).toEqual({ url, body });
  });

  it('a model id that is not owner/name is a 502 (the operator configured it), never a URL', () => {
    expect(thrown(() => createTarget('https://api.replicate.com/v1', '../../admin', {})).status).toBe(502);
  });
});

describe('sizeInput', () => {
  const flux = familyOf('black-forest-labs/flux-schnell');
  const kontext = familyOf('black-forest-labs/flux-kontext-pro');
  const other = familyOf('stability-ai/sdxl');
  it.each([
    [flux, undefined, {}],
    [flux, 'auto', {}],
    [flux, '1024*1024', { aspect_ratio: '1:1' }],
    [flux, '1536x1024', { aspect_ratio: '3:2' }],
    [flux, '1024*1792', { aspect_ratio: '9:16' }],
    [flux, '16:9', { aspect_ratio: '16:9' }],
    [kontext, 'match_input_image', { aspect_ratio: 'match_input_image' }],
    [other, '768*1344', { width: 768, height: 1344 }],
  ])('%#: %s', (family, size, expected) => {
    expect(sizeInput(size, family)).toEqual(expected);
  });

  it.each([
    [flux, '3000*1000'],
    [flux, 'match_input_image'],
    [flux, 'big'],
    [other, '16:9'],
  ])('%#: %s is a 400 naming size', (family, size) => {
    const error = thrown(() => sizeInput(size, family));
    expect(error.status).toBe(400);
    expect(error.param).toBe('size');
  });
});

describe('translateImageInput', () => {
  const png = 'data:image/png;base64,iVBORw0KGgo=';
  it.each<{ name: string; model: string; request: ImageGenerationRequest; input: Record<string, unknown>; predictions: number }>([
    {
      name: 'schnell: n as num_outputs',
      model: 'black-forest-labs/flux-schnell',
      request: text('a', { n: 3, size: '1024*1024' }),
      input: { prompt: 'a', aspect_ratio: '1:1', num_outputs: 3 },
      predictions: 1,
    },
    { name: 'schnell: n 1 sends no num_outputs', model: 'black-forest-labs/flux-schnell', request: text('a', { n: 1 }), input: { prompt: 'a' }, predictions: 1 },
    { name: 'nano-banana: n fanned out', model: 'google/nano-banana', request: text('a', { n: 4 }), input: { prompt: 'a' }, predictions: 4 },
    {
      name: 'nano-banana: images as a list',
      model: 'google/nano-banana',
      request: { ...text('edit'), content: [{ text: 'edit' }, { image: png }, { image: 'https://images.example.com/a.png' }] },
      input: { prompt: 'edit', image_input: [png, 'https://images.example.com/a.png'] },
      predictions: 1,
    },
    {
      name: 'kontext: input_image',
      model: 'black-forest-labs/flux-kontext-max',
      request: { ...text('e'), content: [{ text: 'e' }, { image: png }] },
      input: { prompt: 'e', input_image: png },
      predictions: 1,
    },
    { name: 'flux dev: image', model: 'black-forest-labs/flux-dev', request: { ...text('e'), content: [{ text: 'e' }, { image: png }] }, input: { prompt: 'e', image: png }, predictions: 1 },
    {
      name: 'flux 1.1 pro: image_prompt',
      model: 'black-forest-labs/flux-1.1-pro',
      request: { ...text('e'), content: [{ text: 'e' }, { image: png }] },
      input: { prompt: 'e', image_prompt: png },
      predictions: 1,
    },
    {
      name: 'own fields at the top level and in parameters; seed',
      model: 'black-forest-labs/flux-1.1-pro',
      request: text('a', { seed: 5, safety_tolerance: 2 }, { output_format: 'png', prompt_upsampling: true, stream: false }),
      input: { prompt: 'a', seed: 5, safety_tolerance: 2, output_format: 'png', prompt_upsampling: true },
      predictions: 1,
    },
    {
      name: 'other models: width and height, negative_prompt',
      model: 'stability-ai/sdxl:39ed52f2',
      request: text('a', { size: '1024*768', negative_prompt: 'blur', n: 2 }),
      input: { prompt: 'a', width: 1024, height: 768, negative_prompt: 'blur' },
      predictions: 2,
    },
  ])('$name', ({ model, request, input, predictions }) => {
    expect(translateImageInput(request, model)).toEqual({ input, predictions });
  });

  it.each<{ name: string; model: string; request: ImageGenerationRequest; param: string }>([
    { name: 'a field of another family', model: 'black-forest-labs/flux-schnell', request: text('a', {}, { safety_tolerance: 2 }), param: 'safety_tolerance' },
    { name: 'an unknown parameter', model: 'google/nano-banana', request: text('a', { watermark: true }), param: 'parameters.watermark' },
    { name: 'seed where the model has none', model: 'google/nano-banana', request: text('a', { seed: 1 }), param: 'parameters.seed' },
    { name: 'an image for a text-to-image model', model: 'black-forest-labs/flux-schnell', request: { ...text('a'), content: [{ text: 'a' }, { image: png }] }, param: 'input.messages[0].content' },
    {
      name: 'two images for a one-image field',
      model: 'black-forest-labs/flux-kontext-pro',
      request: { ...text('a'), content: [{ text: 'a' }, { image: png }, { image: png }] },
      param: 'input.messages[0].content',
    },
    { name: 'n above num_outputs', model: 'black-forest-labs/flux-dev', request: text('a', { n: 5 }), param: 'parameters.n' },
  ])('$name is a 400 naming $param', ({ model, request, param }) => {
    const error = thrown(() => translateImageInput(request, model));
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });
});

describe('predictions', () => {
  it.each([
    ['https://replicate.delivery/a.png', ['https://replicate.delivery/a.png']],
    [
      ['https://replicate.delivery/a.png', 'https://replicate.delivery/b.png'],
      ['https://replicate.delivery/a.png', 'https://replicate.delivery/b.png'],
    ],
    [null, []],
    [[{ url: 'x' }, 'file:///etc/passwd', 'https://x/y.webp'], ['https://x/y.webp']],
  ])('outputUrls %#', (output, urls) => {
    expect(outputUrls(output)).toEqual(urls);
  });

  it.each([[{}], [{ id: 'x' }], [{ id: 'x', status: 'done' }], ['text'], [null]])('a body that is no prediction is a 502: %j', (body) => {
    expect(thrown(() => readPrediction(body)).status).toBe(502);
  });

  it('a Data URL output is answered as b64_json, a URL as url', () => {
    const prediction = readPrediction({ id: 'p1', status: 'succeeded', output: ['data:image/png;base64,AAAA', 'https://replicate.delivery/x.png'] });
    expect(imagesOf(prediction)).toEqual([
      { url: '', b64_json: 'AAAA', revised_prompt: '' },
      { url: 'https://replicate.delivery/x.png', b64_json: '', revised_prompt: '' },
    ]);
  });

  it.each([
    ['NSFW content detected. Try running it again, or try a different prompt.', 400, 'content_policy_violation'],
    ['Your input or output was flagged as sensitive. Please try again with different inputs. (E005)', 400, 'content_policy_violation'],
    ['CUDA out of memory', 502, 'upstream_error'],
  ])('a failed prediction "%s" is %i %s', (message, status, code) => {
    const error = predictionFailure(readPrediction({ id: 'p1', status: 'failed', error: message }));
    expect([error.status, error.code]).toEqual([status, code]);
  });

  it('image task states: running, succeeded with the images, failed with the error', () => {
    expect(imageStateOf(readPrediction({ id: 'p', status: 'processing' }))).toEqual({ status: 'running' });
    const done = imageStateOf(readPrediction({ id: 'p', status: 'succeeded', output: 'https://replicate.delivery/x.png' }));
    expect(done.status === 'succeeded' && done.response.data[0]!.url).toBe('https://replicate.delivery/x.png');
    const failed = imageStateOf(readPrediction({ id: 'p', status: 'canceled' }));
    expect(failed.status === 'failed' && failed.error.status).toBe(502);
  });

  it.each([
    [120_000, 60],
    [30_000, 25],
    [3_000, 1],
  ])('Prefer: wait for a deadline of %i ms is %i s', (timeout, seconds) => {
    expect(waitSecondsFor(timeout)).toBe(seconds);
  });
});

describe('normalizeReplicateError', () => {
  it.each([
    [401, { title: 'Unauthenticated', detail: 'You did not pass a valid authentication token', status: 401 }, {}, 502, 'upstream_auth_failed'],
    [403, { title: 'Forbidden', detail: 'You do not have permission', status: 403 }, {}, 502, 'upstream_auth_failed'],
    [402, { title: 'Insufficient credit', detail: 'You have insufficient credit to run this model.', status: 402 }, {}, 502, 'upstream_quota_exceeded'],
    [404, { title: 'Not found', detail: 'The requested resource could not be found.', status: 404 }, {}, 502, 'upstream_error'],
    [429, { title: 'Request was throttled.', detail: 'Request was throttled.', status: 429 }, { 'retry-after': '9' }, 429, 'rate_limit_exceeded'],
    [500, 'not json', {}, 502, 'upstream_error'],
  ])('%i', (status, body, headers, callerStatus, code) => {
    const error = normalizeReplicateError(status, body, headers);
    expect([error.status, error.code]).toEqual([callerStatus, code]);
    if (status === 429) expect(error.retryAfterSeconds).toBe(9);
  });

  it('422 names the first invalid field as the caller knows it', () => {
    const error = normalizeReplicateError(422, {
      title: 'Input validation failed',
      status: 422,
      invalid_fields: [{ type: 'enum', field: 'input.aspect_ratio', description: 'aspect_ratio must be one of the following: "1:1", "16:9"' }],
    });
    expect([error.status, error.param]).toEqual([400, 'size']);
    expect(error.message).toContain('aspect_ratio must be one of');
  });
});

describe('video tasks', () => {
  it.each<{ name: string; model: string; body: Record<string, unknown>; input: Record<string, unknown> }>([
    {
      name: 'Kling: first and last frame, ratio, duration',
      model: 'kwaivgi/kling-v2.1',
      body: {
        model: 'x',
        callback_url: 'https://hooks.example.com/v',
        content: [
          { type: 'text', text: 'a cat' },
          { type: 'image_url', image_url: { url: 'https://i.example/a.png' }, role: 'first_frame' },
          { type: 'image_url', image_url: { url: 'https://i.example/b.png' }, role: 'last_frame' },
        ],
        ratio: '16:9',
        duration: 10,
        mode: 'pro',
      },
      input: { prompt: 'a cat', start_image: 'https://i.example/a.png', end_image: 'https://i.example/b.png', aspect_ratio: '16:9', duration: 10, mode: 'pro' },
    },
    {
      name: 'MiniMax: first_frame_image, a role-less image is the first frame',
      model: 'minimax/video-01',
      body: {
        content: [
          { type: 'text', text: 'waves' },
          { type: 'image_url', image_url: { url: 'https://i.example/a.png' } },
        ],
        prompt_optimizer: false,
      },
      input: { prompt: 'waves', first_frame_image: 'https://i.example/a.png', prompt_optimizer: false },
    },
    {
      name: 'other models: adaptive ratio is not sent',
      model: 'google/veo-3',
      body: { content: [{ type: 'text', text: 'x' }], ratio: 'adaptive', resolution: '720p' },
      input: { prompt: 'x', resolution: '720p' },
    },
  ])('$name', ({ model, body, input }) => {
    expect(translateVideoInput(body, model)).toEqual(input);
  });

  it.each([
    ['minimax/video-01', { content: [], ratio: '16:9' }, 'ratio'],
    ['kwaivgi/kling-v2.1', { content: [{ type: 'image_url', image_url: { url: 'https://i/a.png' }, role: 'reference_image' }] }, 'content[0].role'],
    ['kwaivgi/kling-v2.1', { content: [], watermark: true }, 'watermark'],
  ])('%s %j is a 400 naming %s', (model, body, param) => {
    expect(thrown(() => translateVideoInput(body, model)).param).toBe(param);
  });

  it.each([
    ['starting', 'queued'],
    ['processing', 'running'],
    ['canceled', 'cancelled'],
  ])('%s is %s', (status, expected) => {
    expect(toCallerVideoTask({ id: 'p', status }, 'task_1', 'kling').status).toBe(expected);
  });

  it("a succeeded prediction is Ark's task with the gateway's id, the caller's model and content.video_url", () => {
    const task = toCallerVideoTask(
      {
        id: 'p',
        status: 'succeeded',
        output: 'https://replicate.delivery/v.mp4',
        input: { duration: 5, aspect_ratio: '16:9' },
        created_at: '2026-11-26T02:00:00.000Z',
        completed_at: '2026-11-26T02:01:00.000Z',
      },
      'task_1',
      'my-kling',
    );
    expect(task).toEqual({
      id: 'task_1',
      model: 'my-kling',
      status: 'succeeded',
      created_at: 1795658400,
      updated_at: 1795658460,
      duration: 5,
      ratio: '16:9',
      content: { video_url: 'https://replicate.delivery/v.mp4' },
    });
  });

  it('a failed prediction carries error { code, message }; a safety refusal is content_policy_violation', () => {
    const task = toCallerVideoTask({ id: 'p', status: 'failed', error: 'NSFW content detected' }, 'task_1', 'k');
    expect(task.status).toBe('failed');
    expect((task.error as { code: string }).code).toBe('content_policy_violation');
  });
});
