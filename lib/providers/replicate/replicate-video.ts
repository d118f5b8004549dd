// Video tasks on Replicate (docs/providers/replicate.md "Video tasks"): the caller's task body in Ark's
// shape (docs/video-tasks-and-callbacks.md) as one prediction of a video model, and the prediction
// read back as Ark's task object. The input fields are mapped by model family (pattern on the
// operator's `owner/name`), as the Vercel AI SDK's Replicate video model does (packages/replicate
// replicate-video-model.ts: prompt, image, aspect_ratio, duration, seed). Pure functions.
import { GatewayError } from '../../errors/gateway-error.js';
import { isObject, stringOr } from '../../json/json-values.js';
import { parseModelRef } from './replicate-inputs.js';
import { predictionFailure, readPrediction } from './replicate-predictions.js';

/** How one family of Replicate video models names its inputs. */
interface VideoFamily {
  label: string;
  /** The input field of the first frame (an `image_url` item without a role, or `first_frame`). */
  firstFrame: string;
  /** The input field of the last frame (`last_frame`), where the family has one. */
  lastFrame?: string;
  /** Whether `ratio` maps to `aspect_ratio`. */
  ratio: boolean;
  /** Caller fields passed under the same name (Ark's `duration`, `resolution`, `seed` and the family's own). */
  fields: readonly string[];
}

const VIDEO_FAMILIES: ReadonlyArray<readonly [RegExp, VideoFamily]> = [
  [/^kwaivgi\/kling-/, { label: 'Kling', firstFrame: 'start_image', lastFrame: 'end_image', ratio: true, fields: ['duration', 'negative_prompt', 'mode', 'cfg_scale'] }],
  [/^minimax\/(?:video-01|hailuo-)/, { label: 'MiniMax video', firstFrame: 'first_frame_image', lastFrame: 'last_frame_image', ratio: false, fields: ['duration', 'resolution', 'prompt_optimizer'] }],
];

const OTHER_VIDEO: VideoFamily = { label: 'this Replicate video model', firstFrame: 'image', lastFrame: 'last_frame', ratio: true, fields: ['duration', 'resolution', 'seed', 'negative_prompt'] };

/** Fields of the task body the gateway itself reads (model, the callback it delivers, the content mapped below). */
const GATEWAY_FIELDS: ReadonlySet<string> = new Set(['model', 'content', 'callback_url']);

function videoFamilyOf(model: string): VideoFamily {
  const ref = parseModelRef(model);
  const id = ref ? `${ref.owner}/${ref.name}` : model;
  return VIDEO_FAMILIES.find(([pattern]) => pattern.test(id))?.[1] ?? OTHER_VIDEO;
}

/**
 * The prediction `input` of a task body: the text items as the prompt, image items by role as the
 * family's frame fields, `ratio` as `aspect_ratio`, and the family's fields as they are. Anything
 * else is a 400 naming it, before any call.
 */
export function translateVideoInput(body: Record<string, unknown>, model: string): Record<string, unknown> {
  const family = videoFamilyOf(model);
  const input: Record<string, unknown> = {};
  const content = Array.isArray(body.content) ? body.content : [];
  const texts: string[] = [];
  content.forEach((item: unknown, index) => {
    const path = `content[${index}]`;
    if (!isObject(item)) throw GatewayError.invalidRequest(`${path} must be an object`, path);
    if (item.type === 'text' && typeof item.text === 'string') {
      texts.push(item.text);
      return;
    }
    const url = item.type === 'image_url' && isObject(item.image_url) ? stringOr(item.image_url.url) : undefined;
    if (!url) throw GatewayError.invalidRequest(`${path}: ${family.label} takes text and image_url items only`, path);
    const role = stringOr(item.role) ?? 'first_frame';
    const field = role === 'first_frame' ? family.firstFrame : role === 'last_frame' ? family.lastFrame : undefined;
    if (!field) throw GatewayError.invalidRequest(`${path}.role '${role}' is not something ${family.label} takes: use first_frame${family.lastFrame ? ' or last_frame' : ''}`, `${path}.role`);
    if (input[field] !== undefined) throw GatewayError.invalidRequest(`${path}: only one ${role} image`, path);
    input[field] = url;
  });
  if (texts.length > 0) input.prompt = texts.join('\n');
  for (const [name, value] of Object.entries(body)) {
    if (GATEWAY_FIELDS.has(name) || value === undefined) continue;
    if (name === 'ratio' && family.ratio) {
      // Ark's `adaptive` (the model follows the image) is the model's default here: not sent
      if (value !== 'adaptive') input.aspect_ratio = value;
      continue;
    }
    if (!family.fields.includes(name))
      throw GatewayError.invalidRequest(`${name} is not a field ${family.label} takes on Replicate: take ${[...(family.ratio ? ['ratio'] : []), ...family.fields].join(', ')}`, name);
    input[name] = value;
  }
  return input;
}

/** Replicate's status as Ark's task status. */
const ARK_STATUS: Readonly<Record<string, string>> = { starting: 'queued', processing: 'running', succeeded: 'succeeded', failed: 'failed', canceled: 'cancelled' };

/** An ISO time as Unix seconds (Ark's `created_at`), when it is one. */
function unixSeconds(value: unknown): number | undefined {
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
}

/**
 * A prediction as Ark's task object, with the gateway's id and the caller's model: `content.video_url`
 * once it succeeded, `error { code, message }` once it failed, `duration`, `ratio` and `resolution`
 * where the input said them.
 */
export function toCallerVideoTask(body: unknown, gatewayId: string, model: string): Record<string, unknown> {
  const prediction = readPrediction(body);
  const raw = body as Record<string, unknown>;
  const task: Record<string, unknown> = { id: gatewayId, model, status: ARK_STATUS[prediction.status] ?? prediction.status };
  const created = unixSeconds(raw.created_at);
  if (created !== undefined) task.created_at = created;
  const updated = unixSeconds(raw.completed_at) ?? unixSeconds(raw.started_at);
  if (updated !== undefined) task.updated_at = updated;
  const input = isObject(raw.input) ? raw.input : {};
  if (typeof input.duration === 'number') task.duration = input.duration;
  if (typeof input.aspect_ratio === 'string') task.ratio = input.aspect_ratio;
  if (typeof input.resolution === 'string') task.resolution = input.resolution;
  if (prediction.status === 'succeeded') {
    const output = Array.isArray(prediction.output) ? (prediction.output as unknown[])[0] : prediction.output;
    if (typeof output !== 'string' || !/^https?:/i.test(output)) {
      task.status = 'failed';
      task.error = { code: 'upstream_no_video', message: 'The replicate upstream succeeded without a video URL.' };
    } else task.content = { video_url: output };
  }
  if (prediction.status === 'failed' || prediction.status === 'canceled') {
    const error = predictionFailure(prediction);
    task.error = { code: error.code, message: error.message };
  }
  return task;
}
