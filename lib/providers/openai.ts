// OpenAI-compatible adapter (upstreams §4): OpenAI itself, and the family of OpenAI-compatible APIs
// other providers offer (DashScope compatible-mode, Ark /api/v3), each of which builds its passthrough
// capability with openAICompatibleApi() and its own URL rule (and Azure OpenAI, whose rule also names
// its URLs, credentials and error reading: azure.ts). Requests go through unchanged but for
// the model name; answers come back as the upstream sent them; errors are normalized.
import type { Readable } from 'node:stream';
import { GatewayError } from '../errors/gateway-error.js';
import { rejectionOf } from '../errors/rejection-of.js';
import type { FormBody } from '../transport/form-body.js';
import type { Upstream } from '../types.js';
import { isObject, parseJsonBody, stringOr } from '../json/json-values.js';
import { type CallContext, jsonHeaders, secretsOfHeaders, timeoutOf } from './call-context.js';
import { requestUpstream } from './upstream-request.js';
import { classifyUpstreamCode } from '../errors/status-policy.js';
import type { OpenedStream, PassthroughCapability, PassthroughResponse, Provider } from './provider.js';
import { secretCut } from '../transport/secret-free-body.js';
import { upstreamUrl } from './upstream-url.js';
import { OPENAI_MODELS } from './openai-models.js';

/** Where a provider's OpenAI-compatible API lives: its bare-origin prefix, and its base rewrite if any. */
export interface OpenAICompatibleUrlRule {
  prefix: string;
  /** Turns the operator's baseURL into the compatible API's base (e.g. a native `/api/v1` base). */
  base?: (baseURL: string) => string;
  /**
   * The whole URL of an endpoint, when it is not `{base}{path}` (Azure's deployment form). `model` is
   * the upstream model a JSON body names; undefined for a multipart form.
   */
  url?: (upstream: Upstream, path: string, model: string | undefined) => string;
  /**
   * The credential headers, when they are not `Authorization: Bearer {apiKey}` (Azure's `api-key`, a
   * host's token); `timeoutMs` bounds a host function it may wait for.
   */
  auth?: (upstream: Upstream, timeoutMs: number) => Promise<Record<string, string>>;
  /** The vendor's error reading, when OpenAI's envelope alone would miss its codes. */
  normalizeError?: typeof normalizeOpenAIError;
}

/** The caller's body with the model name the resolver chose; nothing else changes. */
export function translateOpenAIRequest(body: Record<string, unknown>, upstreamModel: string): Record<string, unknown> {
  return { ...body, model: upstreamModel };
}

/** upstreams §4.5 `{ error: { message, type, param, code } }` (Ark uses the same envelope, §2.8). */
export function normalizeOpenAIError(status: number, body: unknown, headerRequestId?: string, provider = 'openai', retryAfterSeconds?: number): GatewayError {
  const error = isObject(body) && isObject(body.error) ? body.error : undefined;
  const code = error ? (stringOr(error.code) ?? stringOr(error.type)) : undefined;
  return GatewayError.fromUpstream({
    provider,
    status,
    upstreamCode: code,
    upstreamMessage: error ? stringOr(error.message) : isObject(body) ? stringOr(body.message) : undefined,
    requestId: headerRequestId,
    kind: classifyUpstreamCode(code),
    retryAfterSeconds,
  });
}

/** Seconds an upstream's `Retry-After` (seconds or an HTTP date) or `retry-after-ms` asks to wait; undefined when it names none. */
export function retryAfterOf(headers: Readonly<Record<string, string | undefined>>): number | undefined {
  const value = headers['retry-after']?.trim();
  if (value) {
    if (/^\d+$/.test(value)) return Number(value);
    const at = Date.parse(value);
    if (Number.isFinite(at)) return Math.max(0, (at - Date.now()) / 1000);
  }
  const ms = headers['retry-after-ms']?.trim();
  return ms && /^\d+(\.\d+)?$/.test(ms) ? Number(ms) / 1000 : undefined;
}

/**
 * POSTs a JSON body to the upstream's `{base}{path}` and returns its 2xx answer untouched. Not an
 * async function: with headers ready at once, the call's own promise is the only one (a throw is
 * still a rejection, as an async function's).
 */
function forwardJson(rule: OpenAICompatibleUrlRule, call: CallContext, path: string, body: Record<string, unknown>, upstream: Upstream): Promise<PassthroughResponse> {
  return rejectionOf(() => {
    const model = upstream.model ?? String(body.model);
    const headers = headersOf(rule, call, upstream);
    const json = JSON.stringify(translateOpenAIRequest(body, model));
    return headers instanceof Promise ? headers.then((ready) => sendPassthrough(rule, call, path, upstream, ready, json, model)) : sendPassthrough(rule, call, path, upstream, headers, json, model);
  });
}

/** POSTs a multipart form (files intact, model renamed) to the upstream's `{base}{path}`. */
async function forwardMultipart(rule: OpenAICompatibleUrlRule, call: CallContext, path: string, form: FormBody, upstream: Upstream): Promise<PassthroughResponse> {
  const headers = await headersOf(rule, call, upstream);
  // the form's own multipart content type names its boundary; its length is known before it is sent
  headers['content-type'] = form.contentType;
  headers['content-length'] = String(form.length);
  return sendPassthrough(rule, call, path, upstream, headers, form.open(), undefined);
}

/**
 * JSON headers with the rule's credentials in place of the Bearer key (an operator header of the same
 * name gives way): at once for a rule with no credentials of its own to fetch (no promise per call).
 */
function headersOf(rule: OpenAICompatibleUrlRule, call: CallContext, upstream: Upstream): Record<string, string> | Promise<Record<string, string>> {
  if (!rule.auth) return jsonHeaders(upstream);
  const headers = jsonHeaders({ ...upstream, apiKey: undefined });
  return rule.auth(upstream, timeoutOf(upstream, call.limits)).then((auth) => Object.assign(headers, auth));
}

async function sendPassthrough(
  rule: OpenAICompatibleUrlRule,
  call: CallContext,
  path: string,
  upstream: Upstream,
  headers: Record<string, string>,
  body: string | Readable,
  model: string | undefined,
): Promise<PassthroughResponse> {
  const response = await requestUpstream(call, upstream, { provider: upstream.provider, method: 'POST', url: compatibleUrl(rule, upstream, path, model), headers, body });
  const requestId = response.headers['x-request-id'];
  if (response.status < 200 || response.status >= 300) {
    // the upstream's message may quote a credential the fallback rule does not know (a host's token)
    throw (rule.normalizeError ?? normalizeOpenAIError)(response.status, parseJsonBody(response.body), requestId, upstream.provider, retryAfterOf(response.headers)).withoutSecrets(
      credentialsSent(upstream, headers),
    );
  }
  return { status: response.status, contentType: response.headers['content-type'] ?? 'application/json', body: response.body, requestId };
}

/** Opens a streamed (`stream: true`) call; a non-2xx answer is thrown normalized, before any byte is relayed. */
async function openStream(rule: OpenAICompatibleUrlRule, call: CallContext, path: string, body: Record<string, unknown> | FormBody, upstream: Upstream): Promise<OpenedStream> {
  const headers = await headersOf(rule, call, upstream);
  const form = isFormBody(body) ? body : undefined;
  if (form) {
    // the form's own multipart content type names its boundary; its length is known before it is sent
    headers['content-type'] = form.contentType;
    headers['content-length'] = String(form.length);
  }
  headers.accept = 'text/event-stream';
  // identity: each chunk is relayed as it arrives, with no decompression step to buffer it
  headers['accept-encoding'] = 'identity';
  const opened = await call.http.stream({
    provider: upstream.provider,
    method: 'POST',
    url: compatibleUrl(rule, upstream, path, form ? undefined : (upstream.model ?? String((body as Record<string, unknown>).model))),
    headers,
    body: form ? form.open() : jsonBodyOf(body as Record<string, unknown>, upstream),
    timeoutMs: timeoutOf(upstream, call.limits),
    signal: call.signal,
    maxBytes: call.limits.upstreamResponseBytes,
  });
  if (!opened.ok)
    throw (rule.normalizeError ?? normalizeOpenAIError)(opened.status, parseJsonBody(opened.body), opened.headers['x-request-id'], upstream.provider, retryAfterOf(opened.headers)).withoutSecrets(
      credentialsSent(upstream, headers),
    );
  // relayed byte for byte: an error event quoting the credentials sent must not carry them to the caller
  const cut = secretCut(credentialsIn(upstream, headers));
  return cut ? { ...opened, cut } : opened;
}

/** The secret values a request carried: the key, a host's bearer token, the operator's own headers. */
function credentialsSent(upstream: Upstream, headers: Record<string, string>): Array<string | undefined> {
  return [upstream.apiKey, ...secretsOfHeaders(headers)];
}

// the headers whose values are credentials: only these are cut out of a relayed body, where an
// operator header of another kind (a feature flag) may be the stream's own words
const CREDENTIAL_HEADER = /^authorization$|key|token|secret|auth/i;

/** The key and the credential headers' values (a bearer token also without its scheme). */
function credentialsIn(upstream: Upstream, headers: Record<string, string>): Array<string | undefined> {
  return [upstream.apiKey, ...secretsOfHeaders(Object.fromEntries(Object.entries(headers).filter(([name]) => CREDENTIAL_HEADER.test(name))))];
}

function jsonBodyOf(body: Record<string, unknown>, upstream: Upstream): string {
  return JSON.stringify(translateOpenAIRequest(body, upstream.model ?? String(body.model)));
}

function isFormBody(body: Record<string, unknown> | FormBody): body is FormBody {
  return typeof (body as Partial<FormBody>).open === 'function' && typeof (body as Partial<FormBody>).contentType === 'string';
}

/** The URL of an endpoint of the compatible API: the rule's own URLs, or its base rewrite, then its prefix for a bare origin. */
function compatibleUrl(rule: OpenAICompatibleUrlRule, upstream: Upstream, path: string, model: string | undefined): string {
  if (rule.url) return rule.url(upstream, path, model);
  return upstreamUrl(rule.base ? rule.base(upstream.baseURL) : upstream.baseURL, rule.prefix, path);
}

/** The passthrough capability of an OpenAI-compatible API at the rule's URLs. */
export function openAICompatibleApi(rule: OpenAICompatibleUrlRule): PassthroughCapability {
  return {
    prefix: rule.prefix,
    forwardJson: (call, path, body, upstream) => forwardJson(rule, call, path, body, upstream),
    forwardMultipart: (call, path, form, upstream) => forwardMultipart(rule, call, path, form, upstream),
    openStream: (call, path, body, upstream) => openStream(rule, call, path, body, upstream),
  };
}

/** OpenAI itself, and any API that speaks its format at `{base}/v1`. */
export const openaiProvider: Provider = {
  name: 'openai',
  // the GenAI conventions' own value
  genAiName: 'openai',
  models: OPENAI_MODELS,
  passthrough: openAICompatibleApi({ prefix: '/v1' }),
  // OpenAI's image routes stream their own events (upstreams §4.2): relayed as they come
  imageStreams: { kind: 'relay' },
};
