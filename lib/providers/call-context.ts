// What an adapter needs to make its upstream call: the shared HTTP module, the client's abort
// signal, the limits and the caller's tenant identifier. Built once per request by the route.
import type { CancelSignal, UpstreamHttp } from '../transport/upstream-http.js';
import type { Upstream, VendorAttempt } from '../types.js';
import type { GatewayLimits } from '../options/request-limits.js';
import type { SafetyTag } from '../security/safety-identifier.js';

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
