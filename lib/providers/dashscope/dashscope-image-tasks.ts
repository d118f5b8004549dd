// DashScope's asynchronous image synthesis (upstreams §1.5): submit with `X-DashScope-Async: enable`,
// then read the task by id until it ends. The models that offer it (qwen-image-plus, qwen-image, the
// Wan text-to-image models) run image tasks on DashScope's own task, so any gateway instance can follow
// the work and a restart loses nothing (docs/image-tasks.md "Restarts and several instances").
import { vendorId } from '../vendor-ids.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { rejectionOf } from '../../errors/rejection-of.js';
import type { ImageData, ImageGenerationResponse } from '../../images/image-generation-response.js';
import type { ImageGenerationRequest } from '../../images/image-request.js';
import { isObject, parseJsonBody, stringOr } from '../../json/json-values.js';
import type { UpstreamResponse } from '../../transport/upstream-http.js';
import type { Upstream } from '../../types.js';
import { type CallContext, jsonHeaders, postJsonUpstream, requestUpstream, upstreamUrl } from '../call-context.js';
import { normalizeDashscopeError } from './dashscope-errors.js';
import type { UpstreamImageState, UpstreamImageTasks } from '../provider.js';

const DASHSCOPE_SYNTHESIS_PATH = '/services/aigc/text2image/image-synthesis';

// upstreams §1.5: "Among Qwen models only qwen-image-plus and qwen-image support it"; Wan 2.x
// text-to-image models (wan2.5-t2i-preview, wanx-v1, ...) use it too
const ASYNC_MODEL = /^(?:qwen-image-plus|qwen-image|wanx[\w.-]*|wan2\.\d+-t2i[\w.-]*)$/;

/** Text to image only: an async task has no input images, and the prompt is plain text. */
function offers(upstreamModel: string, request: ImageGenerationRequest): boolean {
  return ASYNC_MODEL.test(upstreamModel) && request.content.every((item) => 'text' in item);
}

/** upstreams §1.5 submit: `{ model, input: { prompt }, parameters }`; answers DashScope's task id. */
function submit(call: CallContext, request: ImageGenerationRequest, upstream: Upstream, upstreamModel: string): Promise<string> {
  return rejectionOf(() => {
    const prompt = request.content.flatMap((item) => ('text' in item ? [item.text] : [])).join('\n');
    const json = { model: upstreamModel, input: { prompt }, parameters: request.parameters };
    const headers = jsonHeaders(upstream);
    headers['x-dashscope-async'] = 'enable';
    return postJsonUpstream(call, upstream, { provider: 'dashscope', url: upstreamUrl(upstream.baseURL, '/api/v1', DASHSCOPE_SYNTHESIS_PATH), headers, json });
  }).then((response) => {
    const body = readBody(response);
    const id = isObject(body) && isObject(body.output) ? stringOr(body.output.task_id) : undefined;
    if (!id) throw GatewayError.badUpstreamResponse('dashscope', 'the task submit answered no output.task_id', requestIdOf(response, body));
    return vendorId('dashscope', id, 'task_id', requestIdOf(response, body));
  });
}

/** upstreams §1.5 `GET /api/v1/tasks/{id}`: the task's state, its images once SUCCEEDED, its error once FAILED. */
function read(call: CallContext, upstream: Upstream, taskId: string): Promise<UpstreamImageState> {
  return requestUpstream(call, upstream, {
    provider: 'dashscope',
    method: 'GET',
    url: upstreamUrl(upstream.baseURL, '/api/v1', `/tasks/${encodeURIComponent(taskId)}`),
    headers: jsonHeaders(upstream),
  }).then((response) => stateOf(readBody(response), requestIdOf(response)));
}

/** A task body as the gateway's state: running, succeeded with the §2.4 answer, or failed with the error. */
export function stateOf(body: unknown, headerRequestId?: string): UpstreamImageState {
  const output = isObject(body) && isObject(body.output) ? body.output : undefined;
  const status = output ? stringOr(output.task_status) : undefined;
  const requestId = (isObject(body) && stringOr(body.request_id)) || headerRequestId || '';
  if (status === 'PENDING' || status === 'RUNNING' || status === 'SUSPENDED') return { status: 'running' };
  if (status === 'SUCCEEDED') {
    const results = Array.isArray(output!.results) ? output!.results : [];
    // partial success (upstreams §1.5): failed images carry a code instead of a URL, and are not billed
    const data: ImageData[] = results.flatMap((item: unknown) => {
      const url = isObject(item) ? stringOr(item.url) : undefined;
      return url ? [{ url, b64_json: '', revised_prompt: (isObject(item) && stringOr(item.actual_prompt)) || '' }] : [];
    });
    if (data.length === 0) return { status: 'failed', error: GatewayError.noImage('dashscope', '; the task succeeded without an image', requestId || undefined) };
    const response: ImageGenerationResponse = { created: Math.floor(Date.now() / 1000), data, extra: { request_id: requestId } };
    return { status: 'succeeded', response };
  }
  // FAILED, CANCELED, UNKNOWN (an id DashScope does not know, or older than its 24 h), or no status at all
  const failure = output && stringOr(output.code) ? output : isObject(body) ? body : {};
  return { status: 'failed', error: normalizeDashscopeError(200, { ...failure, code: stringOr(failure.code) ?? `Task${status ?? 'Unknown'}`, request_id: requestId }, headerRequestId) };
}

function readBody(response: UpstreamResponse): unknown {
  const body = parseJsonBody(response.body);
  if (response.status < 200 || response.status >= 300) throw normalizeDashscopeError(response.status, body, requestIdOf(response));
  if (body === undefined) throw GatewayError.badUpstreamResponse('dashscope', 'the body is not JSON', requestIdOf(response));
  return body;
}

function requestIdOf(response: UpstreamResponse, body?: unknown): string | undefined {
  return (isObject(body) && stringOr(body.request_id)) || response.headers['x-request-id'] || response.headers['x-dashscope-requestid'];
}

// DashScope keeps a task 24 h (upstreams §1.5)
export const dashscopeImageTasks: UpstreamImageTasks = { offers, submit, read, lifetimeMs: 24 * 3600_000 };
