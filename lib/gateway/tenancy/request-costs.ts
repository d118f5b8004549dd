// What a request costs against the quotas, read from its body.
// Video tasks in video-seconds (quotas.videoSecondsPerDay): the duration the create asks
// for, where Ark reads it (upstreams §2.2): the top-level `duration`, else an inline `--dur N` /
// `--duration N` flag in a text item (older Seedance models), else the configured default (Seedance's
// own default is 5 s). `frames` is not converted: its frame rate is the model's.
import type { VideoTaskBody } from '../../schemas/video-task-schema.js';

const DURATION_FLAG = /(?:^|\s)--(?:dur|duration)\s+(\d{1,4})(?:\s|$)/;

export function videoSecondsOf(body: VideoTaskBody, fallback: number): number {
  if (typeof body.duration === 'number' && Number.isSafeInteger(body.duration) && body.duration > 0) return body.duration;
  for (const item of body.content) {
    const match = typeof item.text === 'string' ? DURATION_FLAG.exec(item.text) : null;
    if (match) return Math.max(1, Number(match[1]));
  }
  return fallback;
}

/** Ark's largest image group (upstreams §2.6: `sequential_image_generation_options.max_images`, 1-15). */
const ARK_MAX_GROUP = 15;

/**
 * Images an Ark native image request may return (POST /api/v3/images/generations): 1, or with
 * `sequential_image_generation: 'auto'` its `max_images` (default 15, Ark's ceiling). The quota is
 * charged this much up front; the usage event reports what came back.
 */
export function nativeImagesAsked(body: Record<string, unknown>): number {
  if (body.sequential_image_generation !== 'auto') return 1;
  const options = body.sequential_image_generation_options as { max_images?: unknown } | undefined;
  const most = options?.max_images;
  return typeof most === 'number' && Number.isSafeInteger(most) && most >= 1 ? Math.min(most, ARK_MAX_GROUP) : ARK_MAX_GROUP;
}
