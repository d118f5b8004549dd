// fal.ai adapter (docs/providers/fal.md): the gateway's image requests as fal queue requests
// (fal-queue.ts: submit, poll the status, read the result), image tasks followed on fal's queue by id,
// and video tasks (fal-video.ts). `model` is fal's endpoint id (`fal-ai/flux/dev`); the fields are
// mapped by the model's family, read from the endpoint id. Pure translation first, then the transport.
import { clock } from '../../clock.js';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { rejectionOf } from '../../errors/rejection-of.js';
import type { ImageData, ImageGenerationResponse } from '../../images/image-generation-response.js';
import type { ImageGenerationRequest } from '../../images/image-request.js';
import { encodeJsonWithUploads } from '../../images/uploaded-image.js';
import { isObject, stringOr } from '../../json/json-values.js';
import type { Upstream } from '../../types.js';
import type { CallContext } from '../call-context.js';
import { falWebhooks } from './fal-webhooks.js';
import { appIdOf, awaitFalResult, cancelFal, decodeFalTaskId, encodeFalTaskId, falResult, falStatus, submitFal } from './fal-queue.js';
import { falVideoTasks } from './fal-video.js';
import { workGone } from '../submitted-work.js';
import type { Provider, UpstreamImageState, UpstreamImageTasks } from '../provider.js';
import { FAL_MODELS, FAL_OWN_FIELDS } from './fal-models.js';

/** fal's named `image_size` values (FLUX-style endpoints), passed as they are when the caller names one. */
const FAL_IMAGE_SIZES = ['square_hd', 'square', 'portrait_4_3', 'portrait_16_9', 'landscape_4_3', 'landscape_16_9'] as const;
/** The `aspect_ratio` values of the aspect-ratio endpoints (nano-banana, FLUX1.1 [pro] ultra, Kontext, Imagen 4). */
const FAL_ASPECT_RATIOS = ['21:9', '16:9', '3:2', '4:3', '5:4', '1:1', '4:5', '3:4', '2:3', '9:16', '9:21'] as const;
// a size whose ratio is further than this (as a log ratio, about 6%) from every fal ratio cannot map
const RATIO_TOLERANCE = 0.06;

/**
 * fal's own fields a caller may send at the top level of the body (docs/providers/fal.md "fal's own
 * fields"), passed on as they are; anything else is a 400 naming it.
 */
const FAL_FIELDS: ReadonlySet<string> = new Set(FAL_OWN_FIELDS);
/** The gateway's own fields: a stream is answered by the gateway (image-pipeline.ts), never asked of fal. */
const GATEWAY_FIELDS: ReadonlySet<string> = new Set(['stream', 'partial_images']);

// endpoints that size by `aspect_ratio` (their fal input schemas have no image_size)
const ASPECT_FAMILY = /(?:^|\/)(?:nano-banana|gemini-[\w.-]*image|imagen\d)|flux-pro\/(?:v1\.1-ultra|kontext)/;
// endpoints that take input images, and of those the ones that take a list (`image_urls`)
const TAKES_IMAGES = /\/(?:edit|image-to-image|img2img|kontext|redux|multi|inpainting)(?:\/|$)/;
const TAKES_IMAGE_LIST = /(?:^|\/)(?:nano-banana|gemini-[\w.-]*image|seedream)|\/multi(?:\/|$)|qwen-image-edit-plus/;

/** How an endpoint is asked: its size field and its input-image field (none for text-to-image). */
export interface FalFamily {
  size: 'image_size' | 'aspect_ratio';
  images: 'image_url' | 'image_urls' | undefined;
}

/** The family of a fal endpoint id, read from the id (docs/providers/fal.md "What fal is sent (images)"). */
export function falFamilyOf(endpointId: string): FalFamily {
  const images = TAKES_IMAGES.test(endpointId) ? (TAKES_IMAGE_LIST.test(endpointId) ? 'image_urls' : 'image_url') : undefined;
  return { size: ASPECT_FAMILY.test(endpointId) ? 'aspect_ratio' : 'image_size', images };
}

function sizeText(size: unknown): string {
  return typeof size === 'string' ? size : JSON.stringify(size);
}

/** `size` for an `image_size` endpoint: `{ width, height }` of a `WxH` (or `W*H`), or one of fal's names. */
export function falImageSize(size: unknown): Record<string, unknown> {
  if (size === undefined || size === 'auto') return {};
  const text = typeof size === 'string' ? size.trim() : '';
  if ((FAL_IMAGE_SIZES as readonly string[]).includes(text)) return { image_size: text };
  const match = /^([1-9]\d{0,4})\s*[x*]\s*([1-9]\d{0,4})$/i.exec(text);
  if (!match) throw GatewayError.invalidRequest(`size '${sizeText(size)}' is not a size fal can make: use WIDTHxHEIGHT (e.g. 1024x768), auto, or one of ${FAL_IMAGE_SIZES.join(', ')}`, 'size');
  return { image_size: { width: Number(match[1]), height: Number(match[2]) } };
}

/** `size` for an `aspect_ratio` endpoint: the ratio of a `WxH` (within about 6%), or a ratio named as `W:H`. */
export function falAspectRatio(size: unknown): Record<string, unknown> {
  if (size === undefined || size === 'auto') return {};
  const text = typeof size === 'string' ? size.trim() : '';
  if ((FAL_ASPECT_RATIOS as readonly string[]).includes(text)) return { aspect_ratio: text };
  const match = /^([1-9]\d{0,5})\s*[x*]\s*([1-9]\d{0,5})$/i.exec(text);
  if (!match)
    throw GatewayError.invalidRequest(`size '${sizeText(size)}' is not a size this fal model can make: use WIDTHxHEIGHT (e.g. 1536x1024), auto, or a ratio ${FAL_ASPECT_RATIOS.join(', ')}`, 'size');
  const ratio = Number(match[1]) / Number(match[2]);
  let best: string = FAL_ASPECT_RATIOS[0];
  let distance = Infinity;
  for (const candidate of FAL_ASPECT_RATIOS) {
    const [w, h] = candidate.split(':').map(Number) as [number, number];
    const off = Math.abs(Math.log(ratio / (w / h)));
    if (off < distance) [best, distance] = [candidate, off];
  }
  if (distance > RATIO_TOLERANCE) throw GatewayError.invalidRequest(`size '${text}' has no fal aspect ratio near it: use a size of ratio ${FAL_ASPECT_RATIOS.join(', ')}`, 'size');
  return { aspect_ratio: best };
}

/**
 * The input fal's endpoint receives: `prompt`, `size` as `image_size` or `aspect_ratio` by family, `n`
 * as `num_images`, `seed`, the input images as `image_url` or `image_urls` (URLs or Data URLs, as the
 * caller gave them; uploads as Data URLs), then the caller's allow-listed fal fields. A parameter the
 * model cannot honour is a 400 naming it, never dropped.
 */
export function translateFalImageRequest(request: ImageGenerationRequest, endpointId: string): Record<string, unknown> {
  const family = falFamilyOf(endpointId);
  for (const name of Object.keys(request.parameters)) {
    if (name !== 'size' && name !== 'n' && name !== 'seed') throw GatewayError.invalidRequest(`parameters.${name} is not something fal can do: leave it out`, `parameters.${name}`);
  }
  const prompt = request.content.flatMap((item) => ('text' in item ? [item.text] : [])).join('\n');
  const images = request.content.flatMap((item) => ('image' in item ? [item.image] : []));
  const input: Record<string, unknown> = { prompt };
  Object.assign(input, family.size === 'aspect_ratio' ? falAspectRatio(request.parameters.size) : falImageSize(request.parameters.size));
  const { n, seed } = request.parameters;
  if (typeof n === 'number') input.num_images = n;
  if (seed !== undefined) {
    if (typeof seed !== 'number' || !Number.isSafeInteger(seed)) throw GatewayError.invalidRequest('parameters.seed must be a whole number', 'parameters.seed');
    input.seed = seed;
  }
  if (images.length > 0) {
    if (!family.images) throw GatewayError.invalidRequest(`fal model '${endpointId}' is text-to-image only: send no image (use its edit endpoint for edits)`, 'image');
    if (family.images === 'image_url' && images.length > 1) throw GatewayError.invalidRequest(`fal model '${endpointId}' takes one input image, got ${images.length}`, 'image');
    if (family.images === 'image_url') input.image_url = images[0];
    else input.image_urls = images;
  }
  for (const [key, value] of Object.entries(request.extra ?? {})) {
    if (GATEWAY_FIELDS.has(key)) continue;
    if (!FAL_FIELDS.has(key)) throw GatewayError.invalidRequest(`${key} is not a field passed to fal: take one of ${[...FAL_FIELDS].join(', ')}`, key);
    input[key] = value;
  }
  return input;
}

/**
 * A fal result as contract §2.4 entries: `images[]` (or one `image`), each with its URL. An image fal's
 * safety checker flagged (`has_nsfw_concepts[i]`, a black image) is never handed out; when every
 * image is flagged the answer is a 400 content_policy_violation. No image otherwise is a 502.
 */
export function translateFalImageResponse(body: unknown, requestId: string): ImageGenerationResponse {
  const listed = isObject(body) && Array.isArray(body.images) ? (body.images as unknown[]) : isObject(body) && isObject(body.image) ? [body.image] : [];
  const flags = isObject(body) && Array.isArray(body.has_nsfw_concepts) ? body.has_nsfw_concepts : [];
  const said = (isObject(body) && stringOr(body.description)) || '';
  const data: ImageData[] = [];
  const sizes: string[] = [];
  let flagged = 0;
  listed.forEach((image, index) => {
    const url = isObject(image) ? stringOr(image.url) : undefined;
    if (!url) return;
    if (flags[index] === true) {
      flagged += 1;
      return;
    }
    data.push({ url, b64_json: '', revised_prompt: said });
    if (isObject(image) && typeof image.width === 'number' && typeof image.height === 'number') sizes.push(`${image.width}x${image.height}`);
  });
  if (data.length === 0 && flagged > 0) {
    throw GatewayError.fromUpstream({
      provider: 'fal',
      status: 200,
      upstreamCode: 'has_nsfw_concepts',
      upstreamMessage: 'the safety checker flagged the generated image',
      requestId,
      kind: 'content_policy',
    });
  }
  if (data.length === 0) throw GatewayError.noImage('fal', '', requestId || undefined);
  const response: ImageGenerationResponse = { created: Math.floor(Date.now() / 1000), data, extra: { request_id: requestId } };
  if (sizes.length === data.length) response.sizes = sizes;
  return response;
}

function endpointOf(request: ImageGenerationRequest, upstream: Upstream): string {
  return upstream.model ?? request.model;
}

/** Submits one request (the input checked first: a bad request starts no paid work); answers fal's request id. */
function submitImages(call: CallContext, request: ImageGenerationRequest, upstream: Upstream): Promise<{ app: string; request: string }> {
  return rejectionOf(async () => {
    const endpoint = endpointOf(request, upstream);
    const app = appIdOf(endpoint);
    const input = translateFalImageRequest(request, endpoint);
    return { app, request: await submitFal(call, upstream, endpoint, encodeJsonWithUploads(input)) };
  });
}

/** The synchronous image routes: submit, poll within the upstream's deadline, read the result. */
async function generateFalImages(call: CallContext, request: ImageGenerationRequest, upstream: Upstream): Promise<ImageGenerationResponse> {
  const startedAt = clock().now();
  const submitted = await submitImages(call, request, upstream);
  const result = await awaitFalResult(call, upstream, submitted.app, submitted.request, startedAt);
  return translateFalImageResponse(result, submitted.request);
}

/**
 * Image tasks on fal's queue (docs/image-tasks.md): the stored id holds the app id and fal's request
 * id, so any instance reads it after a restart with nothing else.
 */
const falImageTasks: UpstreamImageTasks = {
  // fal keeps a queue request's result well past a day; a day is the gateway's bound on following one
  lifetimeMs: 24 * 3600_000,
  offers: () => true,
  submit: (call, request, upstream) => submitImages(call, request, upstream).then(encodeFalTaskId),
  cancel: (call, upstream, taskId) => {
    const ref = decodeFalTaskId(taskId);
    cancelFal(call, upstream, ref.app, ref.request);
  },
  read: async (call, upstream, taskId): Promise<UpstreamImageState> => {
    const ref = decodeFalTaskId(taskId);
    const state = await falStatus(call, upstream, ref.app, ref.request);
    if (state.status === 'UNKNOWN') return { status: 'failed', error: workGone('fal', ref.request), mayHaveRun: true };
    if (state.status !== 'COMPLETED') return { status: 'running' };
    if (state.error) return { status: 'failed', error: state.error };
    try {
      return { status: 'succeeded', response: translateFalImageResponse(await falResult(call, upstream, ref.app, ref.request), ref.request) };
    } catch (error) {
      // the request ended at fal without images (refused, failed): the task fails with that error;
      // a result that could not be read now (network, 5xx) is read again at the next poll
      if (GatewayError.is(error) && error.status < 500) return { status: 'failed', error };
      if (GatewayError.is(error) && error.code === ERROR_CODES.upstreamNoImage) return { status: 'failed', error };
      throw error;
    }
  },
};

/** fal.ai: images (generations and edits) and image tasks on its queue, and video tasks. */
export const falProvider: Provider = {
  name: 'fal',
  // a documented custom value (docs/observability.md): the GenAI conventions name no fal provider
  genAiName: 'fal',
  models: FAL_MODELS,
  images: { generate: generateFalImages },
  tasks: { image: falImageTasks, video: falVideoTasks },
  webhooks: falWebhooks,
};
