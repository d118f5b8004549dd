// Replicate's predictions API (docs/providers/replicate.md): create a prediction, read it by id until it
// ends, and Replicate's errors as the gateway's. Checked against the official client
// (github.com/replicate/replicate-javascript lib/predictions.js, index.js `wait`, lib/identifier.js):
// `POST /models/{owner}/{name}/predictions` (or `POST /predictions` with a `version`) with
// `{ input }` and `Prefer: wait=N` for a synchronous answer; `GET /predictions/{id}`; statuses
// starting, processing, succeeded, failed, canceled. The URLs a prediction names (`urls.get`) are
// never followed: every read is built from the id on the operator's base (no request to a host the
// upstream chose).
import { clock } from '../../clock.js';
import { vendorId } from '../vendor-ids.js';
import { type QueuedRead, followQueuedWork } from '../submitted-work.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { redactSecrets } from '../../errors/redact.js';
import { encodeJsonWithUploads } from '../../images/uploaded-image.js';
import { isObject, parseJsonBody, stringOr } from '../../json/json-values.js';
import type { UpstreamResponse } from '../../transport/upstream-http.js';
import type { Upstream } from '../../types.js';
import { type CallContext, jsonHeaders, timeoutOf, upstreamUrl } from '../call-context.js';
import { retryAfterOf } from '../retry-after.js';
import { parseModelRef } from './replicate-inputs.js';

const PROVIDER = 'replicate';
/** The client's base is `https://api.replicate.com/v1`: a bare origin gets `/v1`. */
const PREFIX = '/v1';
/** Replicate holds a `Prefer: wait` request at most 60 seconds. */
const MAX_WAIT_SECONDS = 60;
/** Poll delays: from half a second (the client's interval) doubling to 5 s. */
const FIRST_POLL_MS = 500;
const LONGEST_POLL_MS = 5_000;

export type PredictionStatus = 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';

/** A prediction as the gateway reads it; the rest of Replicate's object is not needed. */
export interface Prediction {
  id: string;
  status: PredictionStatus;
  output: unknown;
  error?: string;
  /** `metrics.predict_time` and the like, when Replicate gave them. */
  metrics?: Record<string, unknown>;
}

const STATUSES: ReadonlySet<string> = new Set(['starting', 'processing', 'succeeded', 'failed', 'canceled']);

function isTerminal(status: PredictionStatus): boolean {
  return status === 'succeeded' || status === 'failed' || status === 'canceled';
}

/** A prediction body as the gateway reads it; a 502 when it is not one. */
export function readPrediction(body: unknown): Prediction {
  const id = isObject(body) ? stringOr(body.id) : undefined;
  const status = isObject(body) ? stringOr(body.status) : undefined;
  if (!isObject(body) || !id || !status || !STATUSES.has(status)) throw GatewayError.badUpstreamResponse(PROVIDER, 'the answer is not a prediction (no id or status)');
  const prediction: Prediction = { id: vendorId(PROVIDER, id, 'prediction id'), status: status as PredictionStatus, output: body.output };
  const error = body.error;
  if (typeof error === 'string' && error !== '') prediction.error = error;
  else if (isObject(error) || (error !== null && error !== undefined && error !== '')) prediction.error = JSON.stringify(error);
  if (isObject(body.metrics)) prediction.metrics = body.metrics;
  return prediction;
}

// what Replicate's models say when a safety checker refused the prompt or the output: the cog models'
// "NSFW content detected. Try running it again, or try a different prompt.", FLUX pro's
// "... flagged as sensitive ... (E005)", and "Content moderated"
const SAFETY_FAILURE = /nsfw|flagged as sensitive|\(E005\)|content moderat|safety (?:filter|checker)|sensitive content|content policy/i;

/** A failed or canceled prediction as the caller's error: a safety refusal is a 400 content_policy_violation, anything else a 502. */
export function predictionFailure(prediction: Prediction): GatewayError {
  const message = prediction.error ?? (prediction.status === 'canceled' ? 'the prediction was canceled' : 'the prediction failed');
  const refused = SAFETY_FAILURE.test(message);
  return GatewayError.fromUpstream({
    provider: PROVIDER,
    status: 200,
    upstreamCode: prediction.status,
    upstreamMessage: message,
    requestId: prediction.id,
    kind: refused ? 'content_policy' : 'server',
  });
}

/** What a Replicate input field is called in the caller's request, for the `param` of a 400. */
function callerField(field: string): string {
  const name = field.replace(/^input\./, '');
  if (name === 'aspect_ratio' || name === 'width' || name === 'height') return 'size';
  if (name === 'num_outputs') return 'n';
  if (name === 'image_input' || name === 'input_image' || name === 'image_prompt' || /^image(?:\.|$)/.test(name)) return 'image';
  return name;
}

/**
 * Replicate's error answers, problem details `{ title, detail, status }` (the client reads `detail`):
 * 422 `invalid_fields` (`[{ type, field, description }]`) is a 400 naming the field; 401/403 are the
 * operator's (never the caller's 401); 402 the operator's account; 429 keeps `Retry-After`; the rest
 * by the status policy.
 */
export function normalizeReplicateError(status: number, body: unknown, headers: Record<string, string | undefined> = {}): GatewayError {
  const problem = isObject(body) ? body : {};
  const detail = stringOr(problem.detail) ?? stringOr(problem.error) ?? stringOr(problem.title);
  if (status === 422) {
    const fields = Array.isArray(problem.invalid_fields) ? problem.invalid_fields.filter(isObject) : [];
    const first = fields[0];
    const field = first ? stringOr(first.field) : undefined;
    const said = (first && stringOr(first.description)) ?? detail ?? 'input validation failed';
    const param = field ? callerField(field) : undefined;
    const text = redactSecrets(said).slice(0, 500);
    return GatewayError.invalidRequest(`The upstream rejected the request: ${text} (replicate${field ? ` field ${field.slice(0, 80)}` : ''})`, param);
  }
  const retryAfter = retryAfterOf(headers);
  return GatewayError.fromUpstream({
    provider: PROVIDER,
    status,
    upstreamCode: stringOr(problem.title),
    upstreamMessage: detail,
    requestId: headers['x-request-id'],
    ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
  });
}

function readBody(response: UpstreamResponse): Prediction {
  const body = parseJsonBody(response.body);
  if (response.status < 200 || response.status >= 300) throw normalizeReplicateError(response.status, body, response.headers);
  return readPrediction(body);
}

/** `Prefer: wait=N` within the upstream's deadline (a few seconds kept for the answer), at most Replicate's 60. */
export function waitSecondsFor(timeoutMs: number): number {
  return Math.max(1, Math.min(MAX_WAIT_SECONDS, Math.floor(timeoutMs / 1000) - 5));
}

/** The create URL and body of a model id: the model form, or the version form for `owner/name:version`. */
export function createTarget(baseURL: string, model: string, input: Record<string, unknown>): { url: string; body: Record<string, unknown> } {
  const ref = parseModelRef(model);
  if (!ref) throw GatewayError.badUpstreamResponse(PROVIDER, `the configured model '${model.slice(0, 100)}' is not owner/name or owner/name:version`);
  if (ref.version) return { url: upstreamUrl(baseURL, PREFIX, '/predictions'), body: { version: ref.version, input } };
  return { url: upstreamUrl(baseURL, PREFIX, `/models/${encodeURIComponent(ref.owner)}/${encodeURIComponent(ref.name)}/predictions`), body: { input } };
}

/**
 * Creates one prediction (paid from here). `waitSeconds`: Replicate holds the answer up to that long
 * for the prediction to end; without it the answer comes at once, the prediction still starting.
 */
export function createPrediction(call: CallContext, upstream: Upstream, model: string, input: Record<string, unknown>, waitSeconds?: number): Promise<Prediction> {
  const { url, body } = createTarget(upstream.baseURL, model, input);
  // Replicate calls the gateway back once the prediction ends (its `webhook` and
  // `webhook_events_filter` fields: "completed" only, the one event the gateway acts on)
  if (call.vendorWebhook !== undefined) Object.assign(body, { webhook: call.vendorWebhook, webhook_events_filter: ['completed'] });
  const payload = encodeJsonWithUploads(body);
  const headers = jsonHeaders(upstream);
  headers['content-length'] = String(payload.length);
  if (waitSeconds !== undefined) headers.prefer = `wait=${waitSeconds}`;
  return call.http
    .request({ provider: PROVIDER, method: 'POST', url, headers, body: payload.body, timeoutMs: timeoutOf(upstream, call.limits), signal: call.signal, maxBytes: call.limits.upstreamResponseBytes })
    .then(readBody);
}

/** Replicate's free `GET /models/{owner}/{name}`: the half-open trial (docs/routing-and-health.md "The trial"). */
export function readReplicateModel(call: CallContext, upstream: Upstream, model: string): Promise<void> {
  const ref = parseModelRef(upstream.model ?? model);
  if (!ref) return Promise.reject(GatewayError.badUpstreamResponse(PROVIDER, `the configured model '${model.slice(0, 100)}' is not owner/name or owner/name:version`));
  const url = upstreamUrl(upstream.baseURL, PREFIX, `/models/${encodeURIComponent(ref.owner)}/${encodeURIComponent(ref.name)}`);
  return call.http
    .request({ provider: PROVIDER, method: 'GET', url, headers: jsonHeaders(upstream), timeoutMs: timeoutOf(upstream, call.limits), signal: call.signal, maxBytes: call.limits.upstreamResponseBytes })
    .then((response) => {
      if (response.status < 200 || response.status >= 300) throw normalizeReplicateError(response.status, parseJsonBody(response.body), response.headers).withoutSecrets([upstream.apiKey]);
    });
}

/** `GET /predictions/{id}` as it was answered: the id is encoded, the URL built on the operator's base. */
function fetchPrediction(call: CallContext, upstream: Upstream, id: string, timeoutMs = timeoutOf(upstream, call.limits)): Promise<UpstreamResponse> {
  return call.http.request({
    provider: PROVIDER,
    method: 'GET',
    url: upstreamUrl(upstream.baseURL, PREFIX, `/predictions/${vendorId(PROVIDER, id, 'prediction id')}`),
    headers: jsonHeaders(upstream),
    timeoutMs,
    signal: call.signal,
    maxBytes: call.limits.upstreamResponseBytes,
  });
}

/** `GET /predictions/{id}` of a prediction the gateway created: undefined when Replicate no longer knows it (404). */
export function findPrediction(call: CallContext, upstream: Upstream, id: string, timeoutMs?: number): Promise<Prediction | undefined> {
  return fetchPrediction(call, upstream, id, timeoutMs).then((response) => (response.status === 404 ? undefined : readBody(response)));
}

/** `POST /predictions/{id}/cancel`, best effort: a prediction nobody will read stops costing. */
export function cancelPrediction(call: CallContext, upstream: Upstream, id: string): void {
  call.http
    .request({
      provider: PROVIDER,
      method: 'POST',
      url: upstreamUrl(upstream.baseURL, PREFIX, `/predictions/${encodeURIComponent(id)}/cancel`),
      headers: jsonHeaders(upstream),
      timeoutMs: Math.min(10_000, timeoutOf(upstream, call.limits)),
      maxBytes: 64 * 1024,
    })
    .catch(() => undefined);
}

/**
 * Reads a prediction by id until it ends, by the one rule of queued work (submitted-work.ts
 * `followQueuedWork`: within the call's bound from `startedAt`; canceled when the wait stops first; a
 * prediction Replicate answers 404 for ends the wait at once). A failed read is read again, never
 * created again (a new prediction is paid twice).
 */
export function awaitPrediction(call: CallContext, upstream: Upstream, created: Prediction, startedAt: number = clock().now()): Promise<Prediction> {
  if (isTerminal(created.status)) return Promise.resolve(created);
  return followQueuedWork(
    call,
    upstream,
    {
      provider: PROVIDER,
      id: created.id,
      read: (timeoutMs) =>
        findPrediction(call, upstream, created.id, timeoutMs).then((prediction): QueuedRead<Prediction> => {
          if (!prediction) return { state: 'gone' };
          return isTerminal(prediction.status) ? { state: 'ended', end: prediction } : { state: 'running' };
        }),
      cancel: () => cancelPrediction(call, upstream, created.id),
      pace: { firstMs: FIRST_POLL_MS, longestMs: LONGEST_POLL_MS, growth: 2 },
    },
    startedAt,
  );
}

/** The output URLs of a succeeded prediction: one URL, or a list of them (per model). */
export function outputUrls(output: unknown): string[] {
  const items = Array.isArray(output) ? output : [output];
  return items.filter((item): item is string => typeof item === 'string' && /^(?:https?:|data:)/i.test(item));
}
