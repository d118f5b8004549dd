// The routes whose body goes to an OpenAI-compatible upstream as it is, model renamed: chat
// completions, responses and Ark's native image generation (contract §4.2). `stream: true` is relayed
// as server-sent events; a failure before the first byte may fall back to the next upstream.
import type { RequestHandler } from 'express';
import { callerOf } from '../authenticate.js';
import { asyncHandler } from '../async-handler.js';
import { jsonObjectBody } from '../body/json-body.js';
import { sendBody } from '../send-body.js';
import { type SseErrorFormat, relaySse } from '../sse-relay.js';
import type { ForwardedBody } from '../../schemas/forward-schemas.js';
import type { Validator } from '../../schemas/validator.js';
import { checkForwardedUrls } from '../../security/forwarded-urls.js';
import type { RouteName } from '../../types.js';
import type { CallContext } from '../../providers/call-context.js';
import { withFallback } from '../../gateway/fallback.js';
import { resolveUpstreams } from '../../gateway/resolve-upstreams.js';
import { requireCapability } from '../../providers/registry.js';
import type { PassthroughResponse } from '../../providers/provider.js';
import type { GatewayDeps } from '../../gateway/gateway-deps.js';
import { routeStateOf } from '../route-state.js';
import { requireModel } from './request-fields.js';
import { promptTextOf, responseOfJson } from '../../telemetry/genai-fields.js';
import { nativeImagesAsked } from '../../gateway/tenancy/request-costs.js';
import { usageOf } from '../../gateway/tenancy/usage-fields.js';
import { parseJsonBody } from '../../json/json-values.js';

export interface ForwardRoute {
  route: RouteName;
  /** The endpoint path under the provider's OpenAI-compatible base. */
  upstreamPath: string;
  validate: Validator<ForwardedBody>;
  /** How a mid-stream failure is told to the client. */
  streamErrors: SseErrorFormat;
}

export function forwardJsonHandler(deps: GatewayDeps, config: ForwardRoute): RequestHandler {
  return asyncHandler(async (req, res) => {
    const state = routeStateOf(res);
    const received = jsonObjectBody(req.body);
    state.model = requireModel(received.model);
    config.validate(received);
    // media URLs the upstream will fetch get the one URL check; the checked, normalized body goes on
    const body = checkForwardedUrls(config.route, received, { allowPrivate: deps.options.allowPrivateImageUrls });
    const upstreams = await resolveUpstreams(deps.options, { model: state.model, route: config.route, caller: callerOf(res), req });
    const call: CallContext = { http: deps.http, signal: state.clientGone, limits: deps.options.limits };
    const described = { route: config.route, model: state.model, choices: typeof body.n === 'number' ? body.n : undefined, prompt: () => promptTextOf(body) };
    // quotas after validation and the resolver, before the upstream call; images back when it fails
    const native = config.route === 'images.native';
    const charge = await deps.quotas.charge(callerOf(res), { requests: 1, ...(native ? { images: nativeImagesAsked(body) } : {}) });
    state.rateLimit = charge.rateLimit;
    // nothing charged (quotas off, or no limit for these kinds): nothing to give back, no wrapper
    const refundOnFailure =
      charge.taken.length === 0
        ? <T>(work: Promise<T>): Promise<T> => work
        : async <T>(work: Promise<T>): Promise<T> => {
            try {
              return await work;
            } catch (error) {
              await charge.refund(['images']);
              throw error;
            }
          };

    if (body.stream === true) {
      const opened = await refundOnFailure(
        withFallback(upstreams, deps.options, described, (upstream) => {
          state.provider = upstream.provider;
          return requireCapability(upstream, 'passthrough', config.route, deps.options.logger).openStream(call, config.upstreamPath, body, upstream);
        }),
      );
      state.upstreamRequestId = opened.headers['x-request-id'];
      // a streamed Ark image group is billed by the images its events returned (upstreams §2.6)
      const counted = native ? streamedImageCounter(state) : undefined;
      const failure = await relaySse(res, opened, config.streamErrors, (error) => (state.errorCode = error.code), counted);
      if (native) {
        const asked = nativeImagesAsked(body);
        if (state.images < asked) await charge.refund(['images'], { images: asked - state.images });
      }
      // already told to the client as an error event; thrown so the error middleware logs it once
      if (failure) throw failure;
      return;
    }
    const answer = await refundOnFailure(
      withFallback(upstreams, deps.options, { ...described, response: (sent: PassthroughResponse) => responseOfJson(sent.body) }, (upstream) => {
        state.provider = upstream.provider;
        return requireCapability(upstream, 'passthrough', config.route, deps.options.logger).forwardJson(call, config.upstreamPath, body, upstream);
      }),
    );
    state.upstreamRequestId = answer.requestId;
    if (native) {
      countNativeImages(state, answer.body);
      // a group of fewer images than `max_images`: the rest come back (the quota counts what was generated)
      const asked = nativeImagesAsked(body);
      if (state.images < asked) await charge.refund(['images'], { images: asked - state.images });
    }
    sendBody(res, answer.status, answer.contentType, answer.body);
  });
}

/** What an Ark native image answer returned (upstreams §2.6): images, their `WxH`, Ark's usage counters. */
function countNativeImages(state: ReturnType<typeof routeStateOf>, body: Buffer): void {
  let parsed: unknown;
  try {
    parsed = parseJsonBody(body);
  } catch {
    return;
  }
  const data = (parsed as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return;
  state.images = data.length;
  const sizes = data.map((item) => (item as { size?: unknown } | null)?.size);
  if (sizes.length > 0 && sizes.every((size): size is string => typeof size === 'string')) state.imageSizes = sizes;
  const { usage } = usageOf(parsed);
  if (usage) state.upstreamUsage = usage;
}

// an Ark stream event that carries one image (upstreams §2.6); the carry keeps a marker cut by a chunk edge
const PARTIAL_SUCCEEDED = /"type"\s*:\s*"image_generation\.partial_succeeded"/g;
const CARRY = 64;

/** Counts the images of a streamed Ark image answer into the request's state as its chunks go by. */
function streamedImageCounter(state: ReturnType<typeof routeStateOf>): (chunk: Buffer) => void {
  let carry = '';
  return (chunk) => {
    const text = carry + chunk.toString('latin1');
    for (const match of text.matchAll(PARTIAL_SUCCEEDED)) {
      // a match wholly inside the carry was counted with the previous chunk
      if (match.index + match[0].length > carry.length) state.images += 1;
    }
    carry = text.slice(-CARRY);
  };
}
