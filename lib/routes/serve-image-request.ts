// The one image pipeline behind POST /v1/images/generations (and multipart edits): validate for the
// model's family before anything else, resolve the upstream, translate for DashScope or forward to an
// OpenAI-compatible upstream, fill b64_json, answer. Bad input never reaches resolveUpstream.
import type { Request, Response } from 'express';
import { callerOf } from '../auth/authenticate.js';
import { sendBody, sendJson } from '../http/send-body.js';
import type { ImageGenerationRequest } from '../images/image-request.js';
import { GENERIC_IMAGE_FAMILY } from '../images/model-families.js';
import { downloadImages, writeImageResponse } from '../images/result-images.js';
import type { ImageModelFamily, RouteName, Upstream } from '../types.js';
import type { CallContext } from '../upstreams/call-context.js';
import { generateDashscopeImage } from '../upstreams/dashscope.js';
import type { PassthroughResponse } from '../upstreams/openai.js';
import { resolveUpstreams, withFallback } from '../upstreams/resolve-upstreams.js';
import type { RouteDeps } from './route-deps.js';
import { routeStateOf } from './route-state.js';

export interface ImageRouteInput {
  route: RouteName;
  model: string;
  /** Reads the caller's request into the normalized multimodal request, for the model's family. */
  readRequest(family: ImageModelFamily): ImageGenerationRequest;
  /** Sends the caller's request, model renamed, to an OpenAI-compatible upstream (openai or ark). */
  forward(call: CallContext, upstream: Upstream): Promise<PassthroughResponse>;
  /** The `n` the caller asked for on the OpenAI-compatible path (default 1): the most images answered. */
  requestedImages: unknown;
}

export async function serveImageRequest(deps: RouteDeps, req: Request, res: Response, input: ImageRouteInput): Promise<void> {
  const state = routeStateOf(res);
  state.model = input.model;
  const family = deps.options.imageModels.find(input.model);
  // image-family models are validated before the resolver runs: bad input costs the host nothing
  let request = family ? input.readRequest(family) : undefined;
  const upstreams = await resolveUpstreams(deps.options, { model: input.model, route: input.route, caller: callerOf(res), req });
  const call: CallContext = { http: deps.http, signal: state.signal, limits: deps.options.limits };

  const answer = await withFallback(upstreams, deps.options, async (upstream) => {
    state.provider = upstream.provider;
    if (upstream.provider === 'dashscope') {
      request ??= input.readRequest(GENERIC_IMAGE_FAMILY);
      return { kind: 'image' as const, provider: upstream.provider, response: await generateDashscopeImage(call, request, upstream) };
    }
    return { kind: 'passthrough' as const, response: await input.forward(call, upstream) };
  });

  if (answer.kind === 'passthrough') {
    state.upstreamRequestId = answer.response.requestId;
    // the same rule as below: the upstream does not decide how many images the caller gets (and is billed)
    const capped = capPassthroughImages(answer.response.body, answer.response.contentType, requestedCount(input.requestedImages));
    state.upstreamImages = capped.upstreamImages;
    state.images = capped.images;
    sendBody(res, answer.response.status, answer.response.contentType, capped.body);
    return;
  }
  const { response } = answer;
  state.upstreamRequestId = response.extra.request_id || undefined;
  // the upstream does not decide how much the gateway downloads and answers: at most what the
  // request allowed, the rest dropped (and reported in the usage event)
  state.upstreamImages = response.data.length;
  response.data = response.data.slice(0, allowedImages(request!, family ?? GENERIC_IMAGE_FAMILY));
  state.images = response.data.length;
  if (request!.responseFormat === 'b64_json') {
    const policy = { allowPrivate: deps.options.allowPrivateResultUrls };
    await writeImageResponse(res, response, await downloadImages(response, call, answer.provider, policy));
    return;
  }
  sendJson(res, 200, response);
}

/** spec §2.3 `n` (default 1), never more than the family allows (readRequest refused larger ones). */
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
 * An OpenAI-compatible answer with at most `allowed` entries in `data`; the body is re-serialized
 * only when the upstream returned more (otherwise it goes out byte for byte, as a passthrough).
 */
export function capPassthroughImages(body: Buffer, contentType: string, allowed: number): { body: Buffer; images: number; upstreamImages: number } {
  if (!contentType.includes('json')) return { body, images: 0, upstreamImages: 0 };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return { body, images: 0, upstreamImages: 0 };
  }
  const data = typeof parsed === 'object' && parsed !== null ? (parsed as { data?: unknown }).data : undefined;
  if (!Array.isArray(data)) return { body, images: 0, upstreamImages: 0 };
  if (data.length <= allowed) return { body, images: data.length, upstreamImages: data.length };
  const trimmed = { ...(parsed as Record<string, unknown>), data: data.slice(0, allowed) };
  return { body: Buffer.from(JSON.stringify(trimmed)), images: allowed, upstreamImages: data.length };
}
