// The one image pipeline behind POST /v1/images/generations (and multipart edits): validate for the
// model's family before anything else, resolve the upstream, generate with a provider's native image
// capability or forward to its OpenAI-compatible API, download for b64_json. Bad input never reaches
// resolveUpstream. The inbound side writes the answer (express/routes/serve-image-request.ts).
import type { Request } from 'express';
import type { ImageGenerationResponse } from '../images/image-generation-response.js';
import type { ImageGenerationRequest } from '../images/image-request.js';
import { GENERIC_IMAGE_FAMILY } from '../images/model-families.js';
import type { CallContext } from '../providers/call-context.js';
import type { PassthroughCapability, PassthroughResponse } from '../providers/provider.js';
import { capabilityOf, requireCapability } from '../providers/registry.js';
import type { Caller, RouteName, Upstream } from '../types.js';
import type { ImageModelFamily } from '../options/request-limits.js';
import type { CallRecord } from './call-record.js';
import { withFallback } from './fallback.js';
import type { AttemptInfo } from '../telemetry/telemetry.js';
import { GatewayError } from '../errors/gateway-error.js';
import { parseJsonBody } from '../json/json-values.js';
import type { GatewayDeps } from './gateway-deps.js';
import { resolveUpstreams } from './resolve-upstreams.js';
import { downloadImages } from './result-images.js';
import { rehostImageAnswer, rehostPassthrough } from './rehost-images.js';
import { usageOf } from './tenancy/usage-fields.js';

export interface ImageRequestInput {
  route: RouteName;
  model: string;
  caller: Caller;
  req: Request;
  /** Reads the caller's request into the normalized multimodal request, for the model's family. */
  readRequest(family: ImageModelFamily): ImageGenerationRequest;
  /** Sends the caller's request, model renamed, to an OpenAI-compatible API. */
  forward(api: PassthroughCapability, call: CallContext, upstream: Upstream): Promise<PassthroughResponse>;
  /** The `n` the caller asked for on the OpenAI-compatible path (default 1): the most images answered. */
  requestedImages: unknown;
  /** The `response_format` the caller sent on the OpenAI-compatible path: with `storage`, `'url'` gets stored URLs even from a base64-only upstream. */
  requestedFormat?: unknown;
}

export type ImageAnswer =
  /** The OpenAI-compatible upstream's answer, relayed as it came (`data` cut to the `n` asked for). */
  | { kind: 'passthrough'; response: PassthroughResponse }
  /** The contract §2.4 answer; `images` are the downloaded bytes when b64_json was asked for. */
  | { kind: 'image'; response: ImageGenerationResponse; images?: Array<Buffer | undefined> };

export async function runImageRequest(deps: GatewayDeps, record: CallRecord, input: ImageRequestInput): Promise<ImageAnswer> {
  record.model = input.model;
  const family = deps.options.imageModels.find(input.model);
  // image-family models are validated before the resolver runs: bad input costs the host nothing
  const request = family ? input.readRequest(family) : undefined;
  const upstreams = await resolveUpstreams(deps.options, { model: input.model, route: input.route, caller: input.caller, req: input.req });
  const call: CallContext = { http: deps.http, signal: record.clientGone, limits: deps.options.limits };
  // quotas after validation and the resolver, before any upstream call; the images come back when it fails
  const asked = family && request ? allowedImages(request, family) : requestedCount(input.requestedImages);
  const charge = await deps.quotas.charge(input.caller, { requests: 1, images: asked });
  record.rateLimit = charge.rateLimit;
  let answer: ImageAnswer;
  try {
    const prepared: Prepared = { family, request, upstreams, call };
    // one frame (this one) waits for the upstream: callUpstreams and the attempts are promise chains
    answer = await completeAnswer(deps, record, input, prepared, await callUpstreams(deps, record, input, prepared));
  } catch (error) {
    await charge.refund(['images']);
    throw error;
  }
  // fewer images than asked: the rest come back too (the quota counts what was generated)
  if (record.images < asked) await charge.refund(['images'], { images: asked - record.images });
  return answer;
}

interface Prepared {
  family: ImageModelFamily | undefined;
  request: ImageGenerationRequest | undefined;
  upstreams: readonly Upstream[];
  call: CallContext;
}

/** What the upstream that answered gave back, with the request it was sent (read for the generic family when the model has none). */
type Attempted = { kind: 'image'; provider: Upstream['provider']; request: ImageGenerationRequest; response: ImageGenerationResponse } | { kind: 'passthrough'; response: PassthroughResponse };

/**
 * The upstream calls under the fallback rule. Not async: each attempt hands back its call's own
 * promise, so no suspended frames wait beside a slow upstream (issue 15: memory per held request).
 * A synchronous throw (a request that cannot be read) becomes the attempt's failure, as before.
 */
function callUpstreams(deps: GatewayDeps, record: CallRecord, input: ImageRequestInput, prepared: Prepared): Promise<Attempted> {
  const { upstreams, call } = prepared;
  let { request } = prepared;
  const attempt: AttemptInfo = { route: input.route, model: input.model, choices: requestedCount(request?.parameters.n ?? input.requestedImages), prompt: () => promptOf(request, input.req) };
  return withFallback(upstreams, deps.options, attempt, (upstream): Promise<Attempted> => {
    record.provider = upstream.provider;
    const images = capabilityOf(upstream, 'images');
    if (images) {
      const sent = (request ??= input.readRequest(GENERIC_IMAGE_FAMILY));
      return images.generate(call, sent, upstream).then((response) => ({ kind: 'image', provider: upstream.provider, request: sent, response }));
    }
    const api = requireCapability(upstream, 'passthrough', input.route, deps.options.logger);
    return input.forward(api, call, upstream).then((response) => ({ kind: 'passthrough', response }));
  });
}

/** The answer once the upstream answered: the image cap, b64_json downloads, durable storage. */
async function completeAnswer(deps: GatewayDeps, record: CallRecord, input: ImageRequestInput, prepared: Prepared, answer: Attempted): Promise<ImageAnswer> {
  const { family, call } = prepared;
  if (answer.kind === 'passthrough') {
    record.upstreamRequestId = answer.response.requestId;
    // the same rule as below: the upstream does not decide how many images the caller gets (and is billed)
    const capped = capPassthroughImages(answer.response.body, record.provider ?? 'upstream', requestedCount(input.requestedImages), answer.response.requestId);
    record.upstreamImages = capped.upstreamImages;
    record.images = capped.images;
    if (capped.sizes) record.imageSizes = capped.sizes;
    if (capped.usage) record.upstreamUsage = capped.usage;
    const response = await rehostPassthrough(deps, record, input.caller, input.req, { ...answer.response, body: capped.body }, input.requestedFormat);
    return { kind: 'passthrough', response };
  }
  const { response, request } = answer;
  record.upstreamRequestId = response.extra.request_id || undefined;
  // the upstream does not decide how much the gateway downloads and answers: at most what the
  // request allowed, the rest dropped (and reported in the usage event)
  record.upstreamImages = response.data.length;
  response.data = response.data.slice(0, allowedImages(request, family ?? GENERIC_IMAGE_FAMILY));
  record.images = response.data.length;
  let images: Array<Buffer | undefined> | undefined;
  if (request.responseFormat === 'b64_json') {
    const policy = { allowPrivate: deps.options.allowPrivateResultUrls };
    images = await downloadImages(response, call, answer.provider, policy);
  }
  // with storage, each image is stored (from the b64_json buffer when there is one) and url is durable
  await rehostImageAnswer(deps, record, input.caller, input.req, response, images);
  return images ? { kind: 'image', response, images } : { kind: 'image', response };
}

/** The prompt text for an opted-in span: the text items, or the form's `prompt`; never an image. */
function promptOf(request: ImageGenerationRequest | undefined, req: Request): string | undefined {
  if (request) return request.content.flatMap((item) => ('text' in item ? [item.text] : [])).join('\n') || undefined;
  const prompt = (req.body as { prompt?: unknown } | undefined)?.prompt;
  return typeof prompt === 'string' ? prompt : undefined;
}

/** contract §2.3 `n` (default 1), never more than the family allows (readRequest refused larger ones). */
function allowedImages(request: ImageGenerationRequest, family: ImageModelFamily): number {
  const n = request.parameters.n;
  const asked = typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : 1;
  return Math.min(asked, family.maxN);
}

// OpenAI's own ceiling for `n` on its image routes: a larger ask was the upstream's to refuse
const MAX_PASSTHROUGH_N = 10;

/** `n` as the caller sent it (a JSON number or a multipart field), 1 when absent or not a count. */
function requestedCount(n: unknown): number {
  const value = typeof n === 'string' && /^\d{1,4}$/.test(n.trim()) ? Number(n) : n;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 ? Math.min(value, MAX_PASSTHROUGH_N) : 1;
}

/**
 * An OpenAI-compatible image answer with at most `allowed` entries in `data`; the body is
 * re-serialized only when the upstream returned more (otherwise it goes out byte for byte, as a
 * passthrough). An image route's 2xx answer is JSON with a `data` list (upstreams §4.1): anything
 * else is refused (502) rather than relayed, whatever its Content-Type says, so no answer escapes
 * the cap or the count the caller is billed by.
 */
function capPassthroughImages(body: Buffer, provider: string, allowed: number, requestId: string | undefined): CappedImages {
  const parsed = parseJsonBody(body);
  const data = typeof parsed === 'object' && parsed !== null ? (parsed as { data?: unknown }).data : undefined;
  if (!Array.isArray(data)) throw GatewayError.badUpstreamResponse(provider, 'the image answer is not JSON with a data list', requestId);
  const billed = { ...imageSizesOf(parsed as Record<string, unknown>, data.slice(0, allowed)), ...usageOf(parsed) };
  if (data.length <= allowed) return { body, images: data.length, upstreamImages: data.length, ...billed };
  const trimmed = { ...(parsed as Record<string, unknown>), data: data.slice(0, allowed) };
  return { body: Buffer.from(JSON.stringify(trimmed)), images: allowed, upstreamImages: data.length, ...billed };
}

interface CappedImages {
  body: Buffer;
  images: number;
  upstreamImages: number;
  sizes?: string[];
  usage?: Record<string, number>;
}

/** `WxH` of each returned image, when the answer says (Ark: `data[].size`; OpenAI gpt-image: top-level `size`). */
function imageSizesOf(parsed: Record<string, unknown>, data: unknown[]): { sizes?: string[] } {
  const sizes = data.map((item) => {
    const size = typeof item === 'object' && item !== null ? (item as { size?: unknown }).size : undefined;
    return typeof size === 'string' ? size : parsed.size;
  });
  return sizes.length > 0 && sizes.every((size): size is string => typeof size === 'string' && /^\d+x\d+$/.test(size)) ? { sizes } : {};
}
