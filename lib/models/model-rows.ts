// The vendor-neutral parts of the default catalogue's rows (docs/models.md "Model rows"): the contract's
// request fields, the image endpoints of a translated model, and a contract §1 family as a row. Each
// provider writes its own rows with them (lib/providers/*-models.ts); the registry assembles the catalogue.
import type { ModelEntry, ModelServing } from '../options/model-catalogue.js';
import type { ImageModelFamily } from '../options/request-limits.js';

/** Fields of the contract's request shape (contract §2.1-2.3) and the OpenAI-client compatibility of docs/architecture.md. */
export const CONTRACT_PARAMETERS = [
  'prompt',
  'input',
  'response_format',
  'size',
  'n',
  'parameters.size',
  'parameters.n',
  'parameters.watermark',
  'parameters.prompt_extend',
  'parameters.negative_prompt',
  'parameters.seed',
] as const;

export const IMAGE_ROUTES_TRANSLATED = { '/v1/images/generations': 'translated', '/v1/images/edits': 'translated' } as const satisfies Record<string, ModelServing>;
// an edit uploads at least one image: a text-to-image only model answers on generations alone
const TEXT_TO_IMAGE_ONLY = { '/v1/images/generations': 'translated' } as const satisfies Record<string, ModelServing>;
// a model that needs an input image makes nothing of a prompt alone: listed for edits only, so a
// client that picks a text-to-image model from GET /v1/models never picks it (its generations route
// still takes the contract's JSON shape with images: image-preparation.ts)
const EDIT_ONLY = { '/v1/images/edits': 'translated' } as const satisfies Record<string, ModelServing>;

/** The image endpoints of a translated model: edits only when it takes reference images, generations only when it needs one. */
export function imageRoutes(limits: ModelEntry['limits']): ModelEntry['endpoints'] {
  const images = limits?.reference_images;
  if (images?.max === 0) return TEXT_TO_IMAGE_ONLY;
  return images !== undefined && images.min >= 1 ? EDIT_ONLY : IMAGE_ROUTES_TRANSLATED;
}

/** What a video row can make (docs/models.md "Limits"): lengths, resolutions, aspect ratios. */
export type VideoLimits = Pick<NonNullable<ModelEntry['limits']>, 'durations' | 'resolutions' | 'ratios'>;

/**
 * A video model's row: the two video routes (the task route, served `native` in Ark's task shape or
 * `translated`; OpenAI's `/v1/videos`, always a translation into the task: docs/openai-videos.md), its
 * fields, and what it can make when known (lengths, resolutions, aspect ratios: checked on both video
 * shapes). Video tasks never stream (docs/models.md `streams`).
 */
export function videoTaskRow(
  id: string,
  of: { ownedBy: string; provider: NonNullable<ModelEntry['provider']>; serving?: ModelServing; parameters: readonly string[]; limits?: VideoLimits },
): ModelEntry {
  const limits = Object.fromEntries(Object.entries(of.limits ?? {}).filter(([, value]) => value !== undefined));
  return {
    id,
    owned_by: of.ownedBy,
    provider: of.provider,
    endpoints: { '/api/v3/contents/generations/tasks': of.serving ?? 'native', '/v1/videos': 'translated' },
    supported_parameters: of.parameters,
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
    streams: false,
  };
}

/** A contract §1 family (`imageModels` option) as a catalogue entry, listed as `ownedBy`'s (the provider whose native call the families are). */
export function familyEntry(family: ImageModelFamily, ownedBy: string): ModelEntry {
  const limits = { n: { min: 1, max: family.maxN }, reference_images: { min: family.minImages, max: family.maxImages } };
  // no provider: the contract's names are the operator's to route anywhere (listed whichever provider serves them)
  return { id: family.pattern, owned_by: ownedBy, endpoints: imageRoutes(limits), supported_parameters: CONTRACT_PARAMETERS, limits, streams: true };
}
