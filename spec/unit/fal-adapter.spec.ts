// The fal adapter's pure functions (docs/providers/fal.md): families read from endpoint ids, size to
// image_size or aspect_ratio, the queue input, the result's images and safety flags, fal's errors,
// the app id and the stored task id, and the video mapping, table by table.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/errors/gateway-error.js';
import type { ImageGenerationRequest } from '../../lib/images/image-request.js';
import { falFieldOf, normalizeFalError } from '../../lib/providers/fal/fal-errors.js';
import { falAspectRatio, falFamilyOf, falImageSize, translateFalImageRequest, translateFalImageResponse } from '../../lib/providers/fal/fal.js';
import { appIdOf, decodeFalTaskId, encodeFalTaskId, readFalStatus } from '../../lib/providers/fal/fal-queue.js';
import { asStartedWork } from '../../lib/providers/submitted-work.js';
import { toCallerTask, translateFalVideoRequest } from '../../lib/providers/fal/fal-video.js';
import { thrown } from '../helpers/thrown.js';

const request = (parameters: Record<string, unknown> = {}, extra?: Record<string, unknown>, images: string[] = []): ImageGenerationRequest => ({
  model: 'fal-ai/flux/dev',
  content: [{ text: 'a cat' }, ...images.map((image) => ({ image }))],
  parameters,
  responseFormat: 'url',
  ...(extra ? { extra } : {}),
});

describe('falFamilyOf', () => {
  it.each([
    ['fal-ai/flux/dev', { size: 'image_size', images: undefined }],
    ['fal-ai/flux/dev/image-to-image', { size: 'image_size', images: 'image_url' }],
    ['fal-ai/flux-pro/v1.1', { size: 'image_size', images: undefined }],
    ['fal-ai/flux-pro/v1.1-ultra', { size: 'aspect_ratio', images: undefined }],
    ['fal-ai/flux-pro/kontext', { size: 'aspect_ratio', images: 'image_url' }],
    ['fal-ai/flux-pro/kontext/multi', { size: 'aspect_ratio', images: 'image_urls' }],
    ['fal-ai/nano-banana', { size: 'aspect_ratio', images: undefined }],
    ['fal-ai/nano-banana/edit', { size: 'aspect_ratio', images: 'image_urls' }],
    ['fal-ai/bytedance/seedream/v4/edit', { size: 'image_size', images: 'image_urls' }],
    ['fal-ai/imagen4/preview', { size: 'aspect_ratio', images: undefined }],
  ])('%s', (id, family) => expect(falFamilyOf(id)).toEqual(family));
});

describe('size', () => {
  it.each([
    [undefined, {}],
    ['auto', {}],
    ['1024*768', { image_size: { width: 1024, height: 768 } }],
    ['1024x768', { image_size: { width: 1024, height: 768 } }],
    ['landscape_16_9', { image_size: 'landscape_16_9' }],
  ])('image_size of %s', (size, expected) => expect(falImageSize(size)).toEqual(expected));

  it.each([
    [undefined, {}],
    ['1024*1024', { aspect_ratio: '1:1' }],
    ['1536*1024', { aspect_ratio: '3:2' }],
    ['1024x1536', { aspect_ratio: '2:3' }],
    ['1344x768', { aspect_ratio: '16:9' }],
    ['21:9', { aspect_ratio: '21:9' }],
  ])('aspect_ratio of %s', (size, expected) => expect(falAspectRatio(size)).toEqual(expected));

  it.each([['big'], ['0x10'], ['3000x1000']])('%s is a 400 naming size', (size) => {
    const error = thrown(() => falAspectRatio(size));
    expect([error.status, error.param]).toEqual([400, 'size']);
  });
});

describe('translateFalImageRequest', () => {
  it('maps prompt, size, n and seed, and passes the allow-listed fal fields', () => {
    expect(translateFalImageRequest(request({ size: '1024*768', n: 3, seed: 5 }, { guidance_scale: 3.5, enable_safety_checker: true, stream: false }), 'fal-ai/flux/dev')).toEqual({
      prompt: 'a cat',
      image_size: { width: 1024, height: 768 },
      num_images: 3,
      seed: 5,
      guidance_scale: 3.5,
      enable_safety_checker: true,
    });
  });

  it('sends input images as image_url or image_urls by family', () => {
    expect(translateFalImageRequest(request({}, undefined, ['https://a.example/x.png']), 'fal-ai/flux-pro/kontext')).toMatchObject({ image_url: 'https://a.example/x.png' });
    expect(translateFalImageRequest(request({}, undefined, ['https://a.example/x.png', 'https://a.example/y.png']), 'fal-ai/nano-banana/edit')).toMatchObject({
      image_urls: ['https://a.example/x.png', 'https://a.example/y.png'],
    });
  });

  it.each([
    ['a contract parameter fal has no input for', request({ watermark: false }), 'fal-ai/flux/dev', 'parameters.watermark'],
    ['a field not on the allow-list', request({}, { sync_mode: true }), 'fal-ai/flux/dev', 'sync_mode'],
    ['an image for a text-to-image endpoint', request({}, undefined, ['https://a.example/x.png']), 'fal-ai/flux/dev', 'image'],
    ['two images for a one-image endpoint', request({}, undefined, ['https://a.example/x.png', 'https://a.example/y.png']), 'fal-ai/flux-pro/kontext', 'image'],
    ['a seed that is not a whole number', request({ seed: 1.5 }), 'fal-ai/flux/dev', 'parameters.seed'],
  ])('%s is a 400 naming it', (_name, given, endpoint, param) => {
    const error = thrown(() => translateFalImageRequest(given, endpoint));
    expect([error.status, error.param]).toEqual([400, param]);
  });
});

describe('translateFalImageResponse', () => {
  const image = (name: string) => ({ url: `https://v3.fal.media/files/${name}.png`, content_type: 'image/png', width: 1024, height: 768 });

  it('answers each image by URL, with its size for the usage event', () => {
    const answer = translateFalImageResponse({ images: [image('a'), image('b')], has_nsfw_concepts: [false, false], seed: 1 }, 'req-1');
    expect(answer.data.map((item) => item.url)).toEqual(['https://v3.fal.media/files/a.png', 'https://v3.fal.media/files/b.png']);
    expect(answer.extra.request_id).toBe('req-1');
    expect(answer.sizes).toEqual(['1024x768', '1024x768']);
  });

  it("reads a single `image`, and nano-banana's description as revised_prompt", () => {
    expect(translateFalImageResponse({ image: image('a'), description: 'A cat.' }, 'r').data).toEqual([{ url: 'https://v3.fal.media/files/a.png', b64_json: '', revised_prompt: 'A cat.' }]);
  });

  it('drops flagged images, and refuses when every image is flagged', () => {
    expect(translateFalImageResponse({ images: [image('a'), image('b')], has_nsfw_concepts: [true, false] }, 'r').data).toHaveLength(1);
    const refused = thrown(() => translateFalImageResponse({ images: [image('a')], has_nsfw_concepts: [true] }, 'r'));
    expect([refused.status, refused.code]).toEqual([400, 'content_policy_violation']);
  });

  it('no image is a 502 upstream_no_image', () => {
    const error = thrown(() => translateFalImageResponse({ images: [] }, 'r'));
    expect([error.status, error.code]).toEqual([502, 'upstream_no_image']);
  });
});

describe('normalizeFalError', () => {
  it.each([
    [401, { detail: 'Invalid key' }, {}, 502, 'upstream_auth_failed', undefined],
    [403, { detail: 'Forbidden' }, {}, 502, 'upstream_auth_failed', undefined],
    [429, { detail: 'Rate limited' }, { 'retry-after': '9' }, 429, 'rate_limit_exceeded', undefined],
    [422, { detail: [{ loc: ['body', 'num_images'], msg: 'at most 4', type: 'value_error' }] }, {}, 400, 'invalid_request_error', 'n'],
    [422, { detail: [{ loc: ['body', 'guidance_scale'], msg: 'too large', type: 'value_error' }] }, {}, 400, 'invalid_request_error', 'guidance_scale'],
    [422, { detail: [{ loc: ['body', 'prompt'], msg: 'flagged', type: 'content_policy_violation' }] }, {}, 400, 'content_policy_violation', undefined],
    [400, { detail: 'Bad input' }, {}, 400, 'invalid_request_error', undefined],
    [500, { detail: 'Internal error' }, {}, 502, 'upstream_error', undefined],
  ])('%i %j', (status, body, headers, callerStatus, code, param) => {
    const error = normalizeFalError(status, body, headers);
    expect([error.status, error.code, error.param]).toEqual([callerStatus, code, param]);
    if (status === 429) expect(error.retryAfterSeconds).toBe(9);
  });

  it('names the field of the first 422 entry', () => {
    expect(falFieldOf({ detail: [{ loc: ['body', 'image_size', 'width'], msg: 'x' }] })).toBe('image_size');
    expect(falFieldOf({ detail: 'text' })).toBeUndefined();
  });
});

describe('the queue', () => {
  it.each([
    ['fal-ai/flux/dev', 'fal-ai/flux'],
    ['fal-ai/kling-video/v2.1/standard/text-to-video', 'fal-ai/kling-video'],
    ['fal-ai/nano-banana', 'fal-ai/nano-banana'],
    ['workflows/me/my-flow/run', 'workflows/me/my-flow'],
  ])('the app id of %s is %s', (endpoint, app) => expect(appIdOf(endpoint)).toBe(app));

  it.each([['flux'], ['fal-ai/../x'], ['fal-ai/flux?x=1'], ['https://evil.example/a/b']])('%s is no endpoint id', (endpoint) => {
    expect(thrown(() => appIdOf(endpoint)).status).toBe(502);
  });

  it('a stored task id round-trips, and a foreign one is a 404', () => {
    const ref = { app: 'fal-ai/kling-video', request: 'abc-123', seconds: 5, resolution: '720p' };
    expect(decodeFalTaskId(encodeFalTaskId(ref))).toEqual(ref);
    expect(thrown(() => decodeFalTaskId('cgt-2025')).status).toBe(404);
    expect(thrown(() => decodeFalTaskId('app=..%2Fx&request=1')).status).toBe(404);
  });

  it.each([
    [{ status: 'IN_QUEUE', queue_position: 3 }, 'IN_QUEUE'],
    [{ status: 'IN_PROGRESS', logs: [] }, 'IN_PROGRESS'],
    [{ status: 'COMPLETED' }, 'COMPLETED'],
    [{ status: 'SOMETHING_NEW' }, 'IN_PROGRESS'],
  ])('status %j', (body, status) => expect(readFalStatus(body).status).toBe(status));

  it('an error met after the submit is one of started work: the fallback rule submits nowhere else', () => {
    const refused = normalizeFalError(429, { detail: 'slow down' }, { 'retry-after': '3' });
    expect(refused.notStarted).toBe(true);
    const after = asStartedWork(refused) as GatewayError;
    expect([after.status, after.code, after.notStarted, after.retryAfterSeconds]).toEqual([429, 'rate_limit_exceeded', false, 3]);
    const plain = new Error('x');
    expect(asStartedWork(plain)).toBe(plain);
  });

  it('a COMPLETED status with an error is that failure', () => {
    const state = readFalStatus({ status: 'COMPLETED', error: 'Out of memory', error_type: 'internal_error' });
    expect(state.status === 'COMPLETED' && state.error?.status).toBe(502);
  });
});

describe('video', () => {
  const text = { type: 'text', text: 'a boat' };
  const first = { type: 'image_url', image_url: { url: 'https://a.example/first.png' } };
  const last = { type: 'image_url', image_url: { url: 'https://a.example/last.png' }, role: 'last_frame' };

  it.each([
    [
      'fal-ai/kling-video/v2.1/pro/image-to-video',
      { content: [text, first, last], ratio: '16:9', duration: 10, watermark: false },
      { prompt: 'a boat', image_url: 'https://a.example/first.png', tail_image_url: 'https://a.example/last.png', aspect_ratio: '16:9', duration: '10' },
    ],
    ['fal-ai/veo3', { content: [text], duration: 8, resolution: '1080p', generate_audio: true, seed: 3 }, { prompt: 'a boat', duration: '8s', resolution: '1080p', generate_audio: true, seed: 3 }],
    [
      'fal-ai/bytedance/seedance/v1/pro/image-to-video',
      { content: [text, first], ratio: 'adaptive', duration: 5, camera_fixed: true },
      { prompt: 'a boat', image_url: 'https://a.example/first.png', duration: '5', camera_fixed: true },
    ],
  ])('%s', (endpoint, body, input) => expect(translateFalVideoRequest({ model: 'm', callback_url: 'https://cb.example', ...body }, endpoint)).toEqual(input));

  it.each([
    ['a resolution Kling has no input for', 'fal-ai/kling-video/v2.1/standard/text-to-video', { content: [text], resolution: '720p' }, 'resolution'],
    ['duration -1', 'fal-ai/veo3', { content: [text], duration: -1 }, 'duration'],
    ['a watermark', 'fal-ai/veo3', { content: [text], watermark: true }, 'watermark'],
    ['an Ark-only field', 'fal-ai/veo3', { content: [text], draft: true }, 'draft'],
    ['a reference image', 'fal-ai/veo3', { content: [text, { ...first, role: 'reference_image' }] }, 'content[1].role'],
  ])('%s is a 400 naming it', (_name, endpoint, body, param) => {
    expect(thrown(() => translateFalVideoRequest(body, endpoint)).param).toBe(param);
  });

  it("answers Ark's task shape", () => {
    expect(toCallerTask({ status: 'succeeded', request_id: 'r', video_url: 'https://v3.fal.media/files/v.mp4', seconds: 5, resolution: '720p' }, 'task_1', 'kling')).toEqual({
      id: 'task_1',
      model: 'kling',
      status: 'succeeded',
      content: { video_url: 'https://v3.fal.media/files/v.mp4' },
      duration: 5,
      resolution: '720p',
    });
    expect(toCallerTask({ status: 'failed', request_id: 'r', error: { code: 'content_policy_violation', message: 'no' } }, 'task_1', 'kling')).toEqual({
      id: 'task_1',
      model: 'kling',
      status: 'failed',
      error: { code: 'content_policy_violation', message: 'no' },
    });
  });
});
