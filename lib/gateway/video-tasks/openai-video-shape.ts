// The OpenAI video shape (docs/openai-videos.md) over the video tasks of the one task service: a `POST
// /v1/videos` body read into the task service's own create body (Ark's task shape, upstreams §2.2), and
// a task record with its state written as OpenAI's `Video` object. Pure functions: the routes and the
// service do the I/O.
// `seconds` and `size` are checked against the catalogue row the task follows (docs/models.md "Limits",
// "Which row a request follows"), mapped by the task service once it knows that row, before anything is
// charged or called.
import { GatewayError } from '../../errors/gateway-error.js';
import { isObject } from '../../json/json-values.js';
import { checkDuration, checkVideoShape } from '../../models/model-rules.js';
import type { ModelEntry } from '../../options/model-catalogue.js';
import type { VideoContentItem, VideoTaskBody } from '../../schemas/video-task-schema.js';
import type { VideoTaskRecord, VideoAsked } from '../../stores/tasks/task-store.js';
import { isTerminalStatus } from '../tasks/task-state-order.js';

/** The create fields of OpenAI's `VideoCreateParams`, and the gateway's own `callback_url` (docs/video-tasks-and-callbacks.md). */
const KNOWN_FIELDS = new Set(['model', 'prompt', 'seconds', 'size', 'input_reference', 'callback_url']);
// OpenAI's own limit on a video prompt is far below this; the bound keeps records small
const MAX_PROMPT_CHARS = 32_000;

/**
 * A create in OpenAI's shape, read: the task body without the fields that depend on the model's row,
 * what the Video object shows of the ask, and `bodyFor`, the task body for the row the task follows
 * (the task service calls it once it knows that row: docs/models.md "Which row a request follows").
 */
export interface OpenAiVideoCreate {
  body: VideoTaskBody;
  asked: VideoAsked;
  /**
   * The task body with `seconds` and `size` checked against `entry` and sent as the fields it takes;
   * with no row (or one the upstream judges), both are sent. Throws the 400 under the OpenAI field.
   */
  bodyFor(entry: ModelEntry | undefined): VideoTaskBody;
}

/**
 * Reads a `POST /v1/videos` body (JSON, or a form's fields with `input_reference` already a data: URL)
 * into the task body. What needs no row is checked here; `seconds` and `size` must also be what the
 * model makes, which `bodyFor` checks once the row is known.
 */
export function readVideoCreate(fields: Record<string, unknown>): OpenAiVideoCreate {
  for (const name of Object.keys(fields)) {
    if (!KNOWN_FIELDS.has(name))
      throw GatewayError.invalidRequest(`Unknown parameter: '${name.slice(0, 100)}'. This gateway's videos take model, prompt, seconds, size, input_reference and callback_url`, name.slice(0, 100));
  }
  const model = fields.model;
  if (typeof model !== 'string' || model === '') throw GatewayError.invalidRequest('model is required', 'model');
  const prompt = fields.prompt;
  if (typeof prompt !== 'string' || prompt.trim() === '') throw GatewayError.invalidRequest('prompt is required: a non-empty string', 'prompt');
  if (prompt.length > MAX_PROMPT_CHARS) throw GatewayError.invalidRequest(`prompt is longer than ${MAX_PROMPT_CHARS} characters`, 'prompt');
  const content: VideoContentItem[] = [{ type: 'text', text: prompt }];
  const reference = referenceUrlOf(fields.input_reference);
  // OpenAI's input reference is the video's first frame
  if (reference !== undefined) content.push({ type: 'image_url', image_url: { url: reference }, role: 'first_frame' });
  const body: VideoTaskBody = { model, content };
  const asked: VideoAsked = { prompt };
  if (fields.callback_url !== undefined) {
    if (typeof fields.callback_url !== 'string') throw GatewayError.invalidRequest('callback_url must be a string', 'callback_url');
    body.callback_url = fields.callback_url;
  }
  const seconds = fields.seconds === undefined ? undefined : secondsOf(fields.seconds);
  if (seconds !== undefined) asked.seconds = String(seconds);
  const size = fields.size === undefined ? undefined : sidesOf(fields.size);
  if (size) asked.size = `${size.width}x${size.height}`;
  const bodyFor = (entry: ModelEntry | undefined): VideoTaskBody => {
    const fitted: VideoTaskBody = { ...body };
    if (seconds !== undefined) {
      if (entry) {
        if (!takes(entry, 'duration')) throw GatewayError.invalidRequest(`Model '${model}' makes videos of one length and takes no 'seconds'. Leave it out`, 'seconds');
        rename(() => checkDuration(entry, model, seconds), 'seconds');
      }
      fitted.duration = seconds;
    }
    if (size) Object.assign(fitted, fieldsOfSize(size, entry, model));
    return fitted;
  };
  return { body, asked, bodyFor };
}

/** `seconds` as OpenAI sends it (a string of digits; JSON clients may send a number), as whole seconds. */
function secondsOf(value: unknown): number {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^\s*[1-9]\d{0,3}\s*$/.test(text)) {
    throw GatewayError.invalidRequest(`seconds must be a whole number of seconds as a string, such as '8', got ${JSON.stringify(value)?.slice(0, 40)}`, 'seconds');
  }
  return Number(text);
}

/** The sides of `size` (`WxH`), or the 400 naming it. */
function sidesOf(value: unknown): { width: number; height: number } {
  const match = typeof value === 'string' ? /^\s*([1-9]\d{1,4})\s*x\s*([1-9]\d{1,4})\s*$/i.exec(value) : null;
  if (!match) throw GatewayError.invalidRequest(`size must be width x height in pixels, such as '1280x720', got ${JSON.stringify(value)?.slice(0, 40)}`, 'size');
  return { width: Number(match[1]), height: Number(match[2]) };
}

/**
 * `size` (`WxH`) as the task fields: `resolution` from the short side (`720p`), `ratio` from the sides
 * reduced (`16:9`), each checked against the row and sent only where the model takes that field.
 */
export function sizeFields(value: unknown, entry: ModelEntry | undefined, model: string): { resolution?: string; ratio?: string } {
  return fieldsOfSize(sidesOf(value), entry, model);
}

function fieldsOfSize({ width, height }: { width: number; height: number }, entry: ModelEntry | undefined, model: string): { resolution?: string; ratio?: string } {
  const resolution = `${Math.min(width, height)}p`;
  const divisor = gcd(width, height);
  const ratio = `${width / divisor}:${height / divisor}`;
  if (!entry) return { resolution, ratio };
  const sent: { resolution?: string; ratio?: string } = {};
  for (const [field, made] of [
    ['resolution', resolution],
    ['ratio', ratio],
  ] as const) {
    rename(() => checkVideoShape(entry, model, field, made, 'size'), 'size', `size '${width}x${height}' (${field} ${made})`);
    if (takes(entry, field)) sent[field] = made;
  }
  if (sent.resolution === undefined && sent.ratio === undefined) throw GatewayError.invalidRequest(`Model '${model}' takes no size. Leave it out`, 'size');
  return sent;
}

/** `input_reference`: a data: URL the form reader made of an uploaded file, or `{ image_url }`. */
function referenceUrlOf(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && /^data:image\//i.test(value)) return value;
  if (isObject(value) && typeof value.image_url === 'string' && value.image_url !== '') return value.image_url;
  if (isObject(value) && value.file_id !== undefined)
    throw GatewayError.invalidRequest('input_reference.file_id is not supported: this gateway keeps no files. Upload the image, or give input_reference.image_url', 'input_reference');
  throw GatewayError.invalidRequest('input_reference must be an image file (multipart) or { image_url }', 'input_reference');
}

/** OpenAI's video statuses for the task's (Ark's) status; the set upstream is open, so any other is in progress. */
export function videoStatusOf(status: string): 'queued' | 'in_progress' | 'completed' | 'failed' {
  if (status === 'queued') return 'queued';
  if (status === 'succeeded') return 'completed';
  if (isTerminalStatus(status)) return 'failed';
  return 'in_progress';
}

/** The `Video` object (the `openai` SDK's type) of a video task record and its state as the service presents it. */
export function videoObjectOf(
  record: Pick<VideoTaskRecord, 'id' | 'model' | 'createdAt' | 'asked'> & Partial<Pick<VideoTaskRecord, 'stored'>>,
  state: Record<string, unknown>,
): Record<string, unknown> {
  const status = videoStatusOf(String(state.status));
  const asked = record.asked ?? {};
  const updated = typeof state.updated_at === 'number' ? state.updated_at : undefined;
  const error = isObject(state.error) ? state.error : undefined;
  // with the `provenance` option and storage: the stored video's Content Credentials (docs/video-tasks-and-callbacks.md)
  const provenance = record.stored?.provenance ?? (isObject(state.content) && isObject(state.content.provenance) ? state.content.provenance : undefined);
  return {
    id: record.id,
    object: 'video',
    model: record.model,
    status,
    // the upstream's own progress where it gives one (0-100); otherwise 0 until the video is done
    progress: status === 'completed' ? 100 : typeof state.progress === 'number' && state.progress >= 0 && state.progress <= 100 ? Math.floor(state.progress) : 0,
    created_at: Math.floor(record.createdAt / 1000),
    completed_at: status === 'completed' || status === 'failed' ? (updated ?? null) : null,
    expires_at: null,
    prompt: asked.prompt ?? null,
    // what was asked, else what the upstream reports, else the length charged (docs/openai-videos.md
    // "Seconds and size"); '' only for a record made before the charged length was kept
    seconds: asked.seconds ?? (typeof state.duration === 'number' && state.duration > 0 ? String(state.duration) : (asked.chargedSeconds ?? '')),
    // the upstream picks the size when none was asked and may not report it: '' then (the same section)
    size: asked.size ?? sizeOf(state.resolution, state.ratio) ?? '',
    remixed_from_video_id: null,
    error:
      status === 'failed'
        ? {
            code: typeof error?.code === 'string' ? error.code : 'video_generation_failed',
            message: typeof error?.message === 'string' ? error.message : `The video task ended ${String(state.status)}`,
          }
        : null,
    ...(provenance ? { provenance } : {}),
  };
}

/** `WxH` of a task's `resolution` (`720p`) and `ratio` (`16:9`), when both are known. */
export function sizeOf(resolution: unknown, ratio: unknown): string | undefined {
  const short = typeof resolution === 'string' ? /^(\d{3,4})p$/i.exec(resolution) : null;
  const sides = typeof ratio === 'string' ? /^(\d{1,2}):(\d{1,2})$/.exec(ratio) : null;
  if (!short || !sides) return undefined;
  const [a, b] = [Number(sides[1]), Number(sides[2])];
  if (a === 0 || b === 0) return undefined;
  const side = Number(short[1]);
  const long = Math.round((side * Math.max(a, b)) / Math.min(a, b));
  return a >= b ? `${long}x${side}` : `${side}x${long}`;
}

function takes(entry: ModelEntry, field: string): boolean {
  return entry.supported_parameters.includes(field);
}

/** Runs a check of the task shape's field and answers its 400 under the OpenAI shape's field name. */
function rename(check: () => void, param: string, subject?: string): void {
  try {
    check();
  } catch (error) {
    if (!(error instanceof GatewayError) || error.status !== 400) throw error;
    const message = subject ? error.message.replace(/^size '[^']*'/, subject) : error.message.replace(/^duration\b/, 'seconds');
    throw GatewayError.invalidRequest(message, param);
  }
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}
