// Veo video tasks on the Gemini API and on Vertex AI (docs/providers/gemini.md "Video (Veo)"): the
// caller's Ark-shaped create body as a `predictLongRunning` call, the long-running operation read back
// as Ark's task object. The wire format follows @google/genai (src/models.ts generateVideos,
// src/operations.ts, src/converters/_models_converters.ts generateVideosConfigToMldev/ToVertex,
// generateVideosResponseFromMldev/FromVertex) and the AI SDK's packages/google/src/google-video-model.ts
// and packages/google-vertex/src/google-vertex-video-model.ts. A Veo result is never handed to the
// caller as it came: the Gemini API's URI needs the operator's key, Vertex AI's answer is the bytes, so
// both are re-hosted into the operator’s storage (video-task-results.ts). Pure translation first, transport last.
import { operationName as checkedOperationName } from '../vendor-ids.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { isObject, parseJsonBody, stringOr } from '../../json/json-values.js';
import type { Upstream } from '../../types.js';
import { type CallContext, requestUpstream } from '../call-context.js';
import { normalizeGeminiError } from './google-errors.js';
import type { UpstreamVideoTasks } from '../provider.js';

/** Aspect ratios Veo takes (`parameters.aspectRatio`). */
const VEO_RATIOS = ['16:9', '9:16'] as const;
/** Resolutions Veo takes (`parameters.resolution`; `4k` as the AI SDK maps 3840x2160). */
const VEO_RESOLUTIONS = ['720p', '1080p', '4k'] as const;
/** Veo's own lengths run from 4 to 8 seconds (which of them a model takes is its catalogue row's). */
const MIN_SECONDS = 4;
const MAX_SECONDS = 8;
/** What a task reports when the caller asked nothing: Veo's defaults (8 seconds, 720p, 16:9). */
const DEFAULT_SECONDS = 8;
const DEFAULT_RESOLUTION = '720p';
const DEFAULT_RATIO = '16:9';

/** The most a read of an operation that carries its video as base64 may be: a video of about 48 MB. */
const VIDEO_OPERATION_BYTES = 64 * 1024 * 1024;

/** Ark's content roles and the Veo instance field each image becomes. */
const IMAGE_ROLES: Readonly<Record<string, 'image' | 'lastFrame' | 'referenceImages'>> = { first_frame: 'image', last_frame: 'lastFrame', reference_image: 'referenceImages' };

/** Top-level fields of the caller's body the translation reads, or the gateway itself handles. */
const HANDLED_FIELDS: ReadonlySet<string> = new Set(['model', 'content', 'callback_url', 'duration', 'resolution', 'ratio', 'seed', 'negative_prompt', 'generate_audio']);

/** Veo's own `parameters` a caller may send under their Veo names; the Gemini API refuses some of them. */
const VEO_FIELDS: Readonly<Record<string, 'both' | 'vertex'>> = {
  negativePrompt: 'both',
  personGeneration: 'both',
  enhancePrompt: 'both',
  generateAudio: 'vertex',
  compressionQuality: 'vertex',
  resizeMode: 'vertex',
};

export type GoogleVideoApi = 'gemini' | 'vertex';

type VeoImage = { bytesBase64Encoded: string; mimeType: string };

export interface VeoInstance {
  prompt?: string;
  image?: VeoImage;
  lastFrame?: VeoImage;
  referenceImages?: Array<{ image: VeoImage; referenceType: 'asset' }>;
}

export interface VeoRequest {
  instances: [VeoInstance];
  parameters: Record<string, unknown>;
}

/** What the task reports of the asked video, kept beside the operation name (the operation does not say). */
export interface VeoAsked {
  duration: number;
  resolution: string;
  ratio: string;
}

/** A data: URL's bytes as Veo's image; anything else is a 400 naming the field (Veo takes bytes, not URLs). */
function veoImage(url: string, path: string): VeoImage {
  const match = /^data:(image\/[a-z0-9.+-]+)(?:;[^,;]*)*;base64,/i.exec(url);
  if (!match) {
    throw GatewayError.invalidRequest(`${path}: Veo takes images as bytes, not URLs or assets: send a 'data:image/...;base64,' URL (the gateway does not fetch images for Veo)`, path);
  }
  return { bytesBase64Encoded: url.slice(match[0].length), mimeType: match[1]!.toLowerCase() };
}

function oneOf(value: unknown, allowed: readonly string[], field: string): string {
  if (typeof value !== 'string' || !allowed.includes(value)) {
    throw GatewayError.invalidRequest(`${field} must be one of ${allowed.join(', ')} for Veo, got ${JSON.stringify(value)}`, field);
  }
  return value;
}

/**
 * The predictLongRunning body of a create, and what the task will report: text items as the prompt,
 * image items by role (`first_frame`, or no role for the only image, as `image`; `last_frame`;
 * `reference_image`), `ratio`, `duration`, `resolution`, `seed` (Vertex AI only), `negative_prompt`,
 * `generate_audio` (Vertex AI only) and Veo's own allow-listed fields. One video per task
 * (`sampleCount: 1`). Anything Veo cannot honour is a 400 naming it, before any call.
 */
export function translateVideoRequest(body: Record<string, unknown>, api: GoogleVideoApi): { request: VeoRequest; asked: VeoAsked } {
  const instance: VeoInstance = {};
  const prompts: string[] = [];
  const content = Array.isArray(body.content) ? body.content : [];
  const images = content.filter((item) => isObject(item) && item.type === 'image_url').length;
  for (const [index, item] of content.entries()) {
    const path = `content[${index}]`;
    if (!isObject(item)) throw GatewayError.invalidRequest(`${path} must be an object`, path);
    if (item.type === 'text') {
      if (typeof item.text === 'string' && item.text.trim() !== '') prompts.push(item.text);
      continue;
    }
    if (item.type !== 'image_url') throw GatewayError.invalidRequest(`${path}.type '${String(item.type)}' is not something Veo takes: send text and image_url items`, `${path}.type`);
    const role = item.role === undefined && images === 1 ? 'first_frame' : item.role;
    const target = typeof role === 'string' ? IMAGE_ROLES[role] : undefined;
    if (!target) throw GatewayError.invalidRequest(`${path}.role must be one of ${Object.keys(IMAGE_ROLES).join(', ')} for Veo`, `${path}.role`);
    const url = isObject(item.image_url) ? stringOr(item.image_url.url) : undefined;
    const image = veoImage(url ?? '', `${path}.image_url.url`);
    if (target === 'referenceImages') (instance.referenceImages ??= []).push({ image, referenceType: 'asset' });
    else if (instance[target]) throw GatewayError.invalidRequest(`${path}: only one ${String(role)} image is taken`, `${path}.role`);
    else instance[target] = image;
  }
  if (prompts.length > 0) instance.prompt = prompts.join('\n');
  if (!instance.prompt && !instance.image) throw GatewayError.invalidRequest('content must carry a text prompt or a first_frame image', 'content');

  const parameters: Record<string, unknown> = { sampleCount: 1 };
  const duration = body.duration ?? DEFAULT_SECONDS;
  if (typeof duration !== 'number' || !Number.isInteger(duration) || duration < MIN_SECONDS || duration > MAX_SECONDS) {
    throw GatewayError.invalidRequest(`duration must be a whole number of seconds from ${MIN_SECONDS} to ${MAX_SECONDS} for Veo, got ${JSON.stringify(body.duration)}`, 'duration');
  }
  parameters.durationSeconds = duration;
  const ratio = body.ratio === undefined ? DEFAULT_RATIO : oneOf(body.ratio, VEO_RATIOS, 'ratio');
  if (body.ratio !== undefined) parameters.aspectRatio = ratio;
  const resolution = body.resolution === undefined ? DEFAULT_RESOLUTION : oneOf(body.resolution, VEO_RESOLUTIONS, 'resolution');
  if (body.resolution !== undefined) parameters.resolution = resolution;
  if (body.seed !== undefined) {
    if (api !== 'vertex') throw GatewayError.invalidRequest('seed is not taken by Veo on the Gemini API (only on Vertex AI): leave it out', 'seed');
    if (typeof body.seed !== 'number' || !Number.isInteger(body.seed) || body.seed < 0 || body.seed > 4294967295)
      throw GatewayError.invalidRequest('seed must be a whole number from 0 to 4294967295', 'seed');
    parameters.seed = body.seed;
  }
  if (body.negative_prompt !== undefined) {
    if (typeof body.negative_prompt !== 'string') throw GatewayError.invalidRequest('negative_prompt must be a string', 'negative_prompt');
    parameters.negativePrompt = body.negative_prompt;
  }
  if (body.generate_audio !== undefined) {
    if (api !== 'vertex') throw GatewayError.invalidRequest('generate_audio is not taken by Veo on the Gemini API (only on Vertex AI): leave it out', 'generate_audio');
    if (typeof body.generate_audio !== 'boolean') throw GatewayError.invalidRequest('generate_audio must be a boolean', 'generate_audio');
    parameters.generateAudio = body.generate_audio;
  }
  for (const [key, value] of Object.entries(body)) {
    if (HANDLED_FIELDS.has(key)) continue;
    const where = VEO_FIELDS[key];
    if (!where) throw GatewayError.invalidRequest(`${key} is not a field Veo takes: leave it out (Veo's own fields: ${Object.keys(VEO_FIELDS).join(', ')})`, key);
    if (where === 'vertex' && api !== 'vertex') throw GatewayError.invalidRequest(`${key} is taken by Veo on Vertex AI only: leave it out`, key);
    if (value === undefined) continue;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') throw GatewayError.invalidRequest(`${key} must be a string, number or boolean`, key);
    parameters[key] = value;
  }
  return { request: { instances: [instance], parameters }, asked: { duration, resolution, ratio } };
}

/** The stored upstream task id: the operation name, then what was asked (`#duration=8&resolution=720p&ratio=16:9`). */
export function videoTaskId(operationName: string, asked: VeoAsked): string {
  const query = new URLSearchParams({ duration: String(asked.duration), resolution: asked.resolution, ratio: asked.ratio });
  return `${operationName}#${query.toString()}`;
}

/** The operation name and what was asked, from a stored task id (an id without the suffix reports the defaults). */
export function parseVideoTaskId(taskId: string): { operationName: string; asked: VeoAsked } {
  const hash = taskId.indexOf('#');
  const operationName = hash === -1 ? taskId : taskId.slice(0, hash);
  const query = new URLSearchParams(hash === -1 ? '' : taskId.slice(hash + 1));
  const duration = Number(query.get('duration'));
  return {
    operationName,
    asked: {
      duration: Number.isInteger(duration) && duration > 0 ? duration : DEFAULT_SECONDS,
      resolution: query.get('resolution') ?? DEFAULT_RESOLUTION,
      ratio: query.get('ratio') ?? DEFAULT_RATIO,
    },
  };
}

/** The operation `{ name }` a predictLongRunning call answers. */
function readOperationName(body: unknown, api: GoogleVideoApi): string {
  const name = isObject(body) ? stringOr(body.name) : undefined;
  if (!name) throw GatewayError.badUpstreamResponse(api, 'the operation has no name');
  return checkedOperationName(api, name);
}

/** What `get` answers: the operation as Google sent it, with what was asked. */
export interface VeoTaskState {
  operation: Record<string, unknown>;
  asked: VeoAsked;
  api: GoogleVideoApi;
}

function isVeoTaskState(value: unknown): value is VeoTaskState {
  return isObject(value) && isObject(value.operation) && isObject(value.asked) && (value.api === 'gemini' || value.api === 'vertex');
}

/** The samples of a finished operation: the Gemini API's `generateVideoResponse.generatedSamples[].video`, Vertex AI's `videos[]`. */
function samplesOf(response: Record<string, unknown>, api: GoogleVideoApi): { videos: Array<Record<string, unknown>>; filtered: number; reasons: string[] } {
  const holder = api === 'gemini' ? (isObject(response.generateVideoResponse) ? response.generateVideoResponse : {}) : response;
  const list = api === 'gemini' ? holder.generatedSamples : holder.videos;
  const videos = (Array.isArray(list) ? list : []).flatMap((sample: unknown) => {
    const video = api === 'gemini' ? (isObject(sample) ? sample.video : undefined) : sample;
    return isObject(video) ? [video] : [];
  });
  const filtered = typeof holder.raiMediaFilteredCount === 'number' ? holder.raiMediaFilteredCount : 0;
  const reasons = Array.isArray(holder.raiMediaFilteredReasons) ? holder.raiMediaFilteredReasons.filter((reason): reason is string => typeof reason === 'string') : [];
  return { videos, filtered, reasons };
}

/** A sample's video as a URL the gateway downloads: the Gemini API's `uri` (needs the key), or bytes as a data: URL. */
function videoUrlOf(video: Record<string, unknown>): string | undefined {
  const uri = stringOr(video.uri);
  if (uri && /^https?:\/\//i.test(uri)) return uri;
  const bytes = stringOr(video.bytesBase64Encoded) ?? stringOr(video.encodedVideo);
  if (!bytes) return undefined;
  const mime = stringOr(video.mimeType) ?? stringOr(video.encoding) ?? 'video/mp4';
  return `data:${/^video\/[a-z0-9.+-]+$/i.test(mime) ? mime : 'video/mp4'};base64,${bytes}`;
}

/**
 * The operation as Ark's task object (docs/video-tasks-and-callbacks.md): `running` until `done`;
 * `failed` with `error { code, message }` for an operation error or a video Veo's filters withheld
 * (`content_policy_violation`); `succeeded` with `content.video_url` (the result the gateway stores,
 * never shown as it is), `duration`, `resolution` and `ratio` as asked.
 */
export function toCallerVideoTask(state: unknown, gatewayId: string, model: string): Record<string, unknown> {
  if (!isVeoTaskState(state)) throw GatewayError.badUpstreamResponse('gemini', 'the operation is not an object');
  const { operation, asked, api } = state;
  const task: Record<string, unknown> = { id: gatewayId, model, status: 'running', ...asked };
  if (operation.done !== true) return task;
  if (isObject(operation.error)) {
    const code = stringOr(operation.error.status) ?? (typeof operation.error.code === 'number' ? String(operation.error.code) : 'UNKNOWN');
    return { ...task, status: 'failed', error: { code, message: stringOr(operation.error.message) ?? 'Veo reported an error' } };
  }
  const { videos, filtered, reasons } = samplesOf(isObject(operation.response) ? operation.response : {}, api);
  const url = videos.map(videoUrlOf).find((found) => found !== undefined);
  if (url) return { ...task, status: 'succeeded', content: { video_url: url } };
  if (filtered > 0 || reasons.length > 0) {
    return { ...task, status: 'failed', error: { code: 'content_policy_violation', message: reasons.join(' ') || "The video was withheld by Veo's safety filters." } };
  }
  return { ...task, status: 'failed', error: { code: 'upstream_no_video', message: 'Veo finished without a video' } };
}

/** How one Google API is reached for Veo: its URLs and credentials (gemini.ts and vertex.ts give theirs). */
export interface GoogleVideoTransport {
  api: GoogleVideoApi;
  /** `...models/{model}:predictLongRunning`. */
  createUrl: (upstream: Upstream, model: string) => string;
  /** The operation read: the Gemini API's `GET {base}/{name}`, Vertex AI's `POST {model}:fetchPredictOperation`. */
  readCall: (upstream: Upstream, operationName: string) => { method: 'GET' | 'POST'; url: string; body?: string };
  headers: (upstream: Upstream) => Record<string, string> | Promise<Record<string, string>>;
  /** The finished operation carries the video's bytes (Vertex AI without a storageUri): its read may be larger than other answers. */
  videoInOperation?: boolean;
  /** The credentials a result download needs (only for the vendor's own origin), if any. */
  resultHeaders?: (upstream: Upstream, url: string) => Promise<Record<string, string> | undefined>;
}

async function createVideoTask(transport: GoogleVideoTransport, call: CallContext, body: Record<string, unknown>, upstream: Upstream, upstreamModel: string): Promise<string> {
  // checked before the credentials are asked for, and before any call: a bad body starts no paid work
  const { request, asked } = translateVideoRequest(body, transport.api);
  const headers = await transport.headers(upstream);
  const response = await requestUpstream(call, upstream, { provider: transport.api, method: 'POST', url: transport.createUrl(upstream, upstreamModel), headers, body: JSON.stringify(request) });
  const parsed = parseJsonBody(response.body);
  if (response.status < 200 || response.status >= 300) throw normalizeGeminiError(response.status, parsed, response.headers, transport.api);
  return videoTaskId(readOperationName(parsed, transport.api), asked);
}

/** Reads the operation. A 404 means Google no longer knows it (operations are kept for a limited time). */
async function getVideoTask(transport: GoogleVideoTransport, call: CallContext, upstream: Upstream, upstreamTaskId: string): Promise<VeoTaskState> {
  const { operationName, asked } = parseVideoTaskId(upstreamTaskId);
  const read = transport.readCall(upstream, checkedOperationName(transport.api, operationName));
  const response = await requestUpstream(call, upstream, {
    provider: transport.api,
    method: read.method,
    url: read.url,
    headers: await transport.headers(upstream),
    ...(read.body !== undefined ? { body: read.body } : {}),
    ...(transport.videoInOperation ? { maxBytes: Math.max(call.limits.upstreamResponseBytes, VIDEO_OPERATION_BYTES) } : {}),
  });
  const parsed = parseJsonBody(response.body);
  if (response.status === 404) throw GatewayError.notFound('The task no longer exists upstream (deleted or expired).');
  if (response.status < 200 || response.status >= 300) throw normalizeGeminiError(response.status, parsed, response.headers, transport.api);
  if (!isObject(parsed)) throw GatewayError.badUpstreamResponse(transport.api, 'the operation is not JSON');
  return { operation: parsed, asked, api: transport.api };
}

/** The video tasks of a Google provider's `tasks` capability, over its transport. */
export function googleVideoTasks(transport: GoogleVideoTransport): UpstreamVideoTasks {
  return {
    submit: (call, body, upstream, upstreamModel) => createVideoTask(transport, call, body, upstream, upstreamModel),
    read: (call, upstream, upstreamTaskId) => getVideoTask(transport, call, upstream, upstreamTaskId),
    view: toCallerVideoTask,
    resultsNeedStorage: true,
    ...(transport.resultHeaders ? { resultHeaders: transport.resultHeaders } : {}),
  };
}

/** Whether `url` is on the same origin (scheme, host, port) as the upstream's base: only there do credentials go. */
export function sameOrigin(url: string, baseURL: string): boolean {
  try {
    return new URL(url).origin === new URL(baseURL).origin;
  } catch {
    return false;
  }
}
