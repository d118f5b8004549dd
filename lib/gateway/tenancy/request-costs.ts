// What a request costs against the quotas, read from its body (docs/tenancy-and-billing.md "What is
// charged"). Video tasks in video-seconds (quotas.videoSecondsPerDay): every field that sets a length
// counts, where Ark reads it (upstreams §2.2): the top-level `duration` and `frames`, and the text
// commands of older Seedance models (`--duration`/`--dur`, `--frames`/`--fr`). Frames are seconds at
// Seedance's 24 frames per second (its frame counts are 24 × seconds + 1: 121 is 5 s, 289 is 12 s).
// Two that disagree are a 400: the charge must be what the upstream will make. None: the configured
// default (Seedance's own default is 5 s).
import { GatewayError } from '../../errors/gateway-error.js';
import type { VideoTaskBody } from '../../schemas/video-task-schema.js';

/** Seedance renders 24 frames per second; the vendor documents no other rate for `frames`. */
const VIDEO_FRAME_RATE = 24;

const DURATION_FLAG = /(?:^|\s)--(?:dur|duration)\s+(\d{1,4})(?=\s|$)/g;
const FRAMES_FLAG = /(?:^|\s)--(?:fr|frames)\s+(\d{1,5})(?=\s|$)/g;

interface LengthSource {
  name: string;
  seconds: number;
}

/** Whole seconds of a frame count (rounded up, so a charge never falls short of the video). */
function secondsOfFrames(frames: number): number {
  return Math.max(1, Math.ceil((frames - 1) / VIDEO_FRAME_RATE));
}

function positive(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

export function videoSecondsOf(body: VideoTaskBody, fallback: number): number {
  const sources: LengthSource[] = [];
  if (positive(body.duration)) sources.push({ name: 'duration', seconds: body.duration });
  if (positive(body.frames)) sources.push({ name: 'frames', seconds: secondsOfFrames(body.frames) });
  body.content.forEach((item, index) => {
    if (typeof item.text !== 'string') return;
    for (const match of item.text.matchAll(DURATION_FLAG)) sources.push({ name: `content[${index}].text --dur`, seconds: Math.max(1, Number(match[1])) });
    for (const match of item.text.matchAll(FRAMES_FLAG)) sources.push({ name: `content[${index}].text --frames`, seconds: secondsOfFrames(Number(match[1])) });
  });
  const [first, ...others] = sources;
  if (!first) return fallback;
  const other = others.find((source) => source.seconds !== first.seconds);
  if (other) {
    throw GatewayError.invalidRequest(
      `${first.name} asks for ${first.seconds} s and ${other.name} for ${other.seconds} s (frames count at ${VIDEO_FRAME_RATE} per second): set the video's length once`,
      first.name.startsWith('content') ? 'content' : first.name,
    );
  }
  return first.seconds;
}
