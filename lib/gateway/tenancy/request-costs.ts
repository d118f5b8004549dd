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
