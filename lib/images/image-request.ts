// Reads a POST /v1/images/generations body for an image-family model into the one normalized
// request every image path shares (generations and multipart edits): checks in the order a caller
// fixes them, contract §2.1-2.3, §8, and the OpenAI-client compatibility of docs/architecture.md.
import { GatewayError } from '../errors/gateway-error.js';
import type { ImageGenerationBody } from '../schemas/image-generation-schema.js';
import type { Validator } from '../schemas/validator.js';
import { requirePublicUrl } from '../security/public-url.js';
import type { GatewayLimits, ImageModelFamily } from '../options/request-limits.js';
import { isObject } from '../json/json-values.js';
import { checkImageDataUrl, dataUrlProblem } from './data-url.js';
import { DataUrlText } from '../json/data-url-text.js';
import { UploadedImage } from './uploaded-image.js';

export type ContentItem = { text: string } | { image: string | UploadedImage | DataUrlText };

export interface ImageGenerationRequest {
  model: string;
  /** contract §2.1: exactly one user message; items kept in the caller's order (contract §2.2 rule 4). */
  content: ContentItem[];
  /** contract §2.3 plus any vendor parameter the caller sent (passed through). */
  parameters: Record<string, unknown>;
  responseFormat: 'url' | 'b64_json';
  /**
   * The body's other top-level fields (a vendor's own, sent in the OpenAI request shape): a provider
   * whose native call takes them at its top level (Ark's Seedream) sends them on; DashScope does not.
   */
  extra?: Record<string, unknown>;
}

/** The top-level fields the reader itself consumes (contract §2.1 and the OpenAI-client compatibility). */
const READ_FIELDS: ReadonlySet<string> = new Set(['model', 'prompt', 'input', 'parameters', 'response_format', 'size', 'n']);

export interface ImageRequestRules {
  validate: Validator<ImageGenerationBody>;
  limits: Readonly<GatewayLimits>;
  allowPrivateImageUrls: boolean;
}

type Json = Record<string, unknown>;

/**
 * `uploads`: files of a multipart edit, named in the body as `upload://<index>` image values; they
 * are checked against the Data URL cap and returned as UploadedImage items, never as strings.
 * Data URLs the JSON parser kept as DataUrlText views (json-body.ts) stay views, checked the same way.
 */
export function readImageGenerationRequest(body: Json, family: ImageModelFamily, rules: ImageRequestRules, uploads: readonly UploadedImage[] = []): ImageGenerationRequest {
  rejectLegacyShapes(body);
  // the schema types an image as a string: it sees each DataUrlText view as the string it stands for
  const validated: unknown = withStandIns(body);
  rules.validate(validated);
  // the same body but for those views: the schema's type holds for it too
  const checked = body as typeof validated;
  const { model } = checked;
  const content: ContentItem[] = contentOf(checked).map((item): ContentItem => {
    const upload = 'image' in item && typeof item.image === 'string' ? uploadOf(item.image, uploads) : undefined;
    return upload ? { image: upload } : item;
  });
  const parameters = parametersOf(body);

  const texts = content.filter((item): item is { text: string } => 'text' in item);
  const images = content.filter((item): item is { image: string } => 'image' in item);
  if (texts.length !== 1) {
    throw GatewayError.invalidRequest(`input.messages[0].content must hold exactly one 'text' item (the prompt), found ${texts.length}`, 'input.messages[0].content');
  }
  if (texts[0]!.text.trim() === '') {
    // the compatibility path: the caller sent a top-level prompt, so name that field
    if (!isObject(body.input)) throw GatewayError.invalidRequest('prompt must not be empty', 'prompt');
    throw GatewayError.invalidRequest('The prompt is empty: the text item of input.messages[0].content must not be empty', 'input.messages[0].content');
  }
  checkImageCount(model, images.length, family, rules.limits.imagesPerRequest);
  content.forEach((item, index) => {
    if (!('image' in item)) return;
    if (item.image instanceof UploadedImage) {
      if (item.image.size > rules.limits.dataUrlBytes) {
        throw GatewayError.tooLarge(`image[${index}] is ${item.image.size} bytes; model '${model}' takes images of at most ${rules.limits.dataUrlBytes} bytes`, 'image');
      }
      return;
    }
    // what goes upstream is the URL as checked (normalized), not the caller's spelling of it
    content[index] = { image: checkImageValue(item.image, `input.messages[0].content[${index}].image`, rules) };
  });
  const n = parameters.n;
  if (typeof n === 'number' && n > family.maxN) {
    throw GatewayError.invalidRequest(`parameters.n must be at most ${family.maxN} for model '${model}', got ${n}`, 'parameters.n');
  }
  const read: ImageGenerationRequest = { model, content, parameters, responseFormat: body.response_format === 'b64_json' ? 'b64_json' : 'url' };
  const extra = extraOf(body);
  if (extra) read.extra = extra;
  return read;
}

function extraOf(body: Json): Record<string, unknown> | undefined {
  let extra: Record<string, unknown> | undefined;
  for (const key of Object.keys(body)) if (!READ_FIELDS.has(key)) (extra ??= {})[key] = body[key];
  return extra;
}

/** Shapes that the schema would accept or misname, answered with the fix the spec gives. */
function rejectLegacyShapes(body: Json): void {
  const input = body.input;
  if (isObject(input) && ('prompt' in input || 'negative_prompt' in input)) {
    // contract §2.1 / §9: the legacy structure is not supported for the current image models
    throw GatewayError.invalidRequest(
      'input.prompt and input.negative_prompt are the legacy structure and are not supported: put the prompt in input.messages[].content[] as { "text": ... } and negative_prompt in parameters',
      isObject(input) && 'prompt' in input ? 'input.prompt' : 'input.negative_prompt',
    );
  }
  const parameters = body.parameters;
  if (isObject(parameters) && typeof parameters.size === 'string' && /^\d+x\d+$/i.test(parameters.size.trim())) {
    const fixed = parameters.size.trim().replace(/x/i, '*');
    throw GatewayError.invalidRequest(`parameters.size must use '*' between width and height: '${fixed}', not '${parameters.size.trim()}'`, 'parameters.size');
  }
}

function contentOf(body: ImageGenerationBody): ContentItem[] {
  if (body.input) return body.input.messages[0].content;
  // docs/architecture.md compatibility: no `input` but a top-level prompt is text-to-image with that prompt
  if (typeof body.prompt === 'string') return [{ text: body.prompt }];
  throw GatewayError.invalidRequest(
    'input.messages is required: send input.messages[0].content[] with one { "text": ... } item (and up to 3 { "image": ... } items), or a top-level prompt for text-to-image',
    'input.messages',
  );
}

function parametersOf(body: Json): Record<string, unknown> {
  const parameters: Record<string, unknown> = isObject(body.parameters) ? { ...body.parameters } : {};
  // docs/architecture.md compatibility: top-level size/n fill parameters only when parameters does not set them
  // a named size (`2K`) stays as it is: the vendors that have them read it so
  if (parameters.size === undefined && typeof body.size === 'string') parameters.size = body.size.replace(/^(\d+)x(\d+)$/i, '$1*$2');
  if (parameters.n === undefined && typeof body.n === 'number') parameters.n = body.n;
  return parameters;
}

function checkImageCount(model: string, count: number, family: ImageModelFamily, cap: number): void {
  const max = Math.min(family.maxImages, cap);
  if (count >= family.minImages && count <= max) return;
  let rule: string;
  if (max === 0) rule = `is text-to-image only: send one text item and no image field at all`;
  else if (family.minImages > 0) rule = `edits images: send ${family.minImages} to ${max} image items and one text item`;
  else rule = `takes 0 to ${max} image items and one text item`;
  throw GatewayError.invalidRequest(`Model '${model}' ${rule} (got ${count} image${count === 1 ? '' : 's'})`, 'input.messages[0].content');
}

/** A Data URL as it is, or the normalized public URL; anything else is a 400 naming the field. */
function checkImageValue(value: string | DataUrlText, path: string, rules: ImageRequestRules): string | DataUrlText {
  if (value instanceof DataUrlText) {
    // its form was checked as it was parsed; the size cap and its answer are the same as a string's
    if (value.bytes <= rules.limits.dataUrlBytes) return value;
    throw GatewayError.tooLarge(`${path} is a Data URL of ${value.bytes} bytes; the limit is ${rules.limits.dataUrlBytes} bytes. Use a public URL for large images`, path);
  }
  if (/^data:/i.test(value)) {
    const check = checkImageDataUrl(value, rules.limits.dataUrlBytes);
    if (check.ok) return value;
    if (check.reason === 'too_large') {
      throw GatewayError.tooLarge(`${path} is a Data URL of ${check.bytes} bytes; the limit is ${rules.limits.dataUrlBytes} bytes. Use a public URL for large images`, path);
    }
    throw GatewayError.invalidRequest(`${path} ${dataUrlProblem(check.reason)}`, path);
  }
  return requirePublicUrl(value, path, { allowPrivate: rules.allowPrivateImageUrls }, IMAGE_URL_WORDING);
}

// contract §7: "Image URL unreachable: make the URL publicly reachable, or use a Data URL"
export const IMAGE_URL_WORDING = {
  notHttp: (scheme: string | undefined) => `must be a public http(s) URL or a 'data:image/...;base64,' URL${scheme ? `, not '${scheme}'` : ''}`,
  notPublic: 'names a loopback, private or link-local host; the URL must be publicly reachable (or send the image as a Data URL)',
};

/**
 * The body with each DataUrlText view replaced by a short Data URL string, objects copied only along
 * the paths to a view (the same body when it holds none). Recursive: the parser bounded the depth.
 */
function withStandIns(value: unknown): unknown {
  if (value instanceof DataUrlText) return `data:${value.mime};base64,`;
  if (typeof value !== 'object' || value === null) return value;
  let copy: Record<string, unknown> | unknown[] | undefined;
  for (const [key, item] of Object.entries(value)) {
    const next = withStandIns(item);
    if (next === item) continue;
    copy ??= Array.isArray(value) ? [...(value as unknown[])] : { ...(value as Record<string, unknown>) };
    (copy as Record<string, unknown>)[key] = next;
  }
  return copy ?? value;
}

function uploadOf(value: string, uploads: readonly UploadedImage[]): UploadedImage | undefined {
  const match = /^upload:\/\/(\d+)$/.exec(value);
  return match ? uploads[Number(match[1])] : undefined;
}
