// Replicate image inputs (docs/providers/replicate.md "Field mapping"): every Replicate model takes its own
// `input` object, so the fields are mapped by model family, recognised by a pattern on the operator's
// `owner/name` id. A field the family has no place for is a 400 naming it, never dropped. Pure functions.
import { GatewayError } from '../../errors/gateway-error.js';
import type { ImageGenerationRequest } from '../../images/image-request.js';
import type { UploadedImage } from '../../images/uploaded-image.js';
import type { DataUrlText } from '../../json/data-url-text.js';

/** The aspect ratios FLUX models take (Replicate's model pages for black-forest-labs/flux-*). */
const FLUX_RATIOS = ['1:1', '16:9', '21:9', '3:2', '2:3', '4:5', '5:4', '3:4', '4:3', '9:16', '9:21'] as const;
/** nano-banana's, which add `match_input_image`. */
const NANO_BANANA_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'] as const;

// a size whose ratio is further than this (as a log ratio, about 6%) from every ratio of the family cannot map
const RATIO_TOLERANCE = 0.06;

/** Where a family takes input images: one field, a list or a single image. */
interface ImageField {
  name: 'image_input' | 'input_image' | 'image' | 'image_prompt';
  list: boolean;
}

/** How one family of Replicate models names its input fields. */
export interface ReplicateFamily {
  /** Named in error messages. */
  label: string;
  /** `aspect_ratio` from a list, or `width` and `height` in pixels. */
  size: { kind: 'aspect_ratio'; ratios: readonly string[]; matchInput: boolean } | { kind: 'width_height' };
  /** The most `num_outputs` one prediction makes; absent: one image per prediction, `n` is fanned out. */
  numOutputs?: number;
  /** Where input images go; absent: text to image only. */
  images?: ImageField;
  seed: boolean;
  /** Replicate's own input fields a caller may send (top level or in `parameters`), as they are. */
  own: readonly string[];
}

const FLUX_OWN = ['output_format', 'output_quality'] as const;

/** The families, first match wins; the last one is any other model (docs/providers/replicate.md "Other models"). */
const FAMILIES: ReadonlyArray<readonly [RegExp, ReplicateFamily]> = [
  [
    /^black-forest-labs\/flux-schnell$/,
    {
      label: 'FLUX schnell',
      size: { kind: 'aspect_ratio', ratios: FLUX_RATIOS, matchInput: false },
      numOutputs: 4,
      seed: true,
      own: [...FLUX_OWN, 'go_fast', 'num_inference_steps', 'megapixels'],
    },
  ],
  [
    /^black-forest-labs\/flux-dev$/,
    {
      label: 'FLUX dev',
      size: { kind: 'aspect_ratio', ratios: FLUX_RATIOS, matchInput: false },
      numOutputs: 4,
      images: { name: 'image', list: false },
      seed: true,
      own: [...FLUX_OWN, 'go_fast', 'num_inference_steps', 'megapixels', 'guidance', 'prompt_strength'],
    },
  ],
  [
    /^black-forest-labs\/flux-kontext-(?:pro|max|dev)$/,
    {
      label: 'FLUX Kontext',
      size: { kind: 'aspect_ratio', ratios: FLUX_RATIOS, matchInput: true },
      images: { name: 'input_image', list: false },
      seed: true,
      own: ['output_format', 'safety_tolerance', 'prompt_upsampling'],
    },
  ],
  [
    /^black-forest-labs\/flux-(?:1\.1-pro(?:-ultra)?|pro)$/,
    {
      label: 'FLUX pro',
      size: { kind: 'aspect_ratio', ratios: FLUX_RATIOS, matchInput: false },
      images: { name: 'image_prompt', list: false },
      seed: true,
      own: [...FLUX_OWN, 'safety_tolerance', 'prompt_upsampling', 'raw', 'image_prompt_strength'],
    },
  ],
  [
    /^google\/nano-banana(?:-pro)?$/,
    {
      label: 'nano-banana',
      size: { kind: 'aspect_ratio', ratios: NANO_BANANA_RATIOS, matchInput: true },
      images: { name: 'image_input', list: true },
      seed: false,
      own: ['output_format', 'resolution', 'safety_filter_level'],
    },
  ],
];

const OTHER_MODELS: ReplicateFamily = {
  label: 'this Replicate model',
  size: { kind: 'width_height' },
  images: { name: 'image', list: false },
  seed: true,
  own: ['negative_prompt', 'num_inference_steps', 'guidance_scale', 'output_format', 'output_quality'],
};

/** The gateway's own fields: a stream is answered by the gateway, never asked of Replicate. */
const GATEWAY_FIELDS: ReadonlySet<string> = new Set(['stream', 'partial_images']);

/** `owner/name` and the version of an operator's `owner/name` or `owner/name:version` (the client's ModelVersionIdentifier). */
export function parseModelRef(ref: string): { owner: string; name: string; version?: string } | undefined {
  const match = /^([^/:\s]+)\/([^/:\s]+)(?::([0-9A-Za-z]+))?$/.exec(ref);
  if (!match) return undefined;
  return match[3] ? { owner: match[1]!, name: match[2]!, version: match[3] } : { owner: match[1]!, name: match[2]! };
}

/** The family of a model id (the version, if any, plays no part). */
export function familyOf(model: string): ReplicateFamily {
  const ref = parseModelRef(model);
  const id = ref ? `${ref.owner}/${ref.name}` : model;
  return FAMILIES.find(([pattern]) => pattern.test(id))?.[1] ?? OTHER_MODELS;
}

/** A size as the family's `aspect_ratio` or `width`/`height`; a 400 naming `size` when it cannot map. */
export function sizeInput(size: unknown, family: ReplicateFamily): Record<string, unknown> {
  if (size === undefined || size === 'auto') return {};
  const text = typeof size === 'string' ? size.trim() : '';
  const shown = typeof size === 'string' ? size : JSON.stringify(size);
  if (family.size.kind === 'aspect_ratio') {
    const { ratios, matchInput } = family.size;
    if (ratios.includes(text) || (matchInput && text === 'match_input_image')) return { aspect_ratio: text };
  }
  const match = /^([1-9]\d{0,5})\s*[x*]\s*([1-9]\d{0,5})$/i.exec(text);
  if (!match) {
    const ratioHint = family.size.kind === 'aspect_ratio' ? `, an aspect ratio (${family.size.ratios.join(', ')})` : '';
    throw GatewayError.invalidRequest(`size '${shown}' is not a size ${family.label} takes: use WIDTHxHEIGHT (e.g. 1024x1024)${ratioHint} or auto`, 'size');
  }
  const width = Number(match[1]);
  const height = Number(match[2]);
  if (family.size.kind === 'width_height') return { width, height };
  let best = family.size.ratios[0]!;
  let distance = Infinity;
  for (const ratio of family.size.ratios) {
    const [w, h] = ratio.split(':').map(Number) as [number, number];
    const off = Math.abs(Math.log(width / height / (w / h)));
    if (off < distance) [best, distance] = [ratio, off];
  }
  if (distance > RATIO_TOLERANCE) throw GatewayError.invalidRequest(`size '${text}' has no aspect ratio of ${family.label} near it: use a size of ratio ${family.size.ratios.join(', ')}`, 'size');
  return { aspect_ratio: best };
}

/** One image as Replicate takes a file input: a URL, or a Data URL (sent encoded on the way out). */
export type ReplicateFile = string | UploadedImage | DataUrlText;

/** What one Replicate image request becomes: the `input` of each prediction and how many predictions. */
export interface ReplicateImagePlan {
  input: Record<string, unknown>;
  /** Predictions to create: 1 with `num_outputs`, else one per image asked. */
  predictions: number;
}

/** The number of images asked (`n`, 1 when absent). */
function imagesAsked(request: ImageGenerationRequest): number {
  const n = request.parameters.n;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : 1;
}

/**
 * The prediction `input` of an image request for a model: the prompt, size, seed, `n` (as
 * `num_outputs`, or a fan-out), the input images in the family's field, and the caller's allow-listed
 * own fields (top level or in `parameters`). Anything else is a 400 naming it.
 */
export function translateImageInput(request: ImageGenerationRequest, model: string): ReplicateImagePlan {
  const family = familyOf(model);
  const input: Record<string, unknown> = {};
  input.prompt = request.content.flatMap((item) => ('text' in item ? [item.text] : [])).join('\n');
  const own = (name: string, value: unknown, path: string): void => {
    if (!family.own.includes(name)) {
      const allowed = family.own.length > 0 ? `: ${family.label} takes ${family.own.join(', ')}` : '';
      throw GatewayError.invalidRequest(`${path} is not a field ${family.label} takes on Replicate${allowed}`, path);
    }
    input[name] = value;
  };
  for (const [name, value] of Object.entries(request.parameters)) {
    if (name === 'size' || name === 'n' || value === undefined) continue;
    if (name === 'seed') {
      if (!family.seed) throw GatewayError.invalidRequest(`parameters.seed is not something ${family.label} can do: leave it out`, 'parameters.seed');
      input.seed = value;
      continue;
    }
    own(name, value, `parameters.${name}`);
  }
  for (const [name, value] of Object.entries(request.extra ?? {})) {
    if (GATEWAY_FIELDS.has(name) || value === undefined) continue;
    if (name === 'seed' && family.seed) {
      input.seed = value;
      continue;
    }
    own(name, value, name);
  }
  Object.assign(input, sizeInput(request.parameters.size, family));
  const images = request.content.flatMap((item): ReplicateFile[] => ('image' in item ? [item.image] : []));
  if (images.length > 0) {
    const field = family.images;
    if (!field) throw GatewayError.invalidRequest(`${family.label} is text to image only: send no image`, 'input.messages[0].content');
    if (!field.list && images.length > 1) throw GatewayError.invalidRequest(`${family.label} takes one input image, got ${images.length}`, 'input.messages[0].content');
    input[field.name] = field.list ? images : images[0];
  }
  const n = imagesAsked(request);
  if (family.numOutputs === undefined) return { input, predictions: n };
  if (n > family.numOutputs) throw GatewayError.invalidRequest(`parameters.n must be at most ${family.numOutputs} for ${family.label}, got ${n}`, 'parameters.n');
  if (n > 1) input.num_outputs = n;
  return { input, predictions: 1 };
}
