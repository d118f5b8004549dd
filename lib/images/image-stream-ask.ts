// `stream` and `partial_images` of the image routes (docs/routes.md "Streamed images"), read as one value
// wherever they arrive: a JSON body keeps `true` and numbers, a form field is always text ("true", "2").
// What cannot be streamed is a 400 that names the field, never a silent JSON answer: `partial_images`
// without `stream: true`, and `response_format: "url"` with it (OpenAI's image stream events carry
// b64_json only, upstreams §4.2).
import { GatewayError } from '../errors/gateway-error.js';
import type { CountSource } from './image-count.js';

/** What a streamed image request asks for beyond the ordinary one. */
export interface ImageStreamAsk {
  /** Partial images wanted before each completed one, 0 to 3 (OpenAI's range); 0 when not given. */
  partialImages: number;
}

// OpenAI's range for partial_images (openai-node ImageGenerateParams.partial_images)
const MAX_PARTIAL_IMAGES = 3;

/** The fields read here, as the route received them. */
export interface StreamFields {
  stream?: unknown;
  partial_images?: unknown;
  response_format?: unknown;
}

/** The stream ask, or undefined for an ordinary request; a value that cannot be honoured is a 400. */
export function readImageStreamAsk(fields: StreamFields, source: CountSource): ImageStreamAsk | undefined {
  const stream = readFlag(fields.stream, source);
  const partialImages = readPartialImages(fields.partial_images, source);
  if (!stream) {
    if (partialImages !== undefined) throw GatewayError.invalidRequest('partial_images is for streamed answers only: send stream: true with it, or leave it out', 'partial_images');
    return undefined;
  }
  if (fields.response_format === 'url') {
    throw GatewayError.invalidRequest("response_format 'url' cannot be streamed: image stream events carry b64_json only. Leave response_format out, or send stream: false", 'response_format');
  }
  return { partialImages: partialImages ?? 0 };
}

/** `stream: true` as a guard that runs before validation would see it (a JSON `true`, a form's "true"). */
export function asksStream(fields: StreamFields | undefined): boolean {
  return fields?.stream === true || fields?.stream === 'true';
}

function readFlag(value: unknown, source: CountSource): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (value === true) return true;
  if (source === 'form' && typeof value === 'string' && /^\s*(true|false)\s*$/i.test(value)) return value.trim().toLowerCase() === 'true';
  throw GatewayError.invalidRequest(`stream must be ${source === 'form' ? "'true' or 'false'" : 'true or false'}, got ${describe(value)}`, 'stream');
}

function readPartialImages(value: unknown, source: CountSource): number | undefined {
  if (value === undefined || value === null) return undefined;
  const count = source === 'form' && typeof value === 'string' && /^\s*\d{1,2}\s*$/.test(value) ? Number(value) : value;
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0 || count > MAX_PARTIAL_IMAGES) {
    throw GatewayError.invalidRequest(`partial_images must be one whole number from 0 to ${MAX_PARTIAL_IMAGES}, got ${describe(value)}`, 'partial_images');
  }
  return count;
}

function describe(value: unknown): string {
  return Array.isArray(value) || (typeof value === 'object' && value !== null) ? 'several values' : String(JSON.stringify(value)).slice(0, 40);
}
