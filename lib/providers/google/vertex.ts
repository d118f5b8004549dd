// Vertex AI adapter (docs/providers/gemini.md "Vertex AI"): the Gemini adapter's bodies, answers, fan-out and
// errors, at Vertex's publisher-model path, with an OAuth2 access token the host's own function gives
// (the host owns its Google credentials; the gateway neither refreshes nor keeps them).
import { GatewayError } from '../../errors/gateway-error.js';
import type { Upstream } from '../../types.js';
import { jsonHeaders, upstreamUrl } from '../call-context.js';
import { type GoogleImageTransport, generateGoogleImages, modelSegment } from './gemini.js';
import { type GoogleVideoTransport, googleVideoTasks } from './google-video.js';
import { hostToken } from '../host-token.js';
import type { Provider } from '../provider.js';

/** `{base}/projects/{project}/locations/{location}/publishers/google/models/{model}`. */
function vertexModelPath(upstream: Upstream, model: string): string {
  const project = encodeURIComponent(upstream.project ?? '');
  const location = encodeURIComponent(upstream.location ?? 'global');
  return `/projects/${project}/locations/${location}/publishers/google/models/${modelSegment(model)}`;
}

/** `{base}/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent`; `location` defaults to `global`. */
function vertexUrl(upstream: Upstream, model: string): string {
  return upstreamUrl(upstream.baseURL, '/v1', `${vertexModelPath(upstream, model)}:generateContent`);
}

/**
 * The headers with `Authorization: Bearer <token>` from the upstream's `getAccessToken`. A function
 * that fails, gives no token or none within the upstream's timeout is the operator's problem (502, no call made, so the fallback rule
 * may try the next upstream); neither the token nor the function's error is ever written anywhere.
 */
// the attempt's deadline when a caller does not give one (a video task's create and reads)
const DEFAULT_TOKEN_DEADLINE_MS = 60_000;

function vertexHeaders(upstream: Upstream, timeoutMs = upstream.timeoutMs ?? DEFAULT_TOKEN_DEADLINE_MS): Promise<Record<string, string>> {
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

/**
 * Veo on Vertex AI: `{model}:predictLongRunning`, and the operation read as `POST {model}:fetchPredictOperation`
 * with `{ operationName }` (@google/genai src/operations.ts). The model is the one the operation name
 * carries (`projects/.../models/{model}/operations/{id}`). Without a storageUri, videos come back as bytes.
 */
const VERTEX_VIDEO: GoogleVideoTransport = {
  api: 'vertex',
  createUrl: (upstream, model) => upstreamUrl(upstream.baseURL, '/v1', `${vertexModelPath(upstream, model)}:predictLongRunning`),
  readCall: (upstream, operationName) => {
    const model = /\/models\/([^/]+)\/operations\/[^/]+$/.exec(operationName)?.[1];
    if (!model) throw GatewayError.badUpstreamResponse('vertex', 'the operation name names no model');
    return {
      method: 'POST',
      url: upstreamUrl(upstream.baseURL, '/v1', `${vertexModelPath(upstream, decodeURIComponent(model))}:fetchPredictOperation`),
      body: JSON.stringify({ operationName }),
    };
  },
  headers: vertexHeaders,
  videoInOperation: true,
};

/** Vertex AI: Gemini's image models and Veo video tasks in the operator's Google Cloud project. */
export const vertexProvider: Provider = {
  name: 'vertex',
  // the OpenTelemetry GenAI conventions' value for Vertex AI
  genAiName: 'gcp.vertex_ai',
  images: { generate: (call, request, upstream) => generateGoogleImages(VERTEX_TRANSPORT, call, request, upstream) },
  tasks: { video: googleVideoTasks(VERTEX_VIDEO) },
  // the project is in every path, the token function is the only credential
  checkUpstream: (upstream) =>
    typeof upstream.project !== 'string' || upstream.project === '' || typeof upstream.getAccessToken !== 'function' ? "provider 'vertex' needs project and getAccessToken" : undefined,
};
