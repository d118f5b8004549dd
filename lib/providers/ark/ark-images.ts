// Ark's Seedream behind POST /v1/images/generations and /v1/images/edits (upstreams §2.7): the gateway's
// one normalized image request, from the contract's multimodal shape or the OpenAI shape alike, as
// Ark's synchronous `POST /api/v3/images/generations`, and its answer as the contract §2.4 answer. Pure
// translation first, then the call. docs/models.md says which fields go where.
import { GatewayError } from '../../errors/gateway-error.js';
import { rejectionOf } from '../../errors/rejection-of.js';
import type { ImageData, ImageGenerationResponse } from '../../images/image-generation-response.js';
import type { ImageGenerationRequest } from '../../images/image-request.js';
import { isObject, parseJsonBody, stringOr, usageOf } from '../../json/json-values.js';
import type { UpstreamResponse } from '../../transport/upstream-http.js';
import type { Upstream } from '../../types.js';
import { type CallContext, jsonHeaders, postJsonUpstream, upstreamUrl } from '../call-context.js';
import { normalizeOpenAIError } from '../openai/openai.js';
import { withTenantField } from '../tenant-field.js';

// DashScope's own parameters (contract §2.3) that Seedream has no field for: not sent
const DASHSCOPE_ONLY = new Set(['prompt_extend', 'negative_prompt', 'n', 'size']);

/**
 * The Seedream body: the caller's other top-level fields as they came (Ark adds fields), the prompt,
 * the reference images as `image` (one value, or a list), `size` with an `x` (Ark's spelling; named
 * sizes as they are), and `n` > 1 as an image group of at most `n` (Ark has no `n`, upstreams §2.7).
 * Never a stream: this answer is one JSON body.
 */
export function translateArkImageRequest(request: ImageGenerationRequest, upstreamModel: string): Record<string, unknown> {
  const { stream: _stream, ...extra } = request.extra ?? {};
  const body: Record<string, unknown> = { ...extra };
  for (const [key, value] of Object.entries(request.parameters)) if (!DASHSCOPE_ONLY.has(key)) body[key] = value;
  body.model = upstreamModel;
  body.prompt = request.content.flatMap((item) => ('text' in item ? [item.text] : [])).join('\n');
  const images = request.content.flatMap((item) => ('image' in item ? [item.image] : []));
  if (images.length === 1) body.image = images[0];
  else if (images.length > 1) body.image = images;
  const size = request.parameters.size;
  if (typeof size === 'string') body.size = size.replace(/^(\d+)\*(\d+)$/, '$1x$2');
  const n = request.parameters.n;
  if (typeof n === 'number' && n > 1 && body.sequential_image_generation === undefined) {
    body.sequential_image_generation = 'auto';
    body.sequential_image_generation_options = { max_images: n };
  }
  body.response_format = request.responseFormat;
  return body;
}

/** Seedream's answer as the contract's: one entry per image returned; a failed group item is left out. */
export function translateArkImageResponse(body: unknown, context: { now: number; headerRequestId?: string }): ImageGenerationResponse {
  const requestId = context.headerRequestId ?? '';
  const items = isObject(body) && Array.isArray(body.data) ? body.data : [];
  const data: ImageData[] = [];
  const sizes: string[] = [];
  for (const item of items) {
    if (!isObject(item)) continue;
    const url = stringOr(item.url);
    const b64 = stringOr(item.b64_json);
    if (!url && !b64) continue;
    data.push({ url: url ?? '', b64_json: url ? '' : (b64 ?? ''), revised_prompt: '' });
    const size = stringOr(item.size);
    if (size) sizes.push(size);
  }
  if (data.length === 0) {
    const failed = items.map((item) => (isObject(item) && isObject(item.error) ? stringOr(item.error.code) : undefined)).find(Boolean);
    throw GatewayError.noImage('ark', failed ? ` (${failed})` : '', requestId || undefined);
  }
  // upstreams §2.7: `created` on the wire, `created_at` in one SDK's type
  const created = isObject(body) && typeof body.created === 'number' ? body.created : isObject(body) && typeof body.created_at === 'number' ? body.created_at : Math.floor(context.now / 1000);
  const response: ImageGenerationResponse = { created, data, extra: { request_id: requestId } };
  if (sizes.length === data.length) response.sizes = sizes;
  const { usage } = usageOf(body);
  if (usage) response.usage = usage;
  return response;
}

/** One Seedream call; not async, so no frame waits beside the slow call (docs/architecture.md "Performance"). */
export function generateArkImage(call: CallContext, request: ImageGenerationRequest, upstream: Upstream): Promise<ImageGenerationResponse> {
  return rejectionOf(() => sendArkImage(call, request, upstream)).then(readArkImage);
}

function sendArkImage(call: CallContext, request: ImageGenerationRequest, upstream: Upstream): Promise<UpstreamResponse> {
  // Seedream documents no tenant field: with the option on, no caller-sent one either (tenant-field.ts)
  const json = withTenantField(translateArkImageRequest(request, upstream.model ?? request.model), call.safety, undefined);
  return postJsonUpstream(call, upstream, { provider: 'ark', url: upstreamUrl(upstream.baseURL, '/api/v3', '/images/generations'), headers: jsonHeaders(upstream), json });
}

function readArkImage(response: UpstreamResponse): ImageGenerationResponse {
  const headerRequestId = response.headers['x-request-id'];
  const body = parseJsonBody(response.body);
  if (response.status < 200 || response.status >= 300) throw normalizeOpenAIError(response.status, body, headerRequestId, 'ark');
  if (body === undefined) throw GatewayError.badUpstreamResponse('ark', 'the body is not JSON', headerRequestId);
  return translateArkImageResponse(body, { now: Date.now(), headerRequestId });
}
