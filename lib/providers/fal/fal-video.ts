// fal video tasks (docs/providers/fal.md "Video tasks"): the caller's body is Ark's create shape
// (docs/video-tasks-and-callbacks.md), sent as a fal queue request to the configured endpoint; a query
// reads the queue status and, once COMPLETED, the result (`{ video: { url } }`), answered in Ark's task
// shape. Fields are mapped by the endpoint's family: Kling and MiniMax take `duration: "5"`, Veo
// `duration: "8s"`; a field the family has no input for is a 400 naming it.
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { encodeJsonWithUploads } from '../../images/uploaded-image.js';
import { isObject, stringOr } from '../../json/json-values.js';
import type { Upstream } from '../../types.js';
import type { CallContext } from '../call-context.js';
import type { UpstreamVideoTasks } from '../provider.js';
import { appIdOf, decodeFalTaskId, encodeFalTaskId, falResult, falStatus, submitFal } from './fal-queue.js';

/** What a video family takes (the inputs of its fal endpoints). */
export interface FalVideoFamily {
  /** `"5"` (Kling, MiniMax, Seedance) or `"8s"` (Veo). */
  duration: 'number' | 'seconds';
  resolution: boolean;
  seed: boolean;
  audio: boolean;
  cameraFixed: boolean;
  /** The field of a last-frame image (`role: 'last_frame'`), when the family takes one. */
  lastFrame?: string;
}

/** The family of a video endpoint id (docs/providers/fal.md "Video tasks"). */
function falVideoFamilyOf(endpointId: string): FalVideoFamily {
  if (/(?:^|\/)veo\d/.test(endpointId)) return { duration: 'seconds', resolution: true, seed: true, audio: true, cameraFixed: false };
  if (/(?:^|\/)kling-video\//.test(endpointId)) return { duration: 'number', resolution: false, seed: false, audio: false, cameraFixed: false, lastFrame: 'tail_image_url' };
  if (/\/seedance\//.test(endpointId)) return { duration: 'number', resolution: true, seed: true, audio: false, cameraFixed: true, lastFrame: 'end_image_url' };
  // MiniMax Hailuo and other endpoints: a prompt, a first frame and a length
  return { duration: 'number', resolution: false, seed: false, audio: false, cameraFixed: false };
}

/** fal's own video fields a caller may send, passed on as they are. */
const FAL_VIDEO_FIELDS: ReadonlySet<string> = new Set(['negative_prompt', 'cfg_scale', 'prompt_optimizer', 'enhance_prompt', 'auto_fix']);
/** The gateway's fields (the model is the gateway's, the callback is delivered by the gateway). */
const GATEWAY_FIELDS: ReadonlySet<string> = new Set(['model', 'callback_url']);

function contentOf(body: Record<string, unknown>, family: FalVideoFamily, endpointId: string): Record<string, unknown> {
  const content = Array.isArray(body.content) ? (body.content as unknown[]) : [];
  const texts: string[] = [];
  const input: Record<string, unknown> = {};
  content.forEach((item, index) => {
    if (!isObject(item)) return;
    if (item.type === 'text' && typeof item.text === 'string') {
      texts.push(item.text);
      return;
    }
    const url = item.type === 'image_url' && isObject(item.image_url) ? stringOr(item.image_url.url) : undefined;
    const path = `content[${index}]`;
    if (!url) throw GatewayError.invalidRequest(`${path}: fal video tasks take text and image_url items only`, path);
    const role = stringOr(item.role) ?? 'first_frame';
    if (role === 'first_frame' && input.image_url === undefined) input.image_url = url;
    else if (role === 'last_frame' && family.lastFrame) input[family.lastFrame] = url;
    else throw GatewayError.invalidRequest(`${path}.role: fal model '${endpointId}' takes no '${role}' image here`, `${path}.role`);
  });
  if (texts.length > 0) input.prompt = texts.join('\n');
  return input;
}

/**
 * The fal input of an Ark-shaped create body: text as `prompt`, the first-frame image as `image_url`
 * (a last frame as the family's field), `ratio` as `aspect_ratio`, `duration` in the family's
 * spelling, `resolution`, `seed`, `generate_audio`, `camera_fixed` where the family has them, and the
 * caller's allow-listed fal fields. Anything else is a 400 naming it.
 */
export function translateFalVideoRequest(body: Record<string, unknown>, endpointId: string): Record<string, unknown> {
  const family = falVideoFamilyOf(endpointId);
  const input = contentOf(body, family, endpointId);
  for (const [key, value] of Object.entries(body)) {
    if (key === 'content' || GATEWAY_FIELDS.has(key) || value === undefined) continue;
    const refuse = (why = `fal model '${endpointId}' has no input for it`): GatewayError => GatewayError.invalidRequest(`${key}: ${why}`, key);
    switch (key) {
      case 'ratio':
        // `adaptive` is fal's default: the first frame's own ratio
        if (value !== 'adaptive') input.aspect_ratio = value;
        break;
      case 'duration':
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw refuse('fal takes a whole number of seconds (no -1)');
        input.duration = family.duration === 'seconds' ? `${value}s` : String(value);
        break;
      case 'resolution':
        if (!family.resolution) throw refuse();
        input.resolution = value;
        break;
      case 'seed':
        if (!family.seed) throw refuse();
        input.seed = value;
        break;
      case 'generate_audio':
        if (family.audio) input.generate_audio = value;
        else if (value !== false) throw refuse();
        break;
      case 'camera_fixed':
        if (family.cameraFixed) input.camera_fixed = value;
        else if (value !== false) throw refuse();
        break;
      case 'watermark':
        // fal adds no watermark: only `true` asks for something it cannot do
        if (value !== false) throw refuse();
        break;
      default:
        if (!FAL_VIDEO_FIELDS.has(key)) throw refuse(`not a field passed to fal: take one of ${[...FAL_VIDEO_FIELDS].join(', ')}`);
        input[key] = value;
    }
  }
  if (typeof input.prompt !== 'string' && input.image_url === undefined) throw GatewayError.invalidRequest('content must hold a text item (the prompt) or a first-frame image', 'content');
  return input;
}

async function createFalVideo(call: CallContext, body: Record<string, unknown>, upstream: Upstream, upstreamModel: string): Promise<string> {
  const app = appIdOf(upstreamModel);
  const input = translateFalVideoRequest(body, upstreamModel);
  const request = await submitFal(call, upstream, upstreamModel, encodeJsonWithUploads(input));
  return encodeFalTaskId({
    app,
    request,
    ...(typeof body.duration === 'number' ? { seconds: body.duration } : {}),
    ...(typeof body.resolution === 'string' ? { resolution: body.resolution } : {}),
  });
}

/** The state `read` answers, read by toCallerTask: fal's queue state, and the result once it ended. */
export interface FalVideoState {
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  request_id: string;
  video_url?: string;
  error?: { code: string; message: string };
  seconds?: number;
  resolution?: string;
}

async function getFalVideo(call: CallContext, upstream: Upstream, taskId: string): Promise<FalVideoState> {
  const ref = decodeFalTaskId(taskId);
  const known: FalVideoState = {
    status: 'running',
    request_id: ref.request,
    ...(ref.seconds !== undefined ? { seconds: ref.seconds } : {}),
    ...(ref.resolution ? { resolution: ref.resolution } : {}),
  };
  const state = await falStatus(call, upstream, ref.app, ref.request);
  if (state.status === 'UNKNOWN') throw GatewayError.notFound('The task no longer exists upstream (unknown to fal, or past its retention).');
  if (state.status === 'IN_QUEUE') return { ...known, status: 'queued' };
  if (state.status === 'IN_PROGRESS') return known;
  if (state.error) return { ...known, status: 'failed', error: { code: state.error.code, message: state.error.message } };
  let result: unknown;
  try {
    result = await falResult(call, upstream, ref.app, ref.request);
  } catch (error) {
    // a failed request answers its result with the error's status; a 5xx is read again later
    if (GatewayError.is(error) && error.status < 500) return { ...known, status: 'failed', error: { code: error.code, message: error.message } };
    throw error;
  }
  const url = isObject(result) && isObject(result.video) ? stringOr(result.video.url) : undefined;
  if (!url) return { ...known, status: 'failed', error: { code: ERROR_CODES.upstreamNoImage, message: `The fal upstream returned no video (request id ${ref.request})` } };
  return { ...known, status: 'succeeded', video_url: url };
}

/** fal's state in Ark's task shape (docs/video-tasks-and-callbacks.md), with the gateway's id and the caller's model. */
export function toCallerTask(body: unknown, gatewayId: string, model: string): Record<string, unknown> {
  if (!isObject(body) || typeof body.status !== 'string') throw GatewayError.badUpstreamResponse('fal', 'the task has no status');
  const task: Record<string, unknown> = { id: gatewayId, model, status: body.status };
  if (body.status === 'succeeded') task.content = { video_url: body.video_url };
  if (isObject(body.error)) task.error = body.error;
  if (typeof body.seconds === 'number') task.duration = body.seconds;
  if (typeof body.resolution === 'string') task.resolution = body.resolution;
  return task;
}

/** fal's video tasks, on its queue (the `tasks` capability's video kind). */
export const falVideoTasks: UpstreamVideoTasks = { submit: createFalVideo, read: getFalVideo, view: toCallerTask };
