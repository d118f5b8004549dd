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
  state.images = response.data.length;
  if (request!.responseFormat === 'b64_json') {
    await writeImageResponse(res, response, await downloadImages(response, call, answer.provider));
    return;
  }
  sendJson(res, 200, response);
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
