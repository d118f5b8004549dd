// The request rules a catalogue entry carries (docs/models.md "What the gateway refuses"): fields the
// vendor refuses for the model, sizes and pixel ranges, video lengths. Each failure is the contract's
// 400 naming the model and the field; a `passthrough` endpoint is never refused here (an
// OpenAI-compatible upstream decides about its own fields).
import { GatewayError } from '../errors/gateway-error.js';
import type { ModelEndpoint, ModelEntry } from '../options/model-catalogue.js';
import type { ImageModelFamily } from '../options/request-limits.js';

/** The most an image request of a model with no rule of its own may hold (contract §8). */
const GENERIC_MAX_IMAGES = 3;
const GENERIC_MAX_N = 6;

/** The contract §1 family view of an entry: what the image request reader checks. */
export function familyOf(entry: ModelEntry): ImageModelFamily {
  const { n, reference_images: images } = entry.limits ?? {};
  return { pattern: entry.id, minImages: images?.min ?? 0, maxImages: images?.max ?? GENERIC_MAX_IMAGES, maxN: n?.max ?? GENERIC_MAX_N };
}

/** True when the gateway applies the entry's refusals on this endpoint. */
export function refusesOn(entry: ModelEntry, endpoint: ModelEndpoint): boolean {
  const serving = entry.endpoints[endpoint];
  return serving === 'translated' || serving === 'native';
}

/**
 * A 400 for the first refused field present: at the top level of the body, or inside `parameters`
 * (the contract's shape). `model` is the caller's name for the model.
 */
export function checkRefusedFields(entry: ModelEntry, model: string, body: Record<string, unknown>): void {
  const refused = entry.refused_parameters;
  if (!refused || refused.length === 0) return;
  const parameters = typeof body.parameters === 'object' && body.parameters !== null ? (body.parameters as Record<string, unknown>) : undefined;
  for (const name of refused) {
    const path = body[name] !== undefined ? name : parameters?.[name] !== undefined ? `parameters.${name}` : undefined;
    if (path) throw GatewayError.invalidRequest(`Model '${model}' does not take '${name}': its vendor refuses it for this model (see GET /v1/models, supported_parameters). Leave it out`, path);
  }
}

/** `W*H` or `WxH` as its two sides, or undefined for anything else (a tier such as `2K`). */
function sidesOf(size: string): [number, number] | undefined {
  const match = /^\s*([1-9]\d{0,5})\s*[x*]\s*([1-9]\d{0,5})\s*$/i.exec(size);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

/** A 400 when a size is outside the entry's sizes, tiers or pixel range (`path` names the field). */
export function checkSize(entry: ModelEntry, model: string, size: unknown, path: string): void {
  if (typeof size !== 'string' || !entry.limits) return;
  const { sizes, tiers, pixels } = entry.limits;
  const sides = sidesOf(size);
  if (!sides) {
    if (tiers && !tiers.includes(size.trim().toUpperCase())) {
      throw GatewayError.invalidRequest(`${path} '${size}' is not a size model '${model}' takes: use one of ${tiers.join(', ')} or an explicit width x height`, path);
    }
    return;
  }
  const [width, height] = sides;
  if (sizes && !sizes.some((allowed) => sidesOf(allowed)?.join('x') === `${width}x${height}`)) {
    throw GatewayError.invalidRequest(`${path} '${size}' is not a size model '${model}' takes: use one of ${sizes.join(', ')}`, path);
  }
  if (pixels && (width * height < pixels.min || width * height > pixels.max)) {
    throw GatewayError.invalidRequest(`${path} '${size}' has ${width * height} pixels; model '${model}' takes ${pixels.min} to ${pixels.max} pixels (width x height)`, path);
  }
}

/** A 400 when a video length is outside the entry's durations (`-1` only where the model picks). */
export function checkDuration(entry: ModelEntry, model: string, duration: unknown): void {
  const durations = entry.limits?.durations;
  if (!durations || typeof duration !== 'number') return;
  if (duration === -1) {
    if (durations.auto) return;
    throw GatewayError.invalidRequest(`duration -1 (the model picks the length) is not taken by model '${model}': give ${durations.min} to ${durations.max} seconds`, 'duration');
  }
  const values = durations.values;
  if (duration < durations.min || duration > durations.max || (values && !values.includes(duration))) {
    const allowed = values ? `one of ${values.join(', ')}` : `${durations.min} to ${durations.max}`;
    throw GatewayError.invalidRequest(`duration must be ${allowed} seconds for model '${model}'${durations.auto ? ' (or -1: the model picks)' : ''}, got ${duration}`, 'duration');
  }
}

/** A 400 when a video's `resolution` or `ratio` is not one the entry's model makes (`path` names the field). */
export function checkVideoShape(entry: ModelEntry, model: string, field: 'resolution' | 'ratio', value: unknown, path: string = field): void {
  const allowed = field === 'resolution' ? entry.limits?.resolutions : entry.limits?.ratios;
  if (!allowed || typeof value !== 'string' || allowed.includes(value)) return;
  throw GatewayError.invalidRequest(`${path} '${value.slice(0, 40)}' is not a ${field} model '${model}' makes: use one of ${allowed.join(', ')}`, path);
}

/** The longest a `duration: -1` task of a model that picks its own length may last; undefined otherwise. */
export function mostVideoSeconds(entry: ModelEntry | undefined, duration: unknown): number | undefined {
  const durations = entry?.limits?.durations;
  return duration === -1 && durations?.auto ? durations.max : undefined;
}
