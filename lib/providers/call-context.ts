// What an adapter needs to make its upstream call: the shared HTTP module, the client's abort
// signal and the limits. Built once per request by the route.
import type { UpstreamHttp } from '../transport/upstream-http.js';
import type { GatewayLimits, Upstream } from '../types.js';

export interface CallContext {
  http: UpstreamHttp;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
  limits: Readonly<GatewayLimits>;
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

/** JSON.parse that answers undefined for a body that is not JSON (the caller decides what that means). */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
