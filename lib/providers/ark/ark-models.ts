// Ark's rows of the default model catalogue (docs/models.md "Model rows"): Seedream on the image routes and
// Seedance on the task route, under Volcengine's names and BytePlus ModelArk's.
import type { ModelEntry, ModelServing } from '../../options/model-catalogue.js';
import { IMAGE_ROUTES_TRANSLATED, type VideoLimits, videoTaskRow } from '../../models/model-rows.js';

// Ark's Seedream fields (upstreams §2.7), as a caller sends them on /api/v3/images/generations or at the top
// level of an OpenAI-shaped /v1/images/generations body; `n` and `image` are the gateway's own translation
const SEEDREAM_PARAMETERS = [
  'prompt',
  'input',
  'image',
  'n',
  'size',
  'response_format',
  'seed',
  'watermark',
  'optimize_prompt_options',
  'sequential_image_generation',
  'sequential_image_generation_options',
  'parameters.size',
  'parameters.n',
  'parameters.watermark',
  'parameters.seed',
] as const;

const SEEDREAM_ENDPOINTS = { ...IMAGE_ROUTES_TRANSLATED, '/api/v3/images/generations': 'native' } as const satisfies Record<string, ModelServing>;

function seedream(id: string, limits: ModelEntry['limits'], options: { nativeStream: boolean; refused?: readonly string[]; extra?: readonly string[] }): ModelEntry {
  const refused = options.refused ?? [];
  const supported = [...SEEDREAM_PARAMETERS, ...(options.nativeStream ? ['stream'] : []), ...(options.extra ?? [])].filter((name) => !refused.includes(name));
  return {
    id,
    owned_by: 'ark',
    provider: 'ark',
    endpoints: SEEDREAM_ENDPOINTS,
    supported_parameters: supported,
    ...(refused.length > 0 ? { refused_parameters: refused } : {}),
    limits,
    // every Seedream answers `stream: true` on the gateway's image routes (Ark's own stream, or the
    // whole answer written as events); `nativeStream` is whether Ark's own API streams it (docs/routes.md "Streamed images")
    streams: true,
  };
}

// the Ark create body (upstreams §2.2)
const SEEDANCE_PARAMETERS = [
  'content',
  'duration',
  'frames',
  'resolution',
  'ratio',
  'seed',
  'watermark',
  'camera_fixed',
  'generate_audio',
  'return_last_frame',
  'callback_url',
  'safety_identifier',
  'service_tier',
  'execution_expires_after',
  'draft',
  'priority',
  'tools',
] as const;

// Seedance's resolutions and ratios (upstreams §2.2); `adaptive` takes the first frame's own ratio
const SEEDANCE_RESOLUTIONS = ['480p', '720p', '1080p'] as const;
const SEEDANCE_RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'] as const;

function seedance(id: string, durations: NonNullable<VideoLimits['durations']>): ModelEntry {
  return videoTaskRow(id, { ownedBy: 'ark', provider: 'ark', parameters: SEEDANCE_PARAMETERS, limits: { durations, resolutions: SEEDANCE_RESOLUTIONS, ratios: SEEDANCE_RATIOS } });
}

const ARK_ROWS: readonly ModelEntry[] = [
  // Ark Seedream (upstreams §2.7): reference images + generated images <= 15
  seedream('doubao-seedream-4-0*', { n: { min: 1, max: 15 }, reference_images: { min: 0, max: 14 }, tiers: ['1K', '2K', '4K'], pixels: { min: 1280 * 720, max: 4096 * 4096 } }, { nativeStream: true }),
  seedream('doubao-seedream-4-5*', { n: { min: 1, max: 15 }, reference_images: { min: 0, max: 14 }, tiers: ['2K', '4K'], pixels: { min: 2560 * 1440, max: 4704 * 4704 } }, { nativeStream: true }),
  seedream(
    'doubao-seedream-5-0-lite*',
    { n: { min: 1, max: 15 }, reference_images: { min: 0, max: 14 }, tiers: ['2K', '3K'], pixels: { min: 2560 * 1440, max: 10_404_496 } },
    { nativeStream: false, extra: ['output_format'] },
  ),
  // the upstream answers 400 "the parameter `sequential_image_generation` is not supported by the current model"
  seedream(
    'doubao-seedream-5-0-pro*',
    { n: { min: 1, max: 1 }, reference_images: { min: 0, max: 10 } },
    { nativeStream: false, refused: ['sequential_image_generation', 'sequential_image_generation_options'] },
  ),
  seedream('doubao-seedream-5-0-flash*', { n: { min: 1, max: 15 }, reference_images: { min: 0, max: 14 } }, { nativeStream: false }),
  seedream('doubao-seedream-5-5*', { n: { min: 1, max: 15 }, reference_images: { min: 0, max: 14 } }, { nativeStream: false }),
  // Ark Seedance (upstreams §2.2)
  seedance('doubao-seedance-1-0-pro*', { min: 2, max: 12 }),
  seedance('doubao-seedance-1-0-lite*', { min: 2, max: 12 }),
  seedance('doubao-seedance-1-5-pro*', { min: 4, max: 12, auto: true }),
  seedance('doubao-seedance-2-0*', { min: 4, max: 15, auto: true }),
  // unconfirmed beyond `duration: -1`: 2.0's range, so a budget has a maximum to reserve
  seedance('doubao-seedance-2-5*', { min: 4, max: 15, auto: true }),
];

// BytePlus ModelArk (Ark's international service) names the same models without `doubao-`, and
// Seedance 2.0 `dreamina-` (upstreams §2.1): the same rows under those names
const BYTEPLUS_NAMES: ReadonlyArray<[string, string]> = [
  ['doubao-seedream-4-0*', 'seedream-4-0*'],
  ['doubao-seedream-4-5*', 'seedream-4-5*'],
  ['doubao-seedream-5-0-lite*', 'seedream-5-0-lite*'],
  ['doubao-seedance-1-0-pro*', 'seedance-1-0-pro*'],
  ['doubao-seedance-1-0-lite*', 'seedance-1-0-lite*'],
  ['doubao-seedance-1-5-pro*', 'seedance-1-5-pro*'],
  ['doubao-seedance-2-0*', 'dreamina-seedance-2-0*'],
];

const BYTEPLUS_MODELS: readonly ModelEntry[] = BYTEPLUS_NAMES.map(([row, id]) => ({ ...ARK_ROWS.find((entry) => entry.id === row)!, id }));

/** Ark's rows: Volcengine's names, then BytePlus's. */
export const ARK_MODELS: readonly ModelEntry[] = [...ARK_ROWS, ...BYTEPLUS_MODELS];
