// OpenAI-compatible adapter (upstreams §4): OpenAI itself, and the family of OpenAI-compatible APIs
// other providers offer (DashScope compatible-mode, Ark /api/v3), each of which builds its passthrough
// capability with openAICompatibleApi() and its own URL rule (and Azure OpenAI, whose rule also names
// its URLs, credentials and error reading: azure.ts). Requests go through unchanged but for
// the model name and the tenant identifier in the field each vendor documents (tenant-field.ts);
// answers come back as the upstream sent them; errors are normalized.
import { retryAfterOf } from '../retry-after.js';
import type { Readable } from 'node:stream';
import { GatewayError } from '../../errors/gateway-error.js';
import { rejectionOf } from '../../errors/rejection-of.js';
import type { FormBody } from '../../transport/form-body.js';
import type { Upstream } from '../../types.js';
import { isObject, parseJsonBody, stringOr } from '../../json/json-values.js';
import { type CallContext, jsonHeaders, secretsOfHeaders, timeoutOf, requestUpstream, upstreamUrl } from '../call-context.js';
import { classifyUpstreamCode } from '../../errors/status-policy.js';
import type { OpenedStream, PassthroughCapability, PassthroughResponse, Provider } from '../provider.js';
import { secretCut } from '../../transport/secret-free-body.js';
import { OPENAI_MODELS } from './openai-models.js';
import { TENANT_FIELDS, type TenantField, withTenantField } from '../tenant-field.js';
import type { UpstreamRequest, UpstreamResponse, UpstreamStream } from '../../transport/upstream-http.js';

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
  /**
   * The body field the vendor documents for the tenant identifier on an endpoint (`path`), or
   * undefined where it documents none: nothing is sent there (docs/security.md "Tenant identifier
   * sent to vendors"). Without it, no endpoint of the API gets one.
   */
  tenantField?: (path: string) => TenantField | undefined;
}

/**
 * OpenAI's fields, as the `openai` SDK types them: `safety_identifier` on chat completions and
 * responses (it replaced `user` there), `user` on the image endpoints (which have no
 * `safety_identifier`); none elsewhere.
 */
export function openAITenantField(path: string): TenantField | undefined {
  if (path === '/chat/completions' || path === '/responses') return 'safety_identifier';
  if (path === '/images/generations' || path === '/images/edits') return 'user';
  return undefined;
}

// what an upstream's 400 says of a parameter it does not take (OpenAI: "Unrecognized request argument
// supplied", pydantic servers: "Extra inputs are not permitted", others: unknown / unsupported)
const UNKNOWN_PARAMETER = /unrecogni[sz]ed|unknown|unsupported|not supported|not permitted|not allowed|extra (?:inputs|fields)|additional propert|unexpected|invalid (?:field|param)/i;

/**
 * A 400 that refuses `safety_identifier` as a parameter it does not take (an older Azure API
 * version, an OpenAI-compatible server): refused before any work, so the call may be made again
 * with `user`. Its `param` names the field, or its message names it as unknown.
 */
export function refusesSafetyIdentifier(status: number, body: unknown): boolean {
  if (status !== 400 || !isObject(body)) return false;
  const error = isObject(body.error) ? body.error : body;
  if (error.param === 'safety_identifier') return true;
  const message = stringOr(error.message) ?? (typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail ?? ''));
  return message.includes('safety_identifier') && UNKNOWN_PARAMETER.test(message);
}

/** The field this call carries: `user` in place of `safety_identifier` for an upstream that refused it before. */
function tenantFieldOf(rule: OpenAICompatibleUrlRule, call: CallContext, path: string, upstream: Upstream, model: string | undefined): TenantField | undefined {
  if (!call.safety) return undefined;
  const field = rule.tenantField?.(path);
  return field === 'safety_identifier' && call.safety.userFieldUpstreams.has(upstreamKey(upstream, path, model)) ? 'user' : field;
}

/** An upstream as remembered for its field: the model or the API version may be what refuses it. */
function upstreamKey(upstream: Upstream, path: string, model: string | undefined): string {
  return [upstream.provider, upstream.baseURL, upstream.apiVersion ?? '', upstream.deployment ?? '', path, model ?? ''].join('\n');
}

/**
 * Sends a JSON body with the tenant field of this call; when the upstream refuses `safety_identifier`
 * with a 400 (no work started), remembers that it takes `user` and sends it once more with `user`.
 */
async function withFieldFallback<T>(
  call: CallContext,
  field: TenantField | undefined,
  key: () => string,
  send: (field: TenantField | undefined) => Promise<T>,
  refused: (answer: T) => boolean,
): Promise<T> {
  const answer = await send(field);
  if (field !== 'safety_identifier' || !call.safety || !refused(answer)) return answer;
  call.safety.userFieldUpstreams.add(key());
  return send('user');
}

/**
 * The caller's body with the model name the resolver chose; nothing else changes. The body itself
 * when its model already is that name: no copy per request (docs/architecture.md "Performance").
 */
export function translateOpenAIRequest(body: Record<string, unknown>, upstreamModel: string): Record<string, unknown> {
  return body.model === upstreamModel ? body : { ...body, model: upstreamModel };
}

/** upstreams §4.5 `{ error: { message, type, param, code } }` (Ark uses the same envelope, §2.8). */
export function normalizeOpenAIError(status: number, body: unknown, headerRequestId?: string, provider = 'openai', retryAfterSeconds?: number | 'unreadable'): GatewayError {
  const error = isObject(body) && isObject(body.error) ? body.error : undefined;
  const code = error ? (stringOr(error.code) ?? stringOr(error.type)) : undefined;
  // the field the upstream blamed is kept, not dropped (docs/errors.md); Ark sends "" for none
  const param = error ? stringOr(error.param) : undefined;
  return GatewayError.fromUpstream({
    provider,
    status,
    upstreamCode: code,
    ...(param ? { param } : {}),
    upstreamMessage: error ? stringOr(error.message) : isObject(body) ? stringOr(body.message) : undefined,
    requestId: headerRequestId,
    kind: classifyUpstreamCode(code),
    retryAfterSeconds,
  });
}

/** POSTs a JSON body to the upstream's `{base}{path}` and returns its 2xx answer untouched. */
function forwardJson(rule: OpenAICompatibleUrlRule, call: CallContext, path: string, body: Record<string, unknown>, upstream: Upstream): Promise<PassthroughResponse> {
  const model = upstream.model ?? String(body.model);
  // headers at hand and no tenant field to place: one call, no async frame (docs/architecture.md "Performance")
  if (!rule.auth && !call.safety) {
    // a rule's URL that cannot be built fails the call as the async path does, never synchronously
    return rejectionOf(() => {
      const headers = jsonHeaders(upstream);
      const sent = JSON.stringify(translateOpenAIRequest(body, model));
      return postPassthrough(rule, call, path, upstream, headers, sent, model).then((response) => passthroughAnswer(rule, upstream, headers, response));
    });
  }
  return forwardJsonWithFields(rule, call, path, body, upstream, model);
}

/** forwardJson with the rule's own credentials fetched, or the tenant field placed (and moved to `user` when refused). */
async function forwardJsonWithFields(rule: OpenAICompatibleUrlRule, call: CallContext, path: string, body: Record<string, unknown>, upstream: Upstream, model: string): Promise<PassthroughResponse> {
  const headers = await headersOf(rule, call, upstream);
  const translated = translateOpenAIRequest(body, model);
  const response = await withFieldFallback(
    call,
    tenantFieldOf(rule, call, path, upstream, model),
    () => upstreamKey(upstream, path, model),
    (field) => postPassthrough(rule, call, path, upstream, headers, JSON.stringify(withTenantField(translated, call.safety, field)), model),
    (answer) => refusesSafetyIdentifier(answer.status, parseJsonBody(answer.body)),
  );
  return passthroughAnswer(rule, upstream, headers, response);
}

/** POSTs a multipart form (files intact, model renamed) to the upstream's `{base}{path}`. */
async function forwardMultipart(rule: OpenAICompatibleUrlRule, call: CallContext, path: string, form: FormBody, upstream: Upstream): Promise<PassthroughResponse> {
  const headers = await headersOf(rule, call, upstream);
  const sent = formWithTenantField(form, call, rule.tenantField?.(path));
  // the form's own multipart content type names its boundary; its length is known before it is sent
  headers['content-type'] = sent.contentType;
  headers['content-length'] = String(sent.length);
  return passthroughAnswer(rule, upstream, headers, await postPassthrough(rule, call, path, upstream, headers, sent.open(), undefined));
}

/** The form with the gateway's identifier in the vendor's field and no caller-sent one; as it came when the option is off. */
function formWithTenantField(form: FormBody, call: CallContext, field: TenantField | undefined): FormBody {
  if (!call.safety) return form;
  return form.withTextFields(TENANT_FIELDS, field ? [{ name: field, value: call.safety.identifier }] : []);
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

function postPassthrough(
  rule: OpenAICompatibleUrlRule,
  call: CallContext,
  path: string,
  upstream: Upstream,
  headers: Record<string, string>,
  body: string | Readable,
  model: string | undefined,
): Promise<UpstreamResponse> {
  return requestUpstream(call, upstream, { provider: upstream.provider, method: 'POST', url: compatibleUrl(rule, upstream, path, model), headers, body });
}

/** The 2xx answer as it came; any other status thrown normalized. */
function passthroughAnswer(rule: OpenAICompatibleUrlRule, upstream: Upstream, headers: Record<string, string>, response: UpstreamResponse): PassthroughResponse {
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
function openStream(rule: OpenAICompatibleUrlRule, call: CallContext, path: string, body: Record<string, unknown> | FormBody, upstream: Upstream): Promise<OpenedStream> {
  // a JSON stream with its headers at hand and no tenant field to place: the call's promise is the
  // stream's, with no async frames between the upstream's answer and the relay (docs/architecture.md "Performance")
  if (!rule.auth && !call.safety && !isFormBody(body)) {
    return rejectionOf(() => {
      const headers = streamHeaders(jsonHeaders(upstream));
      const model = upstream.model ?? String(body.model);
      const sent = JSON.stringify(translateOpenAIRequest(body, model));
      return call.http.stream(streamCall(rule, call, path, upstream, model, headers, sent)).then((opened) => openedStream(rule, upstream, headers, opened));
    });
  }
  return openStreamWithFields(rule, call, path, body, upstream);
}

/** openStream with the rule's own credentials fetched, a form, or the tenant field placed (and moved to `user` when refused). */
async function openStreamWithFields(rule: OpenAICompatibleUrlRule, call: CallContext, path: string, body: Record<string, unknown> | FormBody, upstream: Upstream): Promise<OpenedStream> {
  const headers = streamHeaders(await headersOf(rule, call, upstream));
  const form = isFormBody(body) ? formWithTenantField(body, call, rule.tenantField?.(path)) : undefined;
  if (form) {
    // the form's own multipart content type names its boundary; its length is known before it is sent
    headers['content-type'] = form.contentType;
    headers['content-length'] = String(form.length);
  }
  const model = form ? undefined : (upstream.model ?? String((body as Record<string, unknown>).model));
  const translated = form ? undefined : translateOpenAIRequest(body as Record<string, unknown>, model!);
  const opened = await withFieldFallback(
    call,
    form ? undefined : tenantFieldOf(rule, call, path, upstream, model),
    () => upstreamKey(upstream, path, model),
    (field) => call.http.stream(streamCall(rule, call, path, upstream, model, headers, form ? form.open() : JSON.stringify(withTenantField(translated!, call.safety, field)))),
    (answer) => !answer.ok && refusesSafetyIdentifier(answer.status, parseJsonBody(answer.body)),
  );
  return openedStream(rule, upstream, headers, opened);
}

/** The headers of a streamed call: an event stream, in identity coding, so each chunk is relayed as it arrives with no decompression step to buffer it. */
function streamHeaders(headers: Record<string, string>): Record<string, string> {
  headers.accept = 'text/event-stream';
  headers['accept-encoding'] = 'identity';
  return headers;
}

function streamCall(
  rule: OpenAICompatibleUrlRule,
  call: CallContext,
  path: string,
  upstream: Upstream,
  model: string | undefined,
  headers: Record<string, string>,
  body: string | Readable,
): UpstreamRequest {
  return {
    provider: upstream.provider,
    method: 'POST',
    url: compatibleUrl(rule, upstream, path, model),
    headers,
    body,
    timeoutMs: timeoutOf(upstream, call.limits),
    signal: call.signal,
    maxBytes: call.limits.upstreamResponseBytes,
  };
}

/** A 2xx stream with the credentials sent cut from its chunks; any other answer thrown normalized, before any byte is relayed. */
function openedStream(rule: OpenAICompatibleUrlRule, upstream: Upstream, headers: Record<string, string>, opened: UpstreamStream): OpenedStream {
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

/** OpenAI's free `GET {base}/models`: the half-open trial (docs/routing-and-health.md "The trial"). */
function readModelList(call: CallContext, upstream: Upstream): Promise<void> {
  return requestUpstream(call, upstream, { provider: upstream.provider, method: 'GET', url: upstreamUrl(upstream.baseURL, '/v1', '/models'), headers: jsonHeaders(upstream) }).then((response) => {
    if (response.status < 200 || response.status >= 300)
      throw normalizeOpenAIError(response.status, parseJsonBody(response.body), response.headers['x-request-id'], upstream.provider, retryAfterOf(response.headers)).withoutSecrets([upstream.apiKey]);
  });
}

/** OpenAI itself, and any API that speaks its format at `{base}/v1`. */
export const openaiProvider: Provider = {
  name: 'openai',
  // the GenAI conventions' own value
  genAiName: 'openai',
  models: OPENAI_MODELS,
  passthrough: openAICompatibleApi({ prefix: '/v1', tenantField: openAITenantField }),
  // OpenAI's image routes stream their own events (upstreams §4.2): relayed as they come
  imageStreams: { kind: 'relay' },
  healthRead: readModelList,
};
