// A fake Gemini API speaking the generateContent wire format of docs/providers/gemini.md exactly (as @google/genai
// sends and reads it): `POST /v1beta/models/{model}:generateContent` with `x-goog-api-key`, answered with
// one image as a base64 `inlineData` part per call, Google's `{ error: { code, message, status } }`
// envelopes for failures. The same server answers Vertex AI's publisher-model path with a bearer token.
// It counts the paid calls it starts; tests script failures with `next()`.
import type { ServerResponse } from 'node:http';
import { type FakeUpstream, type RecordedRequest, sendJson, startFakeUpstream } from './fake-upstream.js';
import { TINY_PNG } from './images.js';

export const GEMINI_KEY = 'gemini-operator-key';
export const VERTEX_TOKEN = 'ya29.vertex-operator-token';
const GENERATE = /^\/v1beta\/models\/([^/:]+):generateContent$/;
const VERTEX_GENERATE = /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/publishers\/google\/models\/[^/:]+:generateContent$/;

export interface FakeGemini extends FakeUpstream {
  /** The base a resolver gives the gateway: `${origin}/v1beta`, as @google/genai's own. */
  baseURL: string;
  /** The Vertex AI base: `${origin}/v1`. */
  vertexBaseURL: string;
  /** generateContent calls answered with an image (paid work made). */
  imagesMade(): number;
}

let sequence = 0;

/** One successful generateContent answer with `image` as its only picture, and a text part before it. */
export function geminiImageAnswer(image: Buffer = TINY_PNG, text = 'Here is your image.'): Record<string, unknown> {
  return {
    candidates: [{ content: { role: 'model', parts: [{ text }, { inlineData: { mimeType: 'image/png', data: image.toString('base64') } }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 1290, totalTokenCount: 1297 },
    modelVersion: 'gemini-2.5-flash-image',
    responseId: `gem-resp-${++sequence}`,
  };
}

/** Google's error envelope (google.rpc.Status), with `details` when given. */
export function geminiError(res: ServerResponse, code: number, status: string, message: string, details?: unknown[], headers: Record<string, string> = {}): void {
  sendJson(res, code, { error: { code, message, status, ...(details ? { details } : {}) } }, headers);
}

export async function startFakeGemini(): Promise<FakeGemini> {
  let made = 0;
  const fake = await startFakeUpstream((request: RecordedRequest, res: ServerResponse) => {
    if (request.method === 'POST' && VERTEX_GENERATE.test(request.path)) {
      if (request.headers.authorization !== `Bearer ${VERTEX_TOKEN}`) {
        geminiError(res, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
        return;
      }
      made += 1;
      sendJson(res, 200, geminiImageAnswer());
      return;
    }
    if (request.method !== 'POST' || !GENERATE.test(request.path)) {
      geminiError(res, 404, 'NOT_FOUND', `no route ${request.path}`);
      return;
    }
    const key = request.headers['x-goog-api-key'];
    if (key === undefined) {
      geminiError(
        res,
        403,
        'PERMISSION_DENIED',
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      );
      return;
    }
    if (key !== GEMINI_KEY) {
      geminiError(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' },
      ]);
      return;
    }
    made += 1;
    sendJson(res, 200, geminiImageAnswer());
  });
  return Object.assign(fake, { baseURL: `${fake.origin}/v1beta`, vertexBaseURL: `${fake.origin}/v1`, imagesMade: () => made });
}
