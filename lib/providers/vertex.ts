// Vertex AI adapter (docs/providers/gemini.md "Vertex AI"): the Gemini adapter's bodies, answers, fan-out and
// errors, at Vertex's publisher-model path, with an OAuth2 access token the host's own function gives
// (the host owns its Google credentials; the gateway neither refreshes nor keeps them).
import { GatewayError } from '../errors/gateway-error.js';
import type { Upstream } from '../types.js';
import { jsonHeaders } from './call-context.js';
import { type GoogleImageTransport, generateGoogleImages, modelSegment } from './gemini.js';
import { hostToken } from './host-token.js';
import type { Provider } from './provider.js';
import { upstreamUrl } from './upstream-url.js';

/** `{base}/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent`; `location` defaults to `global`. */
function vertexUrl(upstream: Upstream, model: string): string {
  const project = encodeURIComponent(upstream.project ?? '');
  const location = encodeURIComponent(upstream.location ?? 'global');
  return upstreamUrl(upstream.baseURL, '/v1', `/projects/${project}/locations/${location}/publishers/google/models/${modelSegment(model)}:generateContent`);
}

/**
 * The headers with `Authorization: Bearer <token>` from the upstream's `getAccessToken`. A function
 * that fails, gives no token or none within the upstream's timeout is the operator's problem (502, no call made, so the fallback rule
 * may try the next upstream); neither the token nor the function's error is ever written anywhere.
 */
function vertexHeaders(upstream: Upstream, timeoutMs: number): Promise<Record<string, string>> {
  const { getAccessToken } = upstream;
  const refused = (): GatewayError => GatewayError.fromUpstream({ provider: 'vertex', status: 401, upstreamMessage: 'no access token', kind: 'auth' });
  if (typeof getAccessToken !== 'function') return Promise.reject(refused());
  // bounded by the upstream's deadline, as Azure's token function is (host-token.ts)
  return hostToken(getAccessToken, timeoutMs).then((token) => {
    if (token === undefined) throw refused();
    const headers = jsonHeaders({ ...upstream, apiKey: undefined });
    headers.authorization = `Bearer ${token}`;
    return headers;
  });
}

const VERTEX_TRANSPORT: GoogleImageTransport = { provider: 'vertex', url: vertexUrl, headers: vertexHeaders };

/** Vertex AI: Gemini's image models in the operator's Google Cloud project. */
export const vertexProvider: Provider = {
  name: 'vertex',
  // the OpenTelemetry GenAI conventions' value for Vertex AI
  genAiName: 'gcp.vertex_ai',
  images: { generate: (call, request, upstream) => generateGoogleImages(VERTEX_TRANSPORT, call, request, upstream) },
};
