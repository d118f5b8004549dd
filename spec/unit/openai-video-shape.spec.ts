// The OpenAI video shape's translation (docs/openai-videos.md): a create's fields into the task body,
// checked against the model's catalogue row (seconds, size as resolution and ratio); a task's status
// and state as the `Video` object; a task's resolution and ratio as a size.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/errors/gateway-error.js';
import { readVideoCreate, sizeFields, sizeOf, videoObjectOf, videoStatusOf } from '../../lib/gateway/video-tasks/openai-video-shape.js';
import { modelEntry } from '../../lib/providers/registry.js';

const veo = modelEntry('veo-3.1-generate-preview')!;
const kling = modelEntry('fal-ai/kling-video/v2.1/standard/text-to-video')!;
const seedance = modelEntry('doubao-seedance-1-0-pro-250528')!;
const minimax = modelEntry('minimax/video-01')!;

/** The 400 a call throws, as `param: message`. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError && error.status === 400) return `${error.param}: ${error.message}`;
    throw error;
  }
  throw new Error('not refused');
}

describe('readVideoCreate, then bodyFor the row', () => {
  it.each([
    {
      name: 'Veo: seconds and size as duration, resolution and ratio',
      fields: { model: 'v', prompt: 'a boat', seconds: '8', size: '1280x720' },
      entry: veo,
      body: { model: 'v', content: [{ type: 'text', text: 'a boat' }], duration: 8, resolution: '720p', ratio: '16:9' },
      asked: { prompt: 'a boat', seconds: '8', size: '1280x720' },
    },
    {
      name: 'Kling: a ratio and no resolution (the model takes none)',
      fields: { model: 'k', prompt: 'waves', seconds: 10, size: '720x1280' },
      entry: kling,
      body: { model: 'k', content: [{ type: 'text', text: 'waves' }], duration: 10, ratio: '9:16' },
      asked: { prompt: 'waves', seconds: '10', size: '720x1280' },
    },
    {
      name: 'Seedance: 1080p square',
      fields: { model: 's', prompt: 'p', size: '1080X1080' },
      entry: seedance,
      body: { model: 's', content: [{ type: 'text', text: 'p' }], resolution: '1080p', ratio: '1:1' },
      asked: { prompt: 'p', size: '1080x1080' },
    },
    {
      name: 'no catalogue row: both fields sent, the upstream decides',
      fields: { model: 'u', prompt: 'p', seconds: '7', size: '1024x1792', callback_url: 'https://hooks.example/v' },
      entry: undefined,
      body: { model: 'u', content: [{ type: 'text', text: 'p' }], duration: 7, resolution: '1024p', ratio: '4:7', callback_url: 'https://hooks.example/v' },
      asked: { prompt: 'p', seconds: '7', size: '1024x1792' },
    },
    {
      name: 'input_reference as { image_url } is the first frame',
      fields: { model: 'v', prompt: 'p', input_reference: { image_url: 'https://cdn.example/a.png' } },
      entry: veo,
      body: {
        model: 'v',
        content: [
          { type: 'text', text: 'p' },
          { type: 'image_url', image_url: { url: 'https://cdn.example/a.png' }, role: 'first_frame' },
        ],
      },
      asked: { prompt: 'p' },
    },
  ])('$name', ({ fields, entry, body, asked }) => {
    const read = readVideoCreate(fields);
    expect({ body: read.bodyFor(entry), asked: read.asked }).toStrictEqual({ body, asked });
    // the read body has only the fields no row decides: the task service maps the rest by the row the task follows
    expect(read.body).toStrictEqual({ model: body.model, content: body.content, ...(body.callback_url ? { callback_url: body.callback_url } : {}) });
  });

  it.each([
    { fields: { prompt: 'p' }, entry: veo, refused: /^model: model is required/ },
    { fields: { model: 'v', prompt: ' ' }, entry: veo, refused: /^prompt: prompt is required/ },
    { fields: { model: 'v', prompt: 'p', seconds: '5' }, entry: veo, refused: /^seconds: seconds must be one of 4, 6, 8 seconds for model 'v', got 5/ },
    { fields: { model: 'v', prompt: 'p', seconds: '12' }, entry: veo, refused: /^seconds: seconds must be one of 4, 6, 8/ },
    { fields: { model: 'v', prompt: 'p', seconds: '4.5' }, entry: veo, refused: /^seconds: seconds must be a whole number/ },
    { fields: { model: 'k', prompt: 'p', seconds: '8' }, entry: kling, refused: /^seconds: seconds must be one of 5, 10 seconds/ },
    { fields: { model: 'm', prompt: 'p', seconds: '6' }, entry: minimax, refused: /^seconds: Model 'm' makes videos of one length/ },
    { fields: { model: 'm', prompt: 'p', size: '1280x720' }, entry: minimax, refused: /^size: Model 'm' takes no size/ },
    { fields: { model: 'v', prompt: 'p', size: '1792x1024' }, entry: veo, refused: /^size: size '1792x1024' \(resolution 1024p\) is not a resolution model 'v' makes: use one of 720p, 1080p/ },
    { fields: { model: 'v', prompt: 'p', size: '960x720' }, entry: veo, refused: /^size: size '960x720' \(ratio 4:3\) is not a ratio model 'v' makes: use one of 16:9, 9:16/ },
    { fields: { model: 'k', prompt: 'p', size: '1024x768' }, entry: kling, refused: /^size: .*ratio 4:3/ },
    { fields: { model: 'v', prompt: 'p', size: 'large' }, entry: veo, refused: /^size: size must be width x height/ },
    { fields: { model: 'v', prompt: 'p', input_reference: { file_id: 'file_1' } }, entry: veo, refused: /^input_reference: input_reference.file_id is not supported/ },
    { fields: { model: 'v', prompt: 'p', input_reference: 'https://cdn.example/a.png' }, entry: veo, refused: /^input_reference: input_reference must be an image file/ },
    { fields: { model: 'v', prompt: 'p', remix_video_id: 'video_1' }, entry: veo, refused: /^remix_video_id: Unknown parameter/ },
    { fields: { model: 'v', prompt: 'p', callback_url: 7 }, entry: veo, refused: /^callback_url: callback_url must be a string/ },
  ])('refuses $fields', ({ fields, entry, refused }) => {
    expect(refusal(() => readVideoCreate(fields).bodyFor(entry))).toMatch(refused);
  });
});

describe('sizeFields', () => {
  it.each([
    ['1280x720', { resolution: '720p', ratio: '16:9' }],
    ['720x1280', { resolution: '720p', ratio: '9:16' }],
    ['1920x1080', { resolution: '1080p', ratio: '16:9' }],
    [' 1080 x 1920 ', { resolution: '1080p', ratio: '9:16' }],
  ])('%s on Veo', (size, fields) => {
    expect(sizeFields(size, veo, 'v')).toStrictEqual(fields);
  });
});

describe('videoStatusOf', () => {
  it.each([
    ['queued', 'queued'],
    ['running', 'in_progress'],
    ['a-new-upstream-state', 'in_progress'],
    ['succeeded', 'completed'],
    ['failed', 'failed'],
    ['expired', 'failed'],
    ['cancelled', 'failed'],
  ] as const)('%s -> %s', (status, video) => {
    expect(videoStatusOf(status)).toBe(video);
  });
});

describe('sizeOf', () => {
  it.each([
    ['720p', '16:9', '1280x720'],
    ['720p', '9:16', '720x1280'],
    ['1080p', '1:1', '1080x1080'],
    ['480p', '4:3', '640x480'],
    ['720p', 'adaptive', undefined],
    [undefined, '16:9', undefined],
    ['2K', '16:9', undefined],
  ])('%s %s -> %s', (resolution, ratio, size) => {
    expect(sizeOf(resolution, ratio)).toBe(size);
  });
});

describe('videoObjectOf', () => {
  const record = { id: 'task_abc', model: 'x-veo', createdAt: 1_779_348_818_500 };

  it('a completed task of the task shape: its seconds and size from the state', () => {
    const video = videoObjectOf(record, { status: 'succeeded', duration: 5, resolution: '720p', ratio: '16:9', updated_at: 1_779_348_874 });
    expect(video).toStrictEqual({
      id: 'task_abc',
      object: 'video',
      model: 'x-veo',
      status: 'completed',
      progress: 100,
      created_at: 1_779_348_818,
      completed_at: 1_779_348_874,
      expires_at: null,
      prompt: null,
      seconds: '5',
      size: '1280x720',
      remixed_from_video_id: null,
      error: null,
    });
  });

  it('a failed task: the upstream error, or one that says how it ended', () => {
    const asked = { prompt: 'p', seconds: '8', size: '720x1280' };
    expect(videoObjectOf({ ...record, asked }, { status: 'failed', error: { code: 'OutputVideoSensitiveContentDetected', message: 'sensitive' } })).toMatchObject({
      status: 'failed',
      prompt: 'p',
      seconds: '8',
      size: '720x1280',
      error: { code: 'OutputVideoSensitiveContentDetected', message: 'sensitive' },
    });
    expect(videoObjectOf(record, { status: 'expired' }).error).toStrictEqual({ code: 'video_generation_failed', message: 'The video task ended expired' });
  });

  it.each([
    ['asked', { seconds: '8', chargedSeconds: '5' }, { duration: 10 }, '8'],
    ['reported by the upstream', { chargedSeconds: '5' }, { duration: 10 }, '10'],
    ['neither: the length charged', { chargedSeconds: '5' }, {}, '5'],
    ['a record kept before the charged length: the documented fallback', {}, {}, ''],
  ])('seconds %s', (_name, asked, state, seconds) => {
    expect(videoObjectOf({ ...record, asked }, { status: 'running', ...state }).seconds).toBe(seconds);
  });

  it('a running task: the upstream progress where given', () => {
    expect(videoObjectOf(record, { status: 'running', progress: 42.7 })).toMatchObject({ status: 'in_progress', progress: 42, completed_at: null, seconds: '', size: '' });
    expect(videoObjectOf(record, { status: 'running', progress: 420 }).progress).toBe(0);
  });
});
