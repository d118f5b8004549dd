// OpenAI-compatible adapter (upstreams.md §4): OpenAI itself, DashScope compatible-mode, Ark /api/v3.
// Requests go through unchanged but for the model name; answers come back as the upstream sent them;
// errors are normalized to the gateway's error object.
import { GatewayError } from '../errors/gateway-error.js';
import type { Upstream } from '../types.js';
import { isObject, parseJsonBody, stringOr } from '../json/json-values.js';
import { type CallContext, jsonHeaders, timeoutOf } from './call-context.js';
import { classifyUpstreamCode } from '../errors/upstream-codes.js';
import type { UpstreamStream } from '../transport/upstream-http.js';
import { openAICompatibleUrl } from './upstream-url.js';

export interface PassthroughResponse {
  status: number;
  contentType: string;
  body: Buffer;
  requestId?: string;
}

/** The caller's body with the model name the resolver chose; nothing else changes. */
export function translateOpenAIRequest(body: Record<string, unknown>, upstreamModel: string): Record<string, unknown> {
  return { ...body, model: upstreamModel };
}

/** upstreams.md §4.5 `{ error: { message, type, param, code } }` (Ark uses the same envelope, §2.8). */
export function normalizeOpenAIError(status: number, body: unknown, headerRequestId?: string, provider = 'openai'): GatewayError {
  const error = isObject(body) && isObject(body.error) ? body.error : undefined;
  const code = error ? stringOr(error.code) ?? stringOr(error.type) : undefined;
  return GatewayError.fromUpstream({
    provider,
    status,
    upstreamCode: code,
    upstreamMessage: error ? stringOr(error.message) : isObject(body) ? stringOr(body.message) : undefined,
    requestId: headerRequestId,
    kind: classifyUpstreamCode(code),
  });
}

/** POSTs a JSON body to the upstream's `{base}{path}` and returns its 2xx answer untouched. */
export async function forwardOpenAIJson(call: CallContext, path: string, body: Record<string, unknown>, upstream: Upstream): Promise<PassthroughResponse> {
  return sendPassthrough(call, path, upstream, jsonHeaders(upstream), JSON.stringify(translateOpenAIRequest(body, upstream.model ?? String(body.model))));
}

/** POSTs a multipart form (files intact, model renamed) to the upstream's `{base}{path}`. */
export async function forwardOpenAIMultipart(call: CallContext, path: string, form: FormData, upstream: Upstream): Promise<PassthroughResponse> {
  const headers = jsonHeaders(upstream);
  // the form sets its own multipart content type with the boundary
  delete headers['content-type'];
  return sendPassthrough(call, path, upstream, headers, form);
}

async function sendPassthrough(call: CallContext, path: string, upstream: Upstream, headers: Record<string, string>, body: string | FormData): Promise<PassthroughResponse> {
  const response = await call.http.request({
    provider: upstream.provider,
    method: 'POST',
    url: openAICompatibleUrl(upstream.provider, upstream.baseURL, path),
    headers,
    body,
    timeoutMs: timeoutOf(upstream, call.limits),
    signal: call.signal,
    maxBytes: call.limits.upstreamResponseBytes,
  });
  const requestId = response.headers['x-request-id'];
  if (response.status < 200 || response.status >= 300) {
    throw normalizeOpenAIError(response.status, parseJsonBody(response.body), requestId, upstream.provider);
  }
  return { status: response.status, contentType: response.headers['content-type'] ?? 'application/json', body: response.body, requestId };
}

/** Opens a streamed (`stream: true`) call; a non-2xx answer is thrown normalized, before any byte is relayed. */
export async function openOpenAIStream(
  call: CallContext,
  path: string,
  body: Record<string, unknown>,
  upstream: Upstream,
): Promise<Extract<UpstreamStream, { ok: true }>> {
  const headers = jsonHeaders(upstream);
  headers.accept = 'text/event-stream';
  // identity: each chunk is relayed as it arrives, with no decompression step to buffer it
  headers['accept-encoding'] = 'identity';
  const opened = await call.http.stream({
    provider: upstream.provider,
    method: 'POST',
    url: openAICompatibleUrl(upstream.provider, upstream.baseURL, path),
    headers,
    body: JSON.stringify(translateOpenAIRequest(body, upstream.model ?? String(body.model))),
    timeoutMs: timeoutOf(upstream, call.limits),
    signal: call.signal,
    maxBytes: call.limits.upstreamResponseBytes,
  });
  if (!opened.ok) throw normalizeOpenAIError(opened.status, parseJsonBody(opened.body), opened.headers['x-request-id'], upstream.provider);
  return opened;
}
