// fal's queue API (docs/providers/fal.md "The queue"), as @fal-ai/client speaks it
// (libs/client/src/queue.ts, utils.ts): `POST {base}/{endpoint_id}` submits (paid from here) and answers
// `{ request_id, status_url, response_url, cancel_url }`; `GET {base}/{owner}/{alias}/requests/{id}/status`
// answers IN_QUEUE, IN_PROGRESS or COMPLETED; `GET {base}/{owner}/{alias}/requests/{id}` the result. The
// status and result URLs name only the app id (owner/alias), not the endpoint's sub-path, and are built
// here as the SDK builds them: URLs in fal's answers are never followed (another host would be SSRF).
import { clock } from '../../clock.js';
import { vendorId } from '../vendor-ids.js';
import { type QueuedRead, asStartedWork, followQueuedWork } from '../submitted-work.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { isObject, parseJsonBody, stringOr } from '../../json/json-values.js';
import type { EncodedJson } from '../../images/uploaded-image.js';
import type { UpstreamResponse } from '../../transport/upstream-http.js';
import type { Upstream } from '../../types.js';
import { type CallContext, jsonHeaders, timeoutOf } from '../call-context.js';
import { normalizeFalError } from './fal-errors.js';

// @fal-ai/client utils.ts: ids under these namespaces have one more leading segment
const NAMESPACES: ReadonlySet<string> = new Set(['workflows', 'comfy']);
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The first poll waits this long; each next one half as long again, up to POLL_MAX_MS. */
const POLL_FIRST_MS = 500;
const POLL_MAX_MS = 2000;

/**
 * An endpoint id's segments, checked: `owner/alias[/path...]` (`workflows/owner/alias/...` too), each
 * segment plain text, so configuration cannot reshape a URL. A bad id is the operator's mistake.
 */
function endpointSegments(endpointId: string): string[] {
  const segments = endpointId.split('/');
  const least = NAMESPACES.has(segments[0] ?? '') ? 3 : 2;
  if (segments.length < least || !segments.every((segment) => SEGMENT.test(segment) && !/^\.+$/.test(segment))) {
    throw GatewayError.badUpstreamResponse('fal', `the configured model '${endpointId}' is not a fal endpoint id (owner/alias[/path])`);
  }
  return segments;
}

/** The app id of an endpoint id (parseEndpointId): `owner/alias`, the path the status and result URLs use. */
export function appIdOf(endpointId: string): string {
  const segments = endpointSegments(endpointId);
  return segments.slice(0, NAMESPACES.has(segments[0]!) ? 3 : 2).join('/');
}

function isAppId(app: string): boolean {
  try {
    return appIdOf(app) === app;
  } catch {
    return false;
  }
}

/** `{base}/{path}`: the base is the bare queue origin (`https://queue.fal.run`), or one with a path prefix. */
function falUrl(upstream: Upstream, path: string): string {
  return `${upstream.baseURL.replace(/\/+$/, '')}/${path}`;
}

/** The status URL of a request (queue.ts `status`). */
function statusUrl(upstream: Upstream, appId: string, requestId: string): string {
  return falUrl(upstream, `${appId}/requests/${vendorId('fal', requestId, 'request_id')}/status`);
}

/** The result URL of a request (queue.ts `result`). */
function resultUrl(upstream: Upstream, appId: string, requestId: string): string {
  return falUrl(upstream, `${appId}/requests/${vendorId('fal', requestId, 'request_id')}`);
}

/** The cancel URL of a request (queue.ts `cancel`, a PUT). */
function cancelUrl(upstream: Upstream, appId: string, requestId: string): string {
  return `${resultUrl(upstream, appId, requestId)}/cancel`;
}

/**
 * Cancels a request nobody will read (the caller left, or the deadline passed), best effort, as fal's
 * own client does when it stops waiting: a request still IN_QUEUE is then never run nor billed.
 */
export function cancelFal(call: CallContext, upstream: Upstream, appId: string, requestId: string): void {
  call.http
    .request({
      provider: 'fal',
      method: 'PUT',
      url: cancelUrl(upstream, appId, requestId),
      headers: falHeaders(upstream),
      timeoutMs: Math.min(10_000, timeoutOf(upstream, call.limits)),
      maxBytes: 64 * 1024,
    })
    .catch(() => undefined);
}

/** The key as fal takes it: `Authorization: Key <key>` (@fal-ai/client config.ts credentials), never a bearer. */
function falHeaders(upstream: Upstream): Record<string, string> {
  const headers = jsonHeaders({ ...upstream, apiKey: undefined });
  if (upstream.apiKey) headers.authorization = `Key ${upstream.apiKey}`;
  return headers;
}

/** The JSON of a 2xx answer; a failed answer as the gateway's error. */
function readFalBody(response: UpstreamResponse): unknown {
  const body = parseJsonBody(response.body);
  if (response.status < 200 || response.status >= 300) throw normalizeFalError(response.status, body, response.headers);
  if (body === undefined) throw GatewayError.badUpstreamResponse('fal', 'the body is not JSON', response.headers['x-fal-request-id']);
  return body;
}

/**
 * The submit URL, with `fal_webhook` when fal is asked to call the gateway back once the request is
 * done (docs.fal.ai "Webhooks": a query parameter of the queue submit).
 */
export function submitUrl(url: string, webhook: string | undefined): string {
  return webhook === undefined ? url : `${url}?${new URLSearchParams({ fal_webhook: webhook }).toString()}`;
}

/** Submits the input to the endpoint's queue (paid from here); answers fal's request id. */
export async function submitFal(call: CallContext, upstream: Upstream, endpointId: string, input: EncodedJson): Promise<string> {
  const headers = falHeaders(upstream);
  headers['content-length'] = String(input.length);
  const response = await call.http.request({
    provider: 'fal',
    method: 'POST',
    url: submitUrl(falUrl(upstream, endpointSegments(endpointId).join('/')), call.vendorWebhook),
    headers,
    body: input.body,
    timeoutMs: timeoutOf(upstream, call.limits),
    signal: call.signal,
    maxBytes: call.limits.upstreamResponseBytes,
  });
  const body = readFalBody(response);
  const id = isObject(body) ? stringOr(body.request_id) : undefined;
  if (!id) throw GatewayError.badUpstreamResponse('fal', 'the submit answered no request_id', response.headers['x-fal-request-id']);
  return vendorId('fal', id, 'request_id', response.headers['x-fal-request-id']);
}

/** A request's queue state: waiting, running, or done (a failure fal reports on the status itself as `error`). */
export type FalQueueState = { status: 'IN_QUEUE' } | { status: 'IN_PROGRESS' } | { status: 'COMPLETED'; error?: GatewayError } | { status: 'UNKNOWN' };

/** A status answer as the gateway reads it; an unknown status is one more poll. */
export function readFalStatus(body: unknown, requestId?: string): FalQueueState {
  const status = isObject(body) ? stringOr(body.status) : undefined;
  if (status === 'IN_QUEUE') return { status };
  if (status !== 'COMPLETED') return { status: 'IN_PROGRESS' };
  const said = isObject(body) ? stringOr(body.error) : undefined;
  if (!said) return { status: 'COMPLETED' };
  const type = isObject(body) ? stringOr(body.error_type) : undefined;
  // a failed request: fal names the kind in `error_type` where it has one
  return { status: 'COMPLETED', error: normalizeFalError(type && /content_policy|nsfw|moderation/i.test(type) ? 422 : 500, { detail: said, error_type: type }, { 'x-fal-request-id': requestId }) };
}

/** One status read; a request fal does not know (404: never made, or past its retention) is UNKNOWN. */
export async function falStatus(call: CallContext, upstream: Upstream, appId: string, requestId: string, timeoutMs = timeoutOf(upstream, call.limits)): Promise<FalQueueState> {
  const response = await call.http.request({
    provider: 'fal',
    method: 'GET',
    url: statusUrl(upstream, appId, requestId),
    headers: falHeaders(upstream),
    timeoutMs,
    signal: call.signal,
    maxBytes: call.limits.upstreamResponseBytes,
  });
  if (response.status === 404) return { status: 'UNKNOWN' };
  return readFalStatus(readFalBody(response), requestId);
}

/** The result of a completed request: fal's output JSON (an error status is its failure). */
export async function falResult(call: CallContext, upstream: Upstream, appId: string, requestId: string): Promise<unknown> {
  const response = await call.http.request({
    provider: 'fal',
    method: 'GET',
    url: resultUrl(upstream, appId, requestId),
    headers: falHeaders(upstream),
    timeoutMs: timeoutOf(upstream, call.limits),
    signal: call.signal,
    maxBytes: call.limits.upstreamResponseBytes,
  });
  return readFalBody(response);
}

/**
 * Polls a submitted request until it completes, then reads its result, by the one rule of queued work
 * (submitted-work.ts `followQueuedWork`: within the call's bound from `startedAt`, before the submit;
 * cancelled at fal when the wait stops first; a request fal no longer knows ends the wait at once). A
 * failed poll is polled again, never submitted again (the work is paid).
 */
export async function awaitFalResult(call: CallContext, upstream: Upstream, appId: string, requestId: string, startedAt = clock().now()): Promise<unknown> {
  const state = await followQueuedWork(
    call,
    upstream,
    {
      provider: 'fal',
      id: requestId,
      read: (timeoutMs) =>
        falStatus(call, upstream, appId, requestId, timeoutMs).then((read): QueuedRead<FalQueueState> => {
          if (read.status === 'UNKNOWN') return { state: 'gone' };
          return read.status === 'COMPLETED' ? { state: 'ended', end: read } : { state: 'running' };
        }),
      cancel: () => cancelFal(call, upstream, appId, requestId),
      pace: { firstMs: POLL_FIRST_MS, longestMs: POLL_MAX_MS, growth: 1.5 },
    },
    startedAt,
  );
  // completed: a failure fal reported, or the result (nothing is left to cancel)
  return (state.status === 'COMPLETED' && state.error ? Promise.reject(state.error) : falResult(call, upstream, appId, requestId)).catch((error: unknown) => {
    throw asStartedWork(error);
  });
}

/** What a stored task id holds: the app id the status URL needs, fal's request id, and what a video task asked. */
export interface FalTaskRef {
  app: string;
  request: string;
  seconds?: number;
  resolution?: string;
}

/** The stored task id: a query string, so a later read (any instance, after a restart) needs nothing else. */
export function encodeFalTaskId(ref: FalTaskRef): string {
  const params = new URLSearchParams({ app: ref.app, request: ref.request });
  if (ref.seconds !== undefined) params.set('seconds', String(ref.seconds));
  if (ref.resolution !== undefined) params.set('resolution', ref.resolution);
  return params.toString();
}

/** A stored task id read back; an id this adapter did not write is a 404 (the gateway cannot follow it). */
export function decodeFalTaskId(taskId: string): FalTaskRef {
  const params = new URLSearchParams(taskId);
  const app = params.get('app') ?? '';
  const request = params.get('request') ?? '';
  if (!request || !isAppId(app)) throw GatewayError.notFound('The task is not a fal request the gateway can follow.');
  const ref: FalTaskRef = { app, request };
  const seconds = Number(params.get('seconds'));
  if (params.has('seconds') && Number.isFinite(seconds)) ref.seconds = seconds;
  const resolution = params.get('resolution');
  if (resolution) ref.resolution = resolution;
  return ref;
}
