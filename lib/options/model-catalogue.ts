// The public types of the model catalogue (`models.catalogue` option, docs/models.md): per caller-facing model,
// the endpoints it answers on and how each is served, the parameters it takes, the ones the gateway
// refuses for it, its limits and whether it streams. Types only; the default rows are
// lib/models/default-models.ts, the rules that read them lib/models/model-rules.ts. Field names are
// the wire names of `GET /v1/models` (docs/routes.md), which lists these entries.
import type { ProviderName } from '../types.js';

/** A request path a catalogue entry may answer on (docs/routes.md). */
export type ModelEndpoint =
  '/v1/images/generations' | '/v1/images/edits' | '/api/v3/images/generations' | '/api/v3/contents/generations/tasks' | '/v1/videos' | '/v1/chat/completions' | '/v1/responses';

/**
 * How the provider serves an endpoint: `translated` (the gateway reads the request and speaks the
 * vendor's own call), `passthrough` (the body goes as sent but for the model name; unknown fields are
 * never refused), `native` (the vendor's own path and format, relayed).
 */
export type ModelServing = 'translated' | 'passthrough' | 'native';

/** A closed range of whole numbers. @example { min: 1, max: 6 } */
export interface ModelRange {
  min: number;
  max: number;
}

/**
 * What one request may hold (docs/models.md "Limits"). Every key is optional; an absent key is no
 * rule of the gateway's (the upstream decides).
 * @example limits: { n: { min: 1, max: 6 }, reference_images: { min: 0, max: 3 }, pixels: { min: 262144, max: 4194304 } }
 */
export interface ModelLimits {
  /** Images per request (`n`, `parameters.n`, or Ark's `max_images`). @example n: { min: 1, max: 6 } */
  n?: ModelRange;
  /** Reference (input) images per request. @example reference_images: { min: 1, max: 3 } */
  reference_images?: ModelRange;
  /** The only explicit sizes accepted, `WxH` (a `W*H` request matches too). @example sizes: ['1024x1024', '1536x1024'] */
  sizes?: readonly string[];
  /** Named sizes accepted where the vendor has them (Ark: `2K`). @example tiers: ['2K', '4K'] */
  tiers?: readonly string[];
  /** Total pixels (width × height) of an explicit size. @example pixels: { min: 512 * 512, max: 2048 * 2048 } */
  pixels?: ModelRange;
  /**
   * Video seconds (`duration`); `auto: true` also takes `-1` (the model picks the length, up to
   * `max`: a budget reserves `max`); `values`, when set, are the only lengths in the range the model
   * makes. @example durations: { min: 4, max: 12, auto: true } @example durations: { min: 4, max: 8, values: [4, 6, 8] }
   */
  durations?: ModelRange & { auto?: boolean; values?: readonly number[] };
  /**
   * Video resolutions (`resolution`, and the short side of the OpenAI video shape's `size`, as `720p`).
   * @example resolutions: ['720p', '1080p']
   */
  resolutions?: readonly string[];
  /**
   * Video aspect ratios (`ratio`, and the OpenAI video shape's `size` reduced, as `16:9`).
   * @example ratios: ['16:9', '9:16']
   */
  ratios?: readonly string[];
}

/**
 * One model of the catalogue (`models.catalogue` option): a vendor model under the vendor's name, which every
 * caller name the resolver sends to it follows, or a name of yours with rules of its own, which wins
 * over the upstream model's row (docs/models.md "Which row a request follows"). The resolver stays the
 * routing authority: an entry is listed for a caller only on the endpoints `resolveUpstream` routes for it.
 * @example { id: 'x-seedream', owned_by: 'ark', provider: 'ark', endpoints: { '/v1/images/generations': 'translated' }, supported_parameters: ['prompt', 'size', 'n'], streams: false }
 */
export interface ModelEntry {
  /** The model name callers send, or that an upstream's `model` names; a trailing `*` covers every name that starts with the text. No default. @example id: 'x-image-2.0*' */
  id: string;
  /** `owned_by` of `GET /v1/models`. Default `'gateway'`. @example owned_by: 'dashscope' */
  owned_by?: string;
  /** Unix seconds, `created` of `GET /v1/models`. Default 0. @example created: 1_767_225_600 */
  created?: number;
  /**
   * The provider whose rules these are. When set, `GET /v1/models` lists an endpoint only where the
   * resolver routes it to this provider (a different one would not follow these rules). Default: any.
   * @example provider: 'ark'
   */
  provider?: ProviderName;
  /** The endpoints the model answers on, each with how it is served. No default. @example endpoints: { '/v1/images/generations': 'translated' } */
  endpoints: Partial<Record<ModelEndpoint, ModelServing>>;
  /** The request fields the model takes (for clients; never refused for being absent here). No default. @example supported_parameters: ['prompt', 'size', 'n'] */
  supported_parameters: readonly string[];
  /**
   * Fields the gateway answers with a 400 naming the model and the field, because the vendor refuses
   * them for this model. Ignored on `passthrough` endpoints (OpenAI-compatible upstreams decide).
   * Default none. @example refused_parameters: ['sequential_image_generation']
   */
  refused_parameters?: readonly string[];
  /** What one request may hold. Default: no limits of the gateway's. @example limits: { n: { min: 1, max: 1 } } */
  limits?: ModelLimits;
  /** Whether the model answers `stream: true` on its image or chat endpoints. No default. @example streams: true */
  streams: boolean;
}

/**
 * The `models.catalogue` option: a list adds entries to the default catalogue (an entry with the id of a
 * default one replaces it); a function gets the defaults and returns the whole catalogue.
 * @example catalogue: [{ ...modelEntry('doubao-seedream-4-0-250828')!, id: 'x-seedream' }]
 * @example catalogue: (defaults) => defaults.filter((entry) => entry.provider !== 'openai')
 */
export type ModelCatalogueOption = readonly ModelEntry[] | ((defaults: readonly ModelEntry[]) => readonly ModelEntry[]);
