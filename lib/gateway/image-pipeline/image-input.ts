// The caller's image request as it arrived on POST /v1/images/generations or /v1/images/edits (a JSON
// body or the edit form), and what the image pipeline (image-pipeline.ts) reads of it before any
// upstream is chosen: the quality and size it prices, the `n` and format it forwards, how many images
// it may be answered with and so is charged for (docs/tenancy-and-billing.md: the `n` its model's
// family allows when the gateway translates, or what an OpenAI-compatible upstream is sent; the
// upstream never decides more), and a streamed request as it is answered whole (docs/routes.md
// "Streamed images").
import type { EditForm } from './image-edit-form.js';
import { type RequestedSettings, requestedSettings } from './image-streams.js';
import type { ImageGenerationRequest } from '../../images/image-request.js';
import { readImageCount } from '../../images/image-count.js';
import type { ImageModelFamily } from '../../options/request-limits.js';
import type { Provider } from '../../providers/provider.js';
import { nativeImageGroups } from '../../providers/registry.js';

/** The route an image request came on. */
export type ImageRoute = 'images.generations' | 'images.edits';

/** The caller's image request as it arrived: a JSON body (generations) or the edit form (edits). */
export type ImageInput = { kind: 'json'; body: Record<string, unknown> } | { kind: 'form'; form: EditForm };

/** The `quality` the request asked for (gpt-image), a JSON value or a form field; it prices the images. */
export function qualityOf(input: ImageInput): string | undefined {
  const quality = input.kind === 'json' ? input.body.quality : input.form.fields.quality;
  return typeof quality === 'string' ? quality : undefined;
}

/** The `size` the request asked for at its top level (OpenAI shape, or the edit form). */
export function sizeAsked(input: ImageInput): unknown {
  return input.kind === 'json' ? input.body.size : input.form.fields.size;
}

/** What the caller sent as `n` on the OpenAI-compatible path (a JSON value, or a form field). */
function requestedImagesOf(input: ImageInput): unknown {
  return input.kind === 'json' ? input.body.n : input.form.fields.n;
}

/** The `response_format` the caller sent (a JSON value, or a form field). */
export function requestedFormatOf(input: ImageInput): unknown {
  return input.kind === 'json' ? input.body.response_format : input.form.fields.response_format;
}

/** A streamed request as it is answered whole: no `stream` or `partial_images`, and the images as bytes. */
export function unstreamed(input: ImageInput): ImageInput {
  if (input.kind === 'json') {
    const { stream: _stream, partial_images: _partials, ...body } = input.body;
    return { kind: 'json', body: { ...body, response_format: 'b64_json' } };
  }
  const { stream: _stream, partial_images: _partials, ...fields } = input.form.fields;
  return { kind: 'form', form: { ...input.form, fields: { ...fields, response_format: 'b64_json' } } };
}

/** What a streamed request asked of its events (image-streams.ts), from its body or its form's fields. */
export function streamSettingsOf(input: ImageInput): RequestedSettings {
  if (input.kind === 'form') return requestedSettings(input.form.fields);
  const parameters = input.body.parameters;
  return requestedSettings(input.body, typeof parameters === 'object' && parameters !== null ? (parameters as Record<string, unknown>) : undefined);
}

/**
 * contract §2.3 `n` (default 1), or the image group the request sets itself where its upstream makes
 * groups (`groups`: Ark's `sequential_image_generation`, which its translation keeps), whichever is
 * larger; never more than the family allows (reading the request refused larger `n`: image-preparation.ts).
 */
export function allowedImages(request: ImageGenerationRequest, family: ImageModelFamily, groups?: Pick<NonNullable<Provider['imageGroups']>, 'asked'>): number {
  const n = request.parameters.n;
  const asked = typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : 1;
  const group = groups && request.extra ? groups.asked(request.extra) : 1;
  return Math.min(Math.max(asked, group), family.maxN);
}

// OpenAI's own ceiling for `n` on its image routes: a larger ask is refused, never forwarded as sent
const MAX_PASSTHROUGH_N = 10;

/**
 * The most images an OpenAI-compatible upstream may answer: `n` as it is sent (one whole number up to
 * OpenAI's ceiling, 1 when absent), or an image group the JSON body asks for (Ark's
 * `sequential_image_generation`, the same rule as the native route: docs/tenancy-and-billing.md), whichever
 * is larger: an upstream honours one or the other.
 */
export function forwardedCount(input: ImageInput): number {
  const n = readImageCount(requestedImagesOf(input), 'n', MAX_PASSTHROUGH_N, input.kind) ?? 1;
  if (input.kind === 'form') return n;
  const groups = nativeImageGroups();
  return groups ? Math.max(n, groups.asked(input.body)) : n;
}
