// One call of an adapter to its upstream. The call context is what an adapter needs to make it: the
// shared HTTP module, the client's abort signal, the limits and the caller's tenant identifier, built
// once per request by the route; the request's deadline and the answer's size limit come from it, so
// an adapter names only what its call is (provider, method, URL, headers, body). A JSON body that may
// hold uploads is encoded on the way out with its exact length (images/uploaded-image.ts). URLs join
// the upstream's baseURL with a fixed adapter path: each vendor SDK's base carries its version prefix
// and a bare origin gets the prefix added, so both `https://dashscope-intl.aliyuncs.com` and
// `https://dashscope-intl.aliyuncs.com/api/v1` work; caller input never shapes the URL.
import type { CancelSignal, UpstreamHttp, UpstreamRequest, UpstreamResponse } from '../transport/upstream-http.js';
import type { Upstream, VendorAttempt } from '../types.js';
import type { GatewayLimits } from '../options/request-limits.js';
import type { SafetyTag } from '../security/safety-identifier.js';
import { encodeJsonWithUploads } from '../images/uploaded-image.js';

export interface CallContext {
  http: UpstreamHttp;
  /** Aborted when the client disconnects (an AbortSignal, or a route's cheaper client-gone watch). */
  signal: CancelSignal;
  limits: Readonly<GatewayLimits>;
  /**
   * A provider that makes several vendor calls for one request (n images as n calls) records each
   * here, with its outcome, for the vendor's bill (gateway/ledger/vendor-work.ts): one that failed
   * beside ones that answered may still have been paid.
   */
  vendorCalls?: VendorAttempt[];
  /**
   * The caller's opaque identifier for the vendors' abuse reports, when the `tenancy.safetyIdentifier` option
   * is on: each adapter puts it in the field its vendor documents, or sends nothing
   * (docs/security.md "Tenant identifier sent to vendors").
   */
  safety?: SafetyTag;
  /**
   * On a task's submit, the URL the vendor is asked to call when the task ends (`vendorWebhooks`,
   * docs/video-tasks-and-callbacks.md "Vendor webhooks"): each adapter whose vendor calls back puts it
   * where its vendor documents it. Absent: the vendor is not asked, and the task is only polled.
   */
  vendorWebhook?: string;
}

/** Authorization and JSON headers, after the operator's own headers (which may not replace them). */
export function jsonHeaders(upstream: Upstream): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(upstream.headers ?? {})) {
    const lower = name.toLowerCase();
    if (lower === 'content-type' || lower === 'content-length' || (lower === 'authorization' && upstream.apiKey)) continue;
    headers[lower] = value;
  }
  headers['content-type'] = 'application/json';
  headers.accept ??= 'application/json';
  if (upstream.apiKey) headers.authorization = `Bearer ${upstream.apiKey}`;
  return headers;
}

export function timeoutOf(upstream: Upstream, limits: Readonly<GatewayLimits>): number {
  return upstream.timeoutMs ?? limits.upstreamTimeoutMs;
}

/**
 * The secret values among request headers: a bearer token (without its scheme) and every other
 * header's value, the operator's own ones included. An upstream's error may quote them; they are cut
 * out of what the caller is told (GatewayError.withoutSecrets keeps only the long ones).
 */
export function secretsOfHeaders(headers: Readonly<Record<string, string>>): string[] {
  return Object.entries(headers).flatMap(([name, value]) => {
    if (name === 'content-type' || name === 'content-length' || name === 'accept' || name === 'accept-encoding') return [];
    const bearer = name === 'authorization' ? /^Bearer\s+(.+)$/i.exec(value)?.[1] : undefined;
    return bearer ? [bearer, value] : [value];
  });
}

export function upstreamUrl(baseURL: string, versionPrefix: string, path: string): string {
  const base = baseURL.replace(/\/+$/, '');
  // after the scheme's '//', any further '/' means the base already names its path
  const hasPath = base.indexOf('/', base.indexOf('//') + 2) !== -1;
  return `${hasPath ? base : base + versionPrefix}${path}`;
}

/** What an adapter says of its call; `maxBytes` only where its answers have a limit of their own. */
type AdapterRequest = Omit<UpstreamRequest, 'timeoutMs' | 'signal' | 'maxBytes'> & { maxBytes?: number };

/** The call, within the upstream's deadline (or the gateway's), cancelled when the client goes. */
export function requestUpstream(call: CallContext, upstream: Upstream, request: AdapterRequest): Promise<UpstreamResponse> {
  return call.http.request({ timeoutMs: timeoutOf(upstream, call.limits), signal: call.signal, maxBytes: call.limits.upstreamResponseBytes, ...request });
}

/**
 * A JSON POST: uploaded files are encoded into the JSON as it is sent, not built into one string
 * first. `content-length` is added to the given headers, not spread into a new literal: a spread then
 * an added key gave every request's headers a hidden class of its own once optimized, kept for the
 * whole upstream wait (docs/architecture.md "Performance": heap diff of held requests).
 */
export function postJsonUpstream(call: CallContext, upstream: Upstream, request: { provider: string; url: string; headers: Record<string, string>; json: unknown }): Promise<UpstreamResponse> {
  const payload = encodeJsonWithUploads(request.json);
  const headers = request.headers;
  headers['content-length'] = String(payload.length);
  return requestUpstream(call, upstream, { provider: request.provider, method: 'POST', url: request.url, headers, body: payload.body });
}
