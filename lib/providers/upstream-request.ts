// One call of an adapter to its upstream: the request's deadline, the client's abort signal and the
// answer's size limit come from the call context (call-context.ts), so an adapter names only what
// its call is (provider, method, URL, headers, body). A JSON body that may hold uploads is encoded
// on the way out with its exact length (images/uploaded-image.ts).
import { encodeJsonWithUploads } from '../images/uploaded-image.js';
import type { UpstreamRequest, UpstreamResponse } from '../transport/upstream-http.js';
import type { Upstream } from '../types.js';
import { type CallContext, timeoutOf } from './call-context.js';

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
