// The JSON body of POST /v1/images/edits (OpenAI's JSON edit shape: `images: [{ image_url }]`, an
// optional `mask: { image_url }`) read into the same edit form a multipart upload makes
// (image-edit-form.ts), so both bodies take one path and make the same upstream request
// (docs/routes.md "Edits as JSON"). Each `image_url` is a base64 image Data URL, decoded here, or a
// public http(s) URL, fetched here under the rules of the gateway's own downloads: the URL rules of
// every caller URL, public addresses only (checked after resolution and pinned) unless
// `allow.privateImageUrls`, no redirects, bounded in bytes and time. Either way the bytes get the
// checks an upload gets: the per-file byte limit, the image count, the type sniffed from the bytes.
import { GatewayError } from '../../errors/gateway-error.js';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { checkImageDataUrl, dataUrlProblem } from '../../images/data-url.js';
import { sniffImageType } from '../../images/sniff-image-type.js';
import { IMAGE_URL_WORDING } from '../../images/image-request.js';
import { isObject } from '../../json/json-values.js';
import { requirePublicUrl } from '../../security/public-url.js';
import type { CancelSignal } from '../../transport/upstream-call.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { EditForm, FormFile, FormImage } from './image-edit-form.js';

/** The members that carry images; every other member is a field, as a form would send it. */
const IMAGE_MEMBERS = new Set(['images', 'mask', 'image']);

/** The edit's images as the form of a multipart edit with the same files; throws the 4xx of bad input. */
export async function readJsonEdit(deps: GatewayDeps, body: Record<string, unknown>, prompt: string, signal: CancelSignal): Promise<EditForm> {
  const limits = deps.options.limits;
  if (body.image !== undefined) {
    throw GatewayError.invalidRequest('image is the multipart field: a JSON edit sends its images as \'images\': [{ "image_url": "<Data URL or https URL>" }]', 'image');
  }
  const images = body.images;
  if (!Array.isArray(images) || images.length === 0) {
    throw GatewayError.invalidRequest(`images is required: a list of 1 to ${limits.imagesPerRequest} objects { "image_url": "<Data URL or https URL>" }`, 'images');
  }
  // counted before anything is fetched: too many images costs no download
  if (images.length > limits.imagesPerRequest) throw GatewayError.invalidRequest(`Too many images: at most ${limits.imagesPerRequest}, got ${images.length}`, 'images');
  const references = images.map((item, index) => imageUrlOf(item, `images[${index}]`));
  const maskReference = body.mask === undefined || body.mask === null ? undefined : imageUrlOf(body.mask, 'mask');
  // every reference is checked before the first fetch: a bad one later in the list costs no download
  const sources = references.map((reference) => sourceOf(reference, deps));
  const maskSource = maskReference ? sourceOf(maskReference, deps) : undefined;
  const several = sources.length > 1;
  const files = await Promise.all(sources.map((source) => fileOf(source, several ? 'image[]' : 'image', deps, signal)));
  const imageFiles: FormImage[] = files.map((file) => ({ file, mime: file.type }));
  const mask = maskSource ? await fileOf(maskSource, 'mask', deps, signal) : undefined;
  return {
    fields: formFieldsOf(body),
    prompt,
    images: imageFiles,
    ...(mask ? { mask: { file: mask, mime: mask.type } } : {}),
    files: mask ? [...files, mask] : files,
  };
}

interface ImageReference {
  value: string;
  /** The field path of the value, as errors name it: `images[0].image_url`. */
  path: string;
}

function imageUrlOf(item: unknown, at: string): ImageReference {
  if (!isObject(item)) throw GatewayError.invalidRequest(`${at} must be an object { "image_url": "<Data URL or https URL>" }`, at);
  if (item.file_id !== undefined) throw GatewayError.invalidRequest(`${at}.file_id is not supported: send the image as ${at}.image_url (a Data URL or a public https URL)`, `${at}.file_id`);
  const value = item.image_url;
  if (typeof value !== 'string' || value === '') throw GatewayError.invalidRequest(`${at}.image_url is required: a 'data:image/...;base64,' URL or a public https URL`, `${at}.image_url`);
  return { value, path: `${at}.image_url` };
}

type ImageSource = { kind: 'bytes'; bytes: Buffer; path: string } | { kind: 'url'; url: string; path: string };

/** A Data URL decoded (the upload's byte limit), or a URL that passed the rules of every caller URL. */
function sourceOf({ value, path }: ImageReference, deps: GatewayDeps): ImageSource {
  const maxBytes = deps.options.limits.uploadFileBytes;
  if (/^data:/i.test(value)) {
    const check = checkImageDataUrl(value, maxBytes);
    if (!check.ok) {
      if (check.reason === 'too_large') throw GatewayError.tooLarge(`${path} is a Data URL of ${check.bytes} bytes, larger than the ${maxBytes} byte limit per image`, path);
      throw GatewayError.invalidRequest(`${path} ${dataUrlProblem(check.reason)}`, path);
    }
    return { kind: 'bytes', bytes: Buffer.from(value.slice(check.base64Start), 'base64'), path };
  }
  return { kind: 'url', url: requirePublicUrl(value, path, { allowPrivate: deps.options.allowPrivateImageUrls }, IMAGE_URL_WORDING), path };
}

/** The source's bytes as an uploaded file: fetched when a URL, then sniffed like an upload. */
async function fileOf(source: ImageSource, field: string, deps: GatewayDeps, signal: CancelSignal): Promise<FormFile> {
  const bytes = source.kind === 'bytes' ? source.bytes : await fetchImage(source.url, source.path, deps, signal);
  const { path } = source;
  if (bytes.length === 0) throw GatewayError.invalidRequest(`${path} is an empty image`, path);
  const mime = sniffImageType(bytes.subarray(0, 32));
  if (!mime) throw GatewayError.invalidRequest(`${path} is not an image: send PNG, JPEG, WebP, GIF, BMP, TIFF or HEIC`, path);
  return { field, name: `${field === 'mask' ? 'mask' : 'image'}.${mime.slice('image/'.length)}`, type: mime, size: bytes.length, chunks: [bytes] };
}

/** The GET of a caller's image URL: its failures are the caller's 400 (or 413), naming the field. */
async function fetchImage(url: string, path: string, deps: GatewayDeps, signal: CancelSignal): Promise<Buffer> {
  const { uploadFileBytes, downloadTimeoutMs } = deps.options.limits;
  try {
    return await deps.http.download(url, { provider: 'image URL', maxBytes: uploadFileBytes, timeoutMs: downloadTimeoutMs, signal, allowPrivate: deps.options.allowPrivateImageUrls });
  } catch (error) {
    // a client that left, or anything that is not the fetch's own failure, goes on as it is
    if (!GatewayError.is(error)) throw error;
    if (error.code === ERROR_CODES.upstreamBadResponse && /larger than/.test(error.message)) {
      throw GatewayError.tooLarge(`${path} answers more than the ${uploadFileBytes} byte limit per image`, path);
    }
    const why = /\(HTTP (\d{3})\)/.exec(error.message)?.[1];
    const detail = why
      ? `answered HTTP ${why}`
      : error.code === ERROR_CODES.upstreamTimeout
        ? `did not answer within ${downloadTimeoutMs} ms`
        : /resolves to a loopback|private/.test(error.message)
          ? IMAGE_URL_WORDING.notPublic
          : 'could not be reached';
    throw GatewayError.invalidRequest(`${path} could not be fetched: the URL ${detail}. Make it publicly reachable, or send the image as a Data URL`, path);
  }
}

/**
 * The body's other members as a form's fields: text, as multipart carries them (`n: 2` is the
 * field `n=2`), so the edit form's readers and the re-sent form see one shape whatever the body was.
 */
function formFieldsOf(body: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (IMAGE_MEMBERS.has(name)) continue;
    const text = asFormValue(value);
    if (text !== undefined) fields[name] = text;
  }
  return fields;
}

function asFormValue(value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(asFormValue).filter((item) => item !== undefined);
  if (isObject(value)) {
    const nested: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      const text = asFormValue(inner);
      if (text !== undefined) nested[key] = text;
    }
    return nested;
  }
  return undefined;
}
