// The Veo translation (docs/providers/gemini.md "Video (Veo)"): the Ark-shaped create body as a
// predictLongRunning body per API, the refusals naming their field, the stored task id, and the
// operation read back as Ark's task object, table by table.
import { describe, expect, it } from 'vitest';
import { parseVideoTaskId, sameOrigin, toCallerVideoTask, translateVideoRequest, videoTaskId } from '../../lib/providers/google/google-video.js';
import { thrown } from '../helpers/thrown.js';

const PNG_B64 = 'iVBORw0KGgo=';
const text = (value: string) => ({ type: 'text', text: value });
const image = (url: string, role?: string) => ({ type: 'image_url', image_url: { url }, ...(role ? { role } : {}) });

describe('translateVideoRequest', () => {
  it.each([
    [
      'text only, Veo defaults reported',
      { content: [text('a boat')] },
      'gemini',
      { instances: [{ prompt: 'a boat' }], parameters: { sampleCount: 1, durationSeconds: 8 } },
      { duration: 8, resolution: '720p', ratio: '16:9' },
    ],
    [
      'ratio, duration, resolution, negative_prompt',
      { content: [text('a'), text('b')], ratio: '9:16', duration: 4, resolution: '1080p', negative_prompt: 'fog' },
      'gemini',
      { instances: [{ prompt: 'a\nb' }], parameters: { sampleCount: 1, durationSeconds: 4, aspectRatio: '9:16', resolution: '1080p', negativePrompt: 'fog' } },
      { duration: 4, resolution: '1080p', ratio: '9:16' },
    ],
    [
      'an image alone is the first frame',
      { content: [image(`data:image/png;base64,${PNG_B64}`)] },
      'gemini',
      { instances: [{ image: { bytesBase64Encoded: PNG_B64, mimeType: 'image/png' } }], parameters: { sampleCount: 1, durationSeconds: 8 } },
      { duration: 8, resolution: '720p', ratio: '16:9' },
    ],
    [
      'first and last frames, reference images, Veo fields, seed and audio on Vertex',
      {
        content: [
          text('x'),
          image(`data:image/jpeg;base64,${PNG_B64}`, 'first_frame'),
          image(`data:image/png;base64,${PNG_B64}`, 'last_frame'),
          image(`data:image/png;base64,${PNG_B64}`, 'reference_image'),
        ],
        seed: 5,
        generate_audio: false,
        personGeneration: 'allow_adult',
      },
      'vertex',
      {
        instances: [
          {
            prompt: 'x',
            image: { bytesBase64Encoded: PNG_B64, mimeType: 'image/jpeg' },
            lastFrame: { bytesBase64Encoded: PNG_B64, mimeType: 'image/png' },
            referenceImages: [{ image: { bytesBase64Encoded: PNG_B64, mimeType: 'image/png' }, referenceType: 'asset' }],
          },
        ],
        parameters: { sampleCount: 1, durationSeconds: 8, seed: 5, generateAudio: false, personGeneration: 'allow_adult' },
      },
      { duration: 8, resolution: '720p', ratio: '16:9' },
    ],
  ] as const)('%s', (_name, body, api, expected, asked) => {
    expect(translateVideoRequest(body as unknown as Record<string, unknown>, api)).toEqual({ request: expected, asked });
  });

  it.each([
    [{ content: [text('x'), image('https://example.com/a.png', 'first_frame')] }, 'gemini', 'content[1].image_url.url'],
    [{ content: [text('x'), image('asset://asset-123', 'first_frame')] }, 'gemini', 'content[1].image_url.url'],
    [{ content: [text('x'), image(`data:image/png;base64,${PNG_B64}`, 'middle')] }, 'gemini', 'content[1].role'],
    [{ content: [image(`data:image/png;base64,${PNG_B64}`), image(`data:image/png;base64,${PNG_B64}`)] }, 'gemini', 'content[0].role'],
    [{ content: [text('x'), image(`data:image/png;base64,${PNG_B64}`, 'first_frame'), image(`data:image/png;base64,${PNG_B64}`, 'first_frame')] }, 'gemini', 'content[2].role'],
    [{ content: [text('x'), { type: 'video_url', video_url: { url: 'https://example.com/v.mp4' } }] }, 'gemini', 'content[1].type'],
    [{ content: [image(`data:image/png;base64,${PNG_B64}`, 'last_frame')] }, 'gemini', 'content'],
    [{ content: [text('x')], duration: 3 }, 'gemini', 'duration'],
    [{ content: [text('x')], duration: 6.5 }, 'gemini', 'duration'],
    [{ content: [text('x')], duration: -1 }, 'gemini', 'duration'],
    [{ content: [text('x')], ratio: '4:3' }, 'gemini', 'ratio'],
    [{ content: [text('x')], resolution: '480p' }, 'gemini', 'resolution'],
    [{ content: [text('x')], seed: 1 }, 'gemini', 'seed'],
    [{ content: [text('x')], seed: -1 }, 'vertex', 'seed'],
    [{ content: [text('x')], generate_audio: true }, 'gemini', 'generate_audio'],
    [{ content: [text('x')], compressionQuality: 'lossless' }, 'gemini', 'compressionQuality'],
    [{ content: [text('x')], watermark: false }, 'vertex', 'watermark'],
    [{ content: [text('x')], personGeneration: { all: true } }, 'vertex', 'personGeneration'],
  ] as const)('refuses %j on %s naming %s', (body, api, param) => {
    const error = thrown(() => translateVideoRequest(body, api));
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });
});

describe('the stored task id', () => {
  it.each([
    ['models/veo-3.0-generate-001/operations/abc123', { duration: 6, resolution: '1080p', ratio: '9:16' }],
    ['projects/p/locations/us-central1/publishers/google/models/veo-3.0-generate-001/operations/0f1e-22', { duration: 8, resolution: '720p', ratio: '16:9' }],
  ])('round-trips %s', (name, asked) => {
    const id = videoTaskId(name, asked);
    expect(id.startsWith(`${name}#`)).toBe(true);
    expect(parseVideoTaskId(id)).toEqual({ operationName: name, asked });
  });

  it('an id without what was asked reports the defaults', () => {
    expect(parseVideoTaskId('models/veo/operations/x')).toEqual({ operationName: 'models/veo/operations/x', asked: { duration: 8, resolution: '720p', ratio: '16:9' } });
  });
});

describe('toCallerVideoTask', () => {
  const asked = { duration: 6, resolution: '720p', ratio: '16:9' };
  const task = (operation: Record<string, unknown>, api: 'gemini' | 'vertex' = 'gemini') => toCallerVideoTask({ operation, asked, api }, 'task_x', 'veo-3');
  const rai = { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['filtered'] };

  it.each([
    ['not done', { name: 'op' }, 'gemini', { status: 'running' }],
    [
      'a Gemini API sample URI',
      { done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { uri: 'https://generativelanguage.googleapis.com/v1beta/files/f:download?alt=media' } }] } } },
      'gemini',
      { status: 'succeeded', content: { video_url: 'https://generativelanguage.googleapis.com/v1beta/files/f:download?alt=media' } },
    ],
    [
      'Vertex AI bytes',
      { done: true, response: { videos: [{ bytesBase64Encoded: 'AAAA', mimeType: 'video/mp4' }] } },
      'vertex',
      { status: 'succeeded', content: { video_url: 'data:video/mp4;base64,AAAA' } },
    ],
    [
      'an operation error',
      { done: true, error: { code: 3, message: 'bad prompt', status: 'INVALID_ARGUMENT' } },
      'gemini',
      { status: 'failed', error: { code: 'INVALID_ARGUMENT', message: 'bad prompt' } },
    ],
    ['filtered on the Gemini API', { done: true, response: { generateVideoResponse: rai } }, 'gemini', { status: 'failed', error: { code: 'content_policy_violation', message: 'filtered' } }],
    ['filtered on Vertex AI', { done: true, response: rai }, 'vertex', { status: 'failed', error: { code: 'content_policy_violation', message: 'filtered' } }],
    ['done with nothing', { done: true, response: {} }, 'gemini', { status: 'failed', error: { code: 'upstream_no_video' } }],
    ['a gs:// URI is not a video the gateway can fetch', { done: true, response: { videos: [{ gcsUri: 'gs://b/v.mp4' }] } }, 'vertex', { status: 'failed', error: { code: 'upstream_no_video' } }],
  ] as const)('%s', (_name, operation, api, expected) => {
    expect(task(operation as unknown as Record<string, unknown>, api)).toMatchObject({ id: 'task_x', model: 'veo-3', ...asked, ...expected });
  });

  it('a state that is not an operation is a 502', () => {
    expect(thrown(() => toCallerVideoTask({ name: 'x' }, 'task_x', 'veo-3')).status).toBe(502);
    expect(thrown(() => toCallerVideoTask(null, 'task_x', 'veo-3')).status).toBe(502);
  });
});

describe('sameOrigin', () => {
  it.each([
    ['https://generativelanguage.googleapis.com/v1beta/files/a:download', 'https://generativelanguage.googleapis.com/v1beta', true],
    ['https://evil.example/v1beta/files/a', 'https://generativelanguage.googleapis.com/v1beta', false],
    ['http://generativelanguage.googleapis.com/v1beta/files/a', 'https://generativelanguage.googleapis.com/v1beta', false],
    ['https://generativelanguage.googleapis.com:444/x', 'https://generativelanguage.googleapis.com', false],
    ['not a url', 'https://generativelanguage.googleapis.com', false],
  ])('%s against %s: %s', (url, base, expected) => {
    expect(sameOrigin(url, base)).toBe(expected);
  });
});
