// The one image pipeline behind POST /v1/images/generations (and multipart edits): validate for the
// model's family before anything else, resolve the upstream, translate for DashScope or forward to an
// OpenAI-compatible upstream, fill b64_json, answer. Bad input never reaches resolveUpstream.
import type { Request, Response } from 'express';
import { callerOf } from '../authenticate.js';
import { sendBody, sendJson } from '../send-body.js';
import type { ImageGenerationRequest } from '../../images/image-request.js';
import { GENERIC_IMAGE_FAMILY } from '../../images/model-families.js';
import { downloadImages } from '../../gateway/result-images.js';
import { writeImageResponse } from '../write-image-response.js';
import type { ImageModelFamily, RouteName, Upstream } from '../../types.js';
import type { CallContext } from '../../providers/call-context.js';
import { generateDashscopeImage } from '../../providers/dashscope.js';
import type { PassthroughResponse } from '../../providers/openai.js';
import { resolveUpstreams, withFallback } from '../../gateway/resolve-upstreams.js';
import type { RouteDeps } from '../../gateway/gateway-deps.js';
import { routeStateOf } from '../route-state.js';

export interface ImageRouteInput {
  route: RouteName;
  model: string;
  /** Reads the caller's request into the normalized multimodal request, for the model's family. */
  readRequest(family: ImageModelFamily): ImageGenerationRequest;
  /** Sends the caller's request, model renamed, to an OpenAI-compatible upstream (openai or ark). */
  forward(call: CallContext, upstream: Upstream): Promise<PassthroughResponse>;
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
    state.images = countImages(answer.response);
    sendBody(res, answer.response.status, answer.response.contentType, answer.response.body);
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

function countImages(response: PassthroughResponse): number {
  if (!response.contentType.includes('json')) return 0;
  try {
    const body = JSON.parse(response.body.toString('utf8')) as { data?: unknown };
    return Array.isArray(body.data) ? body.data.length : 0;
  } catch {
    return 0;
  }
}
