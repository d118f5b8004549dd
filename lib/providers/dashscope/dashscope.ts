// Alibaba DashScope adapter: the synchronous multimodal-generation call (upstreams §1.3) behind
// POST /v1/images/generations and image-family edits. Pure translation functions first, then the
// one transport function that uses them.
import { GatewayError } from '../../errors/gateway-error.js';
import type { ContentItem, ImageGenerationRequest } from '../../images/image-request.js';
import type { ImageData, ImageGenerationResponse } from '../../images/image-generation-response.js';
import type { Upstream } from '../../types.js';
import type { UpstreamResponse } from '../../transport/upstream-http.js';
import { isObject, parseJsonBody, stringOr, usageOf } from '../../json/json-values.js';
import { rejectionOf } from '../../errors/rejection-of.js';
import { type CallContext, jsonHeaders, postJsonUpstream, upstreamUrl } from '../call-context.js';
import { openAICompatibleApi } from '../openai/openai.js';
import type { Provider } from '../provider.js';
import { dashscopeImageTasks } from './dashscope-image-tasks.js';
import { normalizeDashscopeError } from './dashscope-errors.js';
import { DASHSCOPE_MODELS, dashscopeFamilyRow } from './dashscope-models.js';

export { normalizeDashscopeError };

export const DASHSCOPE_IMAGE_PATH = '/services/aigc/multimodal-generation/generation';

export interface DashscopeImageRequest {
  model: string;
  input: { messages: [{ role: 'user'; content: ContentItem[] }] };
  parameters?: Record<string, unknown>;
}

/** upstreams §1.3: model, input.messages as given, parameters; nothing gateway-only. */
export function translateImageRequest(request: ImageGenerationRequest, upstreamModel: string): DashscopeImageRequest {
  const translated: DashscopeImageRequest = {
    model: upstreamModel,
    input: { messages: [{ role: 'user', content: request.content }] },
  };
  // an empty parameters object is left out: DashScope has a BadRequest.EmptyParameters code
  if (Object.keys(request.parameters).length > 0) translated.parameters = request.parameters;
  return translated;
}

/**
 * contract §2.4: one data entry per image across all choices (the n > 1 layout is unconfirmed, so every
 * content[].image of every choice counts); a choice's text items, if the model returns any, are its
 * images' revised_prompt. Throws a 502 when no image came back.
 */
export function translateImageResponse(body: unknown, context: { now: number; headerRequestId?: string }): ImageGenerationResponse {
  const requestId = (isObject(body) && stringOr(body.request_id)) || context.headerRequestId || '';
  const output = isObject(body) ? body.output : undefined;
  if (isObject(body) && !isObject(output) && stringOr(body.code)) {
    // LiteLLM's observation: an API error can arrive in a 200 body (code, no output)
    throw normalizeDashscopeError(200, body, context.headerRequestId);
  }
  const data: ImageData[] = [];
  const choices = isObject(output) && Array.isArray(output.choices) ? output.choices : [];
  for (const choice of choices) {
    const content = isObject(choice) && isObject(choice.message) && Array.isArray(choice.message.content) ? choice.message.content : [];
    const texts = content.flatMap((item: unknown) => (isObject(item) && typeof item.text === 'string' ? [item.text] : []));
    const revisedPrompt = texts.join('\n');
    for (const item of content) {
      const image = isObject(item) ? stringOr(item.image) : undefined;
      if (!image) continue;
      if (image.startsWith('data:')) {
        data.push({ url: '', b64_json: image.slice(image.indexOf(',') + 1), revised_prompt: revisedPrompt });
      } else {
        data.push({ url: image, b64_json: '', revised_prompt: revisedPrompt });
      }
    }
  }
  if (data.length === 0) {
    const finish = choices.map((choice) => (isObject(choice) ? stringOr(choice.finish_reason) : undefined)).find(Boolean);
    throw GatewayError.noImage('dashscope', `${finish ? ` (finish_reason ${finish})` : ''}; check the prompt is in input.messages[].content[]`, requestId || undefined);
  }
  const response: ImageGenerationResponse = { created: Math.floor(context.now / 1000), data, extra: { request_id: requestId } };
  // upstreams §1.3 `usage { width, height, image_count }`: the size of every image, for the usage event (and its price)
  const { usage } = usageOf(body);
  if (usage) response.usage = usage;
  if (usage?.width && usage.height) response.sizes = data.map(() => `${usage.width}x${usage.height}`);
  return response;
}

/**
 * Calls DashScope for one image request and answers in the contract §2.4 shape (URLs; b64 filled later).
 * Not async: the transport's promise is chained, so no frame of this function waits beside the slow
 * call (docs/architecture.md "Performance": memory per held request); a throw while building the body is a rejection.
 */
function generateDashscopeImage(call: CallContext, request: ImageGenerationRequest, upstream: Upstream): Promise<ImageGenerationResponse> {
  return rejectionOf(() => sendDashscopeImage(call, request, upstream)).then(readDashscopeImage);
}

function sendDashscopeImage(call: CallContext, request: ImageGenerationRequest, upstream: Upstream): Promise<UpstreamResponse> {
  const json = translateImageRequest(request, upstream.model ?? request.model);
  return postJsonUpstream(call, upstream, { provider: 'dashscope', url: upstreamUrl(upstream.baseURL, '/api/v1', DASHSCOPE_IMAGE_PATH), headers: jsonHeaders(upstream), json });
}

function readDashscopeImage(response: UpstreamResponse): ImageGenerationResponse {
  const headerRequestId = response.headers['x-request-id'] ?? response.headers['x-dashscope-requestid'];
  const body = parseJsonBody(response.body);
  if (response.status < 200 || response.status >= 300) throw normalizeDashscopeError(response.status, body, headerRequestId);
  if (body === undefined) throw GatewayError.badUpstreamResponse('dashscope', 'the body is not JSON', headerRequestId);
  return translateImageResponse(body, { now: Date.now(), headerRequestId });
}

/**
 * DashScope: native image generation, and its OpenAI-compatible mode for chat and responses, also
 * when the base is the native `/api/v1` one (docs/architecture.md's DashScope base), so one DashScope upstream
 * serves images and chat alike.
 */
export const dashscopeProvider: Provider = {
  name: 'dashscope',
  // a documented custom value: the GenAI conventions name no Alibaba provider
  genAiName: 'alibaba.dashscope',
  models: DASHSCOPE_MODELS,
  familyRow: dashscopeFamilyRow,
  images: { generate: generateDashscopeImage },
  tasks: { image: dashscopeImageTasks },
  passthrough: openAICompatibleApi({
    prefix: '/compatible-mode/v1',
    base: (baseURL) => baseURL.replace(/\/+$/, '').replace(/\/api\/v1$/, ''),
  }),
};
