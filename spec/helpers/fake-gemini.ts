// A fake Gemini API speaking the generateContent wire format of docs/providers/gemini.md exactly (as @google/genai
// sends and reads it): `POST /v1beta/models/{model}:generateContent` with `x-goog-api-key`, answered with
// one image as a base64 `inlineData` part per call, Google's `{ error: { code, message, status } }`
// envelopes for failures. The same server answers Vertex AI's publisher-model path with a bearer token.
// Like Google's proto-JSON parser, it refuses (400 INVALID_ARGUMENT) a field it does not know, a part
// that is neither text nor inlineData, inlineData bytes that are not base64, and a value of the wrong
// type (field names from @google/genai's src/types.ts): a body Gemini would refuse fails here too.
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
  /** The requests of the calls that made an image (paid), in order: a spec attributes them to a tenant or a call. */
  made: RecordedRequest[];
  /**
   * Chooses, per call, to make the image and then answer `500 INTERNAL` instead of it (paid work the caller
   * never sees, as a call of a fan-out that fails after Gemini generated). Default none.
   */
  failAfterMaking?: (request: RecordedRequest) => boolean;
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

// GenerateContentRequest's fields, GenerationConfig's and ImageConfig's (the Gemini API's), SafetySetting's
const REQUEST_FIELDS = new Set(['contents', 'generationConfig', 'safetySettings', 'systemInstruction', 'tools', 'toolConfig', 'cachedContent']);
const GENERATION_FIELDS = new Set([
  'candidateCount',
  'frequencyPenalty',
  'imageConfig',
  'logprobs',
  'maxOutputTokens',
  'mediaResolution',
  'presencePenalty',
  'responseJsonSchema',
  'responseLogprobs',
  'responseMimeType',
  'responseModalities',
  'responseSchema',
  'seed',
  'speechConfig',
  'stopSequences',
  'temperature',
  'thinkingConfig',
  'topK',
  'topP',
]);
const IMAGE_FIELDS = new Set(['aspectRatio', 'imageSize']);
const SAFETY_FIELDS = new Set(['category', 'threshold']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** What Google's parser says of a generateContent body, or undefined when it takes it. */
export function geminiBodyProblem(body: unknown): string | undefined {
  const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
  const unknownIn = (value: Record<string, unknown>, known: Set<string>, at: string): string | undefined => {
    const name = Object.keys(value).find((key) => !known.has(key));
    return name === undefined ? undefined : `Invalid JSON payload received. Unknown name "${name}" at '${at}': Cannot find field.`;
  };
  if (!isRecord(body)) return 'Invalid JSON payload received.';
  const problem = unknownIn(body, REQUEST_FIELDS, '');
  if (problem) return problem;
  if (!Array.isArray(body.contents) || body.contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified';
  for (const [index, content] of body.contents.entries()) {
    if (!isRecord(content) || !Array.isArray(content.parts)) return `Invalid value at 'contents[${index}]'`;
    for (const [at, part] of content.parts.entries()) {
      const where = `contents[${index}].parts[${at}]`;
      if (!isRecord(part)) return `Invalid value at '${where}'`;
      const found = unknownIn(part, new Set(['text', 'inlineData', 'thought']), where);
      if (found) return found;
      if (part.text !== undefined && typeof part.text !== 'string') return `Invalid value at '${where}.text' (TYPE_STRING)`;
      if (part.inlineData !== undefined) {
        const inline = part.inlineData;
        if (!isRecord(inline)) return `Invalid value at '${where}.inline_data'`;
        const inner = unknownIn(inline, new Set(['mimeType', 'data']), `${where}.inline_data`);
        if (inner) return inner;
        if (typeof inline.mimeType !== 'string' || !inline.mimeType.startsWith('image/')) return `Unsupported MIME type: ${String(inline.mimeType)}`;
        if (typeof inline.data !== 'string' || !BASE64.test(inline.data)) return `Invalid value at '${where}.inline_data.data' (TYPE_BYTES), Base64 decoding failed`;
      } else if (part.text === undefined) return `* GenerateContentRequest.${where}.data: required oneof field 'data' must have one initialized field`;
    }
  }
  const config = body.generationConfig;
  if (config !== undefined) {
    if (!isRecord(config)) return "Invalid value at 'generation_config'";
    const found = unknownIn(config, GENERATION_FIELDS, 'generation_config');
    if (found) return found;
    const modalities = config.responseModalities;
    if (modalities !== undefined && !(Array.isArray(modalities) && modalities.every((modality) => ['TEXT', 'IMAGE', 'AUDIO'].includes(modality as string))))
      return "Invalid value at 'generation_config.response_modalities' (type.googleapis.com/google.ai.generativelanguage.v1beta.GenerationConfig.Modality)";
    for (const name of ['temperature', 'topP', 'topK', 'seed'] as const) {
      const value = config[name];
      if (value !== undefined && (typeof value !== 'number' || ((name === 'topK' || name === 'seed') && !Number.isInteger(value))))
        return `Invalid value at 'generation_config.${name}' (${name === 'topK' || name === 'seed' ? 'TYPE_INT32' : 'TYPE_FLOAT'})`;
    }
    if (config.imageConfig !== undefined) {
      if (!isRecord(config.imageConfig)) return "Invalid value at 'generation_config.image_config'";
      const inner = unknownIn(config.imageConfig, IMAGE_FIELDS, 'generation_config.image_config');
      if (inner) return inner;
      for (const [name, value] of Object.entries(config.imageConfig)) if (typeof value !== 'string') return `Invalid value at 'generation_config.image_config.${name}' (TYPE_STRING)`;
    }
  }
  if (body.safetySettings !== undefined) {
    if (!Array.isArray(body.safetySettings)) return "Invalid value at 'safety_settings'";
    for (const [index, setting] of body.safetySettings.entries()) {
      if (!isRecord(setting)) return `Invalid value at 'safety_settings[${index}]'`;
      const found = unknownIn(setting, SAFETY_FIELDS, `safety_settings[${index}]`);
      if (found) return found;
      for (const [name, value] of Object.entries(setting)) if (typeof value !== 'string') return `Invalid value at 'safety_settings[${index}].${name}' (TYPE_ENUM)`;
    }
  }
  return undefined;
}

export async function startFakeGemini(): Promise<FakeGemini> {
  let made = 0;
  // eslint-disable-next-line prefer-const -- assigned once, after the server whose responder reads it exists
  let self: FakeGemini;
  const fake = await startFakeUpstream((request: RecordedRequest, res: ServerResponse) => {
    if (request.method === 'POST' && VERTEX_GENERATE.test(request.path)) {
      if (request.headers.authorization !== `Bearer ${VERTEX_TOKEN}`) {
        geminiError(res, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
        return;
      }
      const refused = geminiBodyProblem(request.json);
      if (refused) {
        geminiError(res, 400, 'INVALID_ARGUMENT', refused);
        return;
      }
      made += 1;
      self.made.push(request);
      if (self.failAfterMaking?.(request)) {
        geminiError(res, 500, 'INTERNAL', 'An internal error has occurred.');
        return;
      }
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
    const refused = geminiBodyProblem(request.json);
    if (refused) {
      geminiError(res, 400, 'INVALID_ARGUMENT', refused);
      return;
    }
    made += 1;
    self.made.push(request);
    if (self.failAfterMaking?.(request)) {
      geminiError(res, 500, 'INTERNAL', 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting');
      return;
    }
    sendJson(res, 200, geminiImageAnswer());
  });
  self = Object.assign(fake, { baseURL: `${fake.origin}/v1beta`, vertexBaseURL: `${fake.origin}/v1`, imagesMade: () => made, made: [] as RecordedRequest[] });
  return self;
}
