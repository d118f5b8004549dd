// What a request costs against the quotas (lib/gateway/tenancy/request-costs.ts): a video task's
// seconds from `duration`, a `--dur`/`--duration` text flag or the default; an Ark native image
// request's images from its group options.
import { describe, expect, it } from 'vitest';
import { videoSecondsOf } from '../../lib/gateway/tenancy/request-costs.js';
import { nativeImagesAsked } from '../../lib/providers/ark/ark-image-groups.js';
import type { VideoTaskBody } from '../../lib/schemas/video-task-schema.js';

const task = (extra: Partial<VideoTaskBody>, text = 'a cat'): VideoTaskBody => ({ model: 'seedance', content: [{ type: 'text', text }], ...extra });

describe('videoSecondsOf', () => {
  it.each<{ name: string; body: VideoTaskBody; seconds: number }>([
    { name: 'top-level duration', body: task({ duration: 10 }), seconds: 10 },
    { name: 'duration and a text flag that agree', body: task({ duration: 10 }, 'a cat --dur 10'), seconds: 10 },
    { name: 'frames at 24 per second (289 frames are 12 s)', body: task({ frames: 289 }), seconds: 12 },
    { name: 'frames rounded up (130 frames are 6 s)', body: task({ frames: 130 }), seconds: 6 },
    { name: 'frames and duration that agree', body: task({ frames: 121, duration: 5 }), seconds: 5 },
    { name: '--frames flag', body: task({}, 'a cat --frames 241'), seconds: 10 },
    { name: '--fr flag', body: task({}, 'a cat --fr 145 --rs 720p'), seconds: 6 },
    { name: '--dur flag', body: task({}, 'a cat --ratio 16:9 --dur 8 --fps 24'), seconds: 8 },
    { name: '--duration flag at the end', body: task({}, 'a cat --duration 12'), seconds: 12 },
    { name: 'a flag glued to a word is not one', body: task({}, 'a cat--dur 9'), seconds: 5 },
    { name: 'no duration: the default', body: task({}), seconds: 5 },
    { name: 'a non-positive duration: the default', body: task({ duration: 0 }), seconds: 5 },
  ])('$name', ({ body, seconds }) => {
    expect(videoSecondsOf(body, 5)).toBe(seconds);
  });
});

describe('videoSecondsOf with lengths that disagree', () => {
  it.each<{ name: string; body: VideoTaskBody; param: string }>([
    { name: 'duration and a --dur flag', body: task({ duration: 4 }, 'a cat --dur 10'), param: 'duration' },
    { name: 'duration and frames', body: task({ duration: 5, frames: 289 }), param: 'duration' },
    { name: 'frames and a --dur flag', body: task({ frames: 121 }, 'a cat --dur 8'), param: 'frames' },
    { name: 'two text flags', body: task({}, 'a cat --dur 5 --frames 289'), param: 'content' },
  ])('$name: a 400 naming the first', ({ body, param }) => {
    expect(() => videoSecondsOf(body, 5)).toThrow(expect.objectContaining({ status: 400, param }));
  });
});

describe('nativeImagesAsked', () => {
  it.each<{ name: string; body: Record<string, unknown>; images: number }>([
    { name: 'one image by default', body: { model: 'seedream', prompt: 'x' }, images: 1 },
    { name: "group off ('disabled')", body: { sequential_image_generation: 'disabled', sequential_image_generation_options: { max_images: 4 } }, images: 1 },
    { name: 'group with max_images', body: { sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 4 } }, images: 4 },
    { name: 'group without max_images: Ark ceiling', body: { sequential_image_generation: 'auto' }, images: 15 },
    { name: 'max_images above the ceiling', body: { sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 99 } }, images: 15 },
  ])('$name', ({ body, images }) => {
    expect(nativeImagesAsked(body)).toBe(images);
  });
});
