// Gemini API adapter (docs/providers/gemini.md): the gateway's image requests as `models/{model}:generateContent`
// calls with an image response modality. Gemini has no `n`: n images are n calls, and the caller is
// charged for the images delivered. Images come back as base64 `inlineData` parts, never URLs.
// Pure translation functions first, then the transport that uses them.
import { recordCall } from '../../errors/vendor-outcome.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { classifyUpstreamCode } from '../../errors/status-policy.js';
import type { ImageGenerationRequest } from '../../images/image-request.js';
import type { ImageData, ImageGenerationResponse } from '../../images/image-generation-response.js';
import { InlineBase64, UploadedImage } from '../../images/uploaded-image.js';
import { DataUrlText } from '../../json/data-url-text.js';
import { sniffImageType } from '../../images/sniff-image-type.js';
import { isObject, parseJsonBody, stringOr } from '../../json/json-values.js';
import { rejectionOf } from '../../errors/rejection-of.js';
import type { UpstreamResponse } from '../../transport/upstream-http.js';
import type { Upstream } from '../../types.js';
import { type CallContext, jsonHeaders, secretsOfHeaders, timeoutOf, postJsonUpstream, requestUpstream, upstreamUrl } from '../call-context.js';
import type { Provider } from '../provider.js';
import { normalizeGeminiError } from './google-errors.js';
import { type GoogleVideoTransport, googleVideoTasks, sameOrigin } from './google-video.js';
import { GEMINI_MODELS } from './gemini-models.js';

/** The aspect ratios Gemini's `imageConfig.aspectRatio` takes (docs/providers/gemini.md "Sizes"). */
const GEMINI_ASPECT_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'] as const;
const IMAGE_SIZES = ['1K', '2K', '4K'] as const;

// a size whose ratio is further than this (as a log ratio, about 6%) from every Gemini ratio cannot map
const RATIO_TOLERANCE = 0.06;

/** `generationConfig` keys a caller may send (docs/providers/gemini.md "Gemini's own fields"); anything else is a 400. */
const GENERATION_CONFIG_KEYS: ReadonlySet<string> = new Set(['responseModalities', 'temperature', 'topP', 'topK', 'seed', 'imageConfig']);
/** The numeric generationConfig keys and what they take (js-genai's GenerationConfig: temperature and topP are floats). */
const NUMBER_KEYS: Readonly<Record<string, 'number' | 'integer'>> = { temperature: 'number', topP: 'number', topK: 'integer', seed: 'integer' };
const IMAGE_CONFIG_KEYS: ReadonlySet<string> = new Set(['aspectRatio', 'imageSize']);
/** Top-level fields of the caller's body passed on to Gemini as they are. */
const PASSED_FIELDS: ReadonlySet<string> = new Set(['generationConfig', 'safetySettings']);
/** The gateway's own fields: a stream is answered by the gateway (image-pipeline.ts), never asked of Gemini. */
const GATEWAY_FIELDS: ReadonlySet<string> = new Set(['stream', 'partial_images']);

type InlineData = { mimeType: string; data: string | InlineBase64 };
export type GeminiPart = { text: string } | { inlineData: InlineData };

export interface GeminiImageRequest {
  contents: [{ role: 'user'; parts: GeminiPart[] }];
  generationConfig: Record<string, unknown>;
  safetySettings?: unknown;
}

/** `aspectRatio` and `imageSize` of an OpenAI `WxH` (or `W*H`) size, or a tier alone; a 400 naming `size` when it cannot map. */
export function geminiImageConfig(size: unknown): { aspectRatio?: string; imageSize?: string } {
  if (size === undefined || size === 'auto') return {};
  const text = typeof size === 'string' ? size.trim() : '';
  const tier = text.toUpperCase();
  if ((IMAGE_SIZES as readonly string[]).includes(tier)) return tier === '1K' ? {} : { imageSize: tier };
  const match = /^([1-9]\d{0,5})\s*[x*]\s*([1-9]\d{0,5})$/i.exec(text);
  if (!match)
    throw GatewayError.invalidRequest(`size '${typeof size === 'string' ? size : JSON.stringify(size)}' is not a size Gemini can make: use WIDTHxHEIGHT (e.g. 1536x1024), 1K, 2K, 4K or auto`, 'size');
  const width = Number(match[1]);
  const height = Number(match[2]);
  let best: string = GEMINI_ASPECT_RATIOS[0];
  let distance = Infinity;
  for (const ratio of GEMINI_ASPECT_RATIOS) {
    const [w, h] = ratio.split(':').map(Number) as [number, number];
    const off = Math.abs(Math.log(width / height / (w / h)));
    if (off < distance) [best, distance] = [ratio, off];
  }
  if (distance > RATIO_TOLERANCE) {
    throw GatewayError.invalidRequest(`size '${text}' has no Gemini aspect ratio near it: use a size of ratio ${GEMINI_ASPECT_RATIOS.join(', ')}`, 'size');
  }
  const longer = Math.max(width, height);
  // 1K is Gemini's default, and the only size some image models take: it is not sent
  const imageSize = longer <= 1024 ? undefined : longer <= 2048 ? '2K' : '4K';
  return imageSize ? { aspectRatio: best, imageSize } : { aspectRatio: best };
}

/** One content item's image as an inlineData part; a URL is refused (Gemini takes the bytes, docs/providers/gemini.md "Edits"). */
function inlinePart(image: string | UploadedImage | DataUrlText, index: number): GeminiPart {
  if (image instanceof UploadedImage || image instanceof DataUrlText) return { inlineData: { mimeType: image.mime, data: new InlineBase64(image) } };
  const match = /^data:([^;,]+);base64,/i.exec(image);
  if (!match) {
    const path = `input.messages[0].content[${index}].image`;
    throw GatewayError.invalidRequest(`${path}: Gemini takes images as bytes, not URLs: upload the file (POST /v1/images/edits) or send a 'data:image/...;base64,' URL`, path);
  }
  const data = image.slice(match[0].length);
  // the bytes decide, not the label: Gemini is told what the image is, and what is none never leaves
  const mimeType = sniffImageType(Buffer.from(data.slice(0, 64), 'base64'));
  if (!mimeType) {
    const path = `input.messages[0].content[${index}].image`;
    throw GatewayError.invalidRequest(`${path}: the data: URL's bytes are not an image (PNG, JPEG, WebP, GIF, …)`, path);
  }
  return { inlineData: { mimeType, data } };
}

/** An imageConfig value of the caller's: one of the values Gemini documents (a string), else a 400 naming it. */
function checkImageConfigValue(value: unknown, allowed: readonly string[], name: string): void {
  if (value === undefined || (typeof value === 'string' && allowed.includes(value))) return;
  throw GatewayError.invalidRequest(`generationConfig.imageConfig.${name} must be one of ${allowed.join(', ')}`, `generationConfig.imageConfig.${name}`);
}

// js-genai's SafetySetting (src/types.ts): { category, threshold, method? }, each an enum name; Gemini
// has about a dozen categories, so a longer list is no list Gemini takes (and each entry is sent n times)
const SAFETY_SETTING_KEYS: ReadonlySet<string> = new Set(['category', 'threshold', 'method']);
const MAX_SAFETY_SETTINGS = 32;
const ENUM_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;

/** safetySettings as Gemini reads them: a short list of `{ category, threshold }` enum names, else a 400 naming the entry. */
function checkSafetySettings(value: unknown): void {
  if (!Array.isArray(value) || value.length > MAX_SAFETY_SETTINGS)
    throw GatewayError.invalidRequest(`safetySettings must be a list of at most ${MAX_SAFETY_SETTINGS} { category, threshold }`, 'safetySettings');
  value.forEach((entry: unknown, index) => {
    const valid = isObject(entry) && Object.entries(entry).every(([name, inner]) => SAFETY_SETTING_KEYS.has(name) && typeof inner === 'string' && ENUM_NAME.test(inner));
    if (!valid)
      throw GatewayError.invalidRequest(
        `safetySettings[${index}] must be { category, threshold } with Gemini's enum names (e.g. HARM_CATEGORY_HARASSMENT, BLOCK_ONLY_HIGH)`,
        `safetySettings[${index}]`,
      );
  });
}

/** The caller's allow-listed Gemini fields, checked key by key (a 400 names the first unknown one). */
function passedFields(extra: Record<string, unknown> | undefined): { generationConfig: Record<string, unknown>; safetySettings?: unknown } {
  const passed: { generationConfig: Record<string, unknown>; safetySettings?: unknown } = { generationConfig: {} };
  for (const [key, value] of Object.entries(extra ?? {})) {
    if (GATEWAY_FIELDS.has(key)) continue;
    if (!PASSED_FIELDS.has(key)) throw GatewayError.invalidRequest(`${key} is not a field Gemini takes: leave it out (Gemini's own fields go in generationConfig or safetySettings)`, key);
    if (key === 'safetySettings') {
      checkSafetySettings(value);
      passed.safetySettings = value;
      continue;
    }
    if (!isObject(value)) throw GatewayError.invalidRequest('generationConfig must be an object', key);
    for (const [name, inner] of Object.entries(value)) {
      if (!GENERATION_CONFIG_KEYS.has(name))
        throw GatewayError.invalidRequest(`generationConfig.${name} is not passed to Gemini: take one of ${[...GENERATION_CONFIG_KEYS].join(', ')}`, `generationConfig.${name}`);
      if (name === 'imageConfig') {
        if (!isObject(inner)) throw GatewayError.invalidRequest('generationConfig.imageConfig must be an object', 'generationConfig.imageConfig');
        const unknown = Object.keys(inner).find((field) => !IMAGE_CONFIG_KEYS.has(field));
        if (unknown) throw GatewayError.invalidRequest(`generationConfig.imageConfig.${unknown} is not passed to Gemini: take aspectRatio or imageSize`, `generationConfig.imageConfig.${unknown}`);
        checkImageConfigValue(inner.aspectRatio, GEMINI_ASPECT_RATIOS, 'aspectRatio');
        checkImageConfigValue(inner.imageSize, IMAGE_SIZES, 'imageSize');
      }
      if (name === 'responseModalities' && !(Array.isArray(inner) && inner.includes('IMAGE') && inner.every((modality) => modality === 'IMAGE' || modality === 'TEXT'))) {
        throw GatewayError.invalidRequest("generationConfig.responseModalities must be a list of 'IMAGE' and 'TEXT' that includes 'IMAGE'", 'generationConfig.responseModalities');
      }
      const kind = NUMBER_KEYS[name];
      if (kind && !(typeof inner === 'number' && Number.isFinite(inner) && (kind === 'number' || Number.isSafeInteger(inner)))) {
        throw GatewayError.invalidRequest(`generationConfig.${name} must be ${kind === 'number' ? 'a number' : 'an integer'}`, `generationConfig.${name}`);
      }
    }
    passed.generationConfig = value;
  }
  return passed;
}

/**
 * The generateContent body of one call (one image asked): the content items in the caller's order as
 * parts, `size` as `imageConfig`, `parameters.seed` as `seed`, the caller's Gemini fields on top.
 * A contract parameter Gemini cannot honour is a 400 naming it, never dropped.
 */
export function translateImageRequest(request: ImageGenerationRequest): GeminiImageRequest {
  for (const name of Object.keys(request.parameters)) {
    if (name !== 'size' && name !== 'n' && name !== 'seed') throw GatewayError.invalidRequest(`parameters.${name} is not something Gemini can do: leave it out`, `parameters.${name}`);
  }
  const parts = request.content.map((item, index): GeminiPart => ('text' in item ? { text: item.text } : inlinePart(item.image, index)));
  const passed = passedFields(request.extra);
  const { imageConfig: callerImageConfig, ...callerConfig } = passed.generationConfig;
  const imageConfig = { ...geminiImageConfig(request.parameters.size), ...(isObject(callerImageConfig) ? callerImageConfig : {}) };
  const generationConfig: Record<string, unknown> = { responseModalities: ['IMAGE'] };
  if (typeof request.parameters.seed === 'number') generationConfig.seed = request.parameters.seed;
  Object.assign(generationConfig, callerConfig);
  if (Object.keys(imageConfig).length > 0) generationConfig.imageConfig = imageConfig;
  const body: GeminiImageRequest = { contents: [{ role: 'user', parts }], generationConfig };
  if (passed.safetySettings !== undefined) body.safetySettings = passed.safetySettings;
  return body;
}

/** The number of generateContent calls for a request: its `n` (Gemini makes one image per call). */
export function fanOutOf(request: ImageGenerationRequest): number {
  const n = request.parameters.n;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : 1;
}

/**
 * One generateContent answer as contract §2.4 entries: every image part of every candidate (Gemini 3's
 * `thought` images are drafts, not answers), a candidate's text as its images' revised_prompt. A
 * blocked prompt or a refused image is a 400 content_policy_violation; no image otherwise is a 502.
 */
export function translateImageResponse(body: unknown, provider = 'gemini'): GoogleImageAnswer {
  const responseId = (isObject(body) && stringOr(body.responseId)) || '';
  const blockReason = isObject(body) && isObject(body.promptFeedback) ? stringOr(body.promptFeedback.blockReason) : undefined;
  const refused = (code: string, message: string | undefined): GatewayError =>
    GatewayError.fromUpstream({ provider, status: 200, upstreamCode: code, upstreamMessage: message, requestId: responseId || undefined, kind: 'content_policy' });
  if (blockReason) throw refused(blockReason, isObject(body) && isObject(body.promptFeedback) ? stringOr(body.promptFeedback.blockReasonMessage) : undefined);
  const data: ImageData[] = [];
  const candidates = isObject(body) && Array.isArray(body.candidates) ? body.candidates : [];
  let finish: string | undefined;
  for (const candidate of candidates) {
    if (!isObject(candidate)) continue;
    finish ??= stringOr(candidate.finishReason);
    const parts = isObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
    const said = parts.flatMap((part: unknown) => (isObject(part) && part.thought !== true && typeof part.text === 'string' ? [part.text] : [])).join('\n');
    for (const part of parts) {
      if (!isObject(part) || part.thought === true || !isObject(part.inlineData)) continue;
      const b64 = stringOr(part.inlineData.data);
      if (!b64) continue;
      // what is handed on (and charged) as an image is one: base64 of known image bytes
      if (!BASE64.test(b64) || !sniffImageType(Buffer.from(b64.slice(0, 64), 'base64')))
        throw GatewayError.badUpstreamResponse(provider, 'an inlineData part is not base64 of an image', responseId || undefined);
      data.push({ url: '', b64_json: b64, revised_prompt: said });
    }
  }
  if (data.length > 0) return { data, responseId, usage: tokensOf(body) };
  if (finish && classifyUpstreamCode(finish) === 'content_policy') {
    throw refused(finish, isObject(candidates[0]) ? stringOr(candidates[0].finishMessage) : undefined);
  }
  throw GatewayError.noImage(provider, finish ? ` (finishReason ${finish})` : '', responseId || undefined);
}

// proto3 JSON bytes: standard base64 (the URL-safe alphabet is accepted on input too)
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** One generateContent answer as the gateway reads it. */
export interface GoogleImageAnswer {
  data: ImageData[];
  responseId: string;
  /** `usageMetadata` under the names the pricing reads (gpt-image's: docs/tenancy-and-billing.md "Cost in money"). */
  usage: { input_tokens: number; output_tokens: number };
}

/** `usageMetadata.promptTokenCount` and `candidatesTokenCount` (0 when absent). */
function tokensOf(body: unknown): GoogleImageAnswer['usage'] {
  const metadata = isObject(body) && isObject(body.usageMetadata) ? body.usageMetadata : {};
  const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);
  return { input_tokens: count(metadata.promptTokenCount), output_tokens: count(metadata.candidatesTokenCount) };
}

/** The model path segment: the operator's id, with or without Google's `models/` prefix. */
export function modelSegment(model: string): string {
  return encodeURIComponent(model.replace(/^models\//, ''));
}

/** How a Google image API is reached: its URL for a model and its credentials (the Gemini API here, Vertex AI in vertex.ts). */
export interface GoogleImageTransport {
  provider: 'gemini' | 'vertex';
  url(upstream: Upstream, model: string): string;
  /** The request headers, credentials included; asked once per request, before any call (a host function waited for at most `timeoutMs`). */
  headers(upstream: Upstream, timeoutMs?: number): Record<string, string> | Promise<Record<string, string>>;
}

/** The Gemini API's headers: the key goes in Google's own header, never as a bearer token. */
function geminiHeaders(upstream: Upstream): Record<string, string> {
  const headers = jsonHeaders({ ...upstream, apiKey: undefined });
  delete headers['x-goog-api-key'];
  if (upstream.apiKey) headers['x-goog-api-key'] = upstream.apiKey;
  return headers;
}

const GEMINI_TRANSPORT: GoogleImageTransport = {
  provider: 'gemini',
  url: (upstream, model) => upstreamUrl(upstream.baseURL, '/v1beta', `/models/${modelSegment(model)}:generateContent`),
  headers: geminiHeaders,
};

function sendOne(transport: GoogleImageTransport, call: CallContext, request: ImageGenerationRequest, upstream: Upstream, credentials: Record<string, string>): Promise<UpstreamResponse> {
  // a copy: the credentials serve every call of a fan-out, and each call adds its own content-length
  return postJsonUpstream(call, upstream, {
    provider: transport.provider,
    url: transport.url(upstream, upstream.model ?? request.model),
    headers: { ...credentials },
    json: translateImageRequest(request),
  });
}

function readOne(transport: GoogleImageTransport, response: UpstreamResponse): GoogleImageAnswer {
  const body = parseJsonBody(response.body);
  if (response.status < 200 || response.status >= 300) throw normalizeGeminiError(response.status, body, response.headers, transport.provider);
  if (body === undefined) throw GatewayError.badUpstreamResponse(transport.provider, 'the body is not JSON', response.headers['x-request-id']);
  return translateImageResponse(body, transport.provider);
}

/**
 * n images as n concurrent calls. The images that came are answered (the caller is charged for those,
 * image-pipeline.ts settles by the images answered), so a call that failed beside ones that succeeded
 * never makes the caller retry, and pay again for, the ones that were made. When every call failed,
 * the error is one that may have started work if any did (the fallback rule then tries no other upstream).
 */
export function generateGoogleImages(transport: GoogleImageTransport, call: CallContext, request: ImageGenerationRequest, upstream: Upstream): Promise<ImageGenerationResponse> {
  // the body is checked once, before any call: a bad request starts no paid work
  return new Promise<unknown>((resolve) => resolve(translateImageRequest(request)))
    .then(() => transport.headers(upstream, timeoutOf(upstream, call.limits)))
    .then((credentials) =>
      Promise.allSettled(
        Array.from({ length: fanOutOf(request) }, () =>
          rejectionOf(() => sendOne(transport, call, request, upstream, credentials))
            .then((response) => readOne(transport, response))
            // Google's message may quote the credentials it got (a Vertex token the fallback rule does not know)
            .catch((error: unknown) => {
              throw GatewayError.is(error) ? error.withoutSecrets(secretsOfHeaders(credentials)) : error;
            }),
        ),
      ).then((settled): ImageGenerationResponse => {
        if (settled.length > 1) {
          for (const result of settled)
            recordCall(call.vendorCalls, transport.provider, result.status === 'fulfilled' ? { images: result.value.data.length, id: result.value.responseId } : { error: result.reason }, 1);
        }
        const answers = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
        const data = answers.flatMap((answer) => answer.data);
        if (data.length === 0) {
          const errors = settled.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
          const cause = errors.find((error) => !GatewayError.is(error) || !error.notStarted) ?? errors[0];
          throw cause instanceof Error ? cause : GatewayError.noImage(transport.provider, '');
        }
        const requestId = answers.map((answer) => answer.responseId).find((id) => id !== '') ?? '';
        // the tokens of every call that answered: what Google bills for the images delivered
        const usage = { input_tokens: 0, output_tokens: 0 };
        for (const answer of answers) {
          usage.input_tokens += answer.usage.input_tokens;
          usage.output_tokens += answer.usage.output_tokens;
        }
        return { created: Math.floor(Date.now() / 1000), data, extra: { request_id: requestId }, usage };
      }),
    );
}

/** Veo on the Gemini API: `{base}/models/{model}:predictLongRunning`, the operation at `GET {base}/{name}`; a result URI on Google's origin needs the key. */
const GEMINI_VIDEO: GoogleVideoTransport = {
  api: 'gemini',
  createUrl: (upstream, model) => upstreamUrl(upstream.baseURL, '/v1beta', `/models/${modelSegment(model)}:predictLongRunning`),
  // the name is Google's (`models/{model}/operations/{id}`); each segment is encoded so no name reshapes the URL
  readCall: (upstream, name) => ({ method: 'GET', url: upstreamUrl(upstream.baseURL, '/v1beta', `/${name.split('/').map(encodeURIComponent).join('/')}`) }),
  headers: (upstream) => GEMINI_TRANSPORT.headers(upstream),
  resultHeaders: (upstream, url) => Promise.resolve(upstream.apiKey && sameOrigin(url, upstream.baseURL) ? { 'x-goog-api-key': upstream.apiKey } : undefined),
};

/** The Gemini API's free `GET {base}/models/{model}`: the half-open trial (docs/routing-and-health.md "The trial"). */
function readModel(call: CallContext, upstream: Upstream, model: string): Promise<void> {
  const url = upstreamUrl(upstream.baseURL, '/v1beta', `/models/${modelSegment(upstream.model ?? model)}`);
  return requestUpstream(call, upstream, { provider: 'gemini', method: 'GET', url, headers: geminiHeaders(upstream) }).then((response) => {
    if (response.status < 200 || response.status >= 300) throw normalizeGeminiError(response.status, parseJsonBody(response.body), response.headers).withoutSecrets([upstream.apiKey]);
  });
}

/** The Gemini API: native image generation and edits (no OpenAI-compatible passthrough), and Veo video tasks. */
export const geminiProvider: Provider = {
  name: 'gemini',
  // the OpenTelemetry GenAI conventions' value for the Gemini API (generativelanguage.googleapis.com)
  genAiName: 'gcp.gemini',
  models: GEMINI_MODELS,
  images: { generate: (call, request, upstream) => generateGoogleImages(GEMINI_TRANSPORT, call, request, upstream) },
  tasks: { video: googleVideoTasks(GEMINI_VIDEO) },
  healthRead: readModel,
};
