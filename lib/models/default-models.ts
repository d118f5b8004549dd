// The default model catalogue (docs/models.md): the contract's four image families (contract §1), then
// today's vendor models under their vendor names, each row checked against the vendor's documentation
// where it could be (the source of every row, and what is unconfirmed, is in docs/models.md "Model
// rows"). An unconfirmed fact is no rule: the row leaves it to the upstream to refuse.
import type { ModelEntry, ModelServing } from '../options/model-catalogue.js';
import type { ImageModelFamily } from '../options/request-limits.js';
import { DEFAULT_IMAGE_MODELS } from '../images/model-families.js';

/** Fields of the contract's request shape (contract §2.1-2.3) and the OpenAI-client compatibility of docs/architecture.md. */
const CONTRACT_PARAMETERS = [
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

const IMAGE_ROUTES_TRANSLATED = { '/v1/images/generations': 'translated', '/v1/images/edits': 'translated' } as const satisfies Record<string, ModelServing>;
// an edit uploads at least one image: a text-to-image only model answers on generations alone
const TEXT_TO_IMAGE_ONLY = { '/v1/images/generations': 'translated' } as const satisfies Record<string, ModelServing>;

/** The image endpoints of a translated model: edits only when it takes reference images. */
function imageRoutes(limits: ModelEntry['limits']): ModelEntry['endpoints'] {
  return limits?.reference_images?.max === 0 ? TEXT_TO_IMAGE_ONLY : IMAGE_ROUTES_TRANSLATED;
}

/** A contract §1 family (`imageModels` option) as a catalogue entry served by DashScope's multimodal call. */
export function familyEntry(family: ImageModelFamily): ModelEntry {
  const limits = { n: { min: 1, max: family.maxN }, reference_images: { min: family.minImages, max: family.maxImages } };
  // no provider: the contract's names are the operator's to route anywhere (listed whichever provider serves them)
  return { id: family.pattern, owned_by: 'dashscope', endpoints: imageRoutes(limits), supported_parameters: CONTRACT_PARAMETERS, limits, streams: false };
}

function dashscope(id: string, limits: ModelEntry['limits'], extra: readonly string[] = []): ModelEntry {
  return { id, owned_by: 'dashscope', provider: 'dashscope', endpoints: imageRoutes(limits), supported_parameters: [...CONTRACT_PARAMETERS, ...extra], limits, streams: false };
}

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

function seedream(id: string, limits: ModelEntry['limits'], options: { streams: boolean; refused?: readonly string[]; extra?: readonly string[] }): ModelEntry {
  const refused = options.refused ?? [];
  const supported = [...SEEDREAM_PARAMETERS, ...(options.streams ? ['stream'] : []), ...(options.extra ?? [])].filter((name) => !refused.includes(name));
  return {
    id,
    owned_by: 'ark',
    provider: 'ark',
    endpoints: SEEDREAM_ENDPOINTS,
    supported_parameters: supported,
    ...(refused.length > 0 ? { refused_parameters: refused } : {}),
    limits,
    streams: options.streams,
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

function seedance(id: string, durations: NonNullable<ModelEntry['limits']>['durations']): ModelEntry {
  return {
    id,
    owned_by: 'ark',
    provider: 'ark',
    endpoints: { '/api/v3/contents/generations/tasks': 'native' },
    supported_parameters: SEEDANCE_PARAMETERS,
    ...(durations ? { limits: { durations } } : {}),
    streams: false,
  };
}

// OpenAI's image parameters (upstreams §4.1-4.2); passed through, never refused by the gateway
const GPT_IMAGE_PARAMETERS = [
  'prompt',
  'n',
  'size',
  'quality',
  'background',
  'moderation',
  'output_format',
  'output_compression',
  'partial_images',
  'stream',
  'user',
  'image',
  'mask',
  'input_fidelity',
] as const;

function gptImage(id: string, extra: readonly string[] = []): ModelEntry {
  return {
    id,
    owned_by: 'openai',
    provider: 'openai',
    endpoints: { '/v1/images/generations': 'passthrough', '/v1/images/edits': 'passthrough' },
    supported_parameters: [...GPT_IMAGE_PARAMETERS, ...extra],
    // OpenAI's own ceiling for n on its image routes
    limits: { n: { min: 1, max: 10 } },
    streams: true,
  };
}

// Gemini's image models (docs/providers/gemini.md): the fields the adapter translates or passes on; no `n`
// upstream, so `n` is the gateway's fan-out of one call per image (at most 4, the gateway's own bound)
const GEMINI_IMAGE_PARAMETERS = ['prompt', 'input', 'n', 'size', 'response_format', 'stream', 'parameters.size', 'parameters.n', 'parameters.seed', 'generationConfig', 'safetySettings'] as const;

function geminiImage(id: string, limits: ModelEntry['limits']): ModelEntry {
  return {
    id,
    owned_by: 'google',
    provider: 'gemini',
    endpoints: IMAGE_ROUTES_TRANSLATED,
    supported_parameters: GEMINI_IMAGE_PARAMETERS,
    // the contract's parameters Gemini has nothing for: refused before the resolver, never dropped
    refused_parameters: ['watermark', 'prompt_extend', 'negative_prompt'],
    limits,
    // answered in the completed-event form: the gateway writes the events from the whole answer
    streams: false,
  };
}

// Veo on the video task route (docs/providers/gemini.md "Video (Veo)"): the Ark create fields the adapter
// translates and Veo's own `parameters` it passes, as the Gemini API takes them (Vertex AI takes `seed`
// and `generate_audio` too)
const VEO_PARAMETERS = ['content', 'duration', 'resolution', 'ratio', 'negative_prompt', 'callback_url', 'negativePrompt', 'personGeneration', 'enhancePrompt'] as const;

function veo(id: string, durations: { min: number; max: number }): ModelEntry {
  return {
    id,
    owned_by: 'google',
    provider: 'gemini',
    endpoints: { '/api/v3/contents/generations/tasks': 'native' },
    supported_parameters: VEO_PARAMETERS,
    limits: { durations },
    streams: false,
  };
}

// fal's image endpoints (docs/providers/fal.md): the caller names fal's endpoint id; the adapter maps
// size, n and seed by family and passes the allow-listed fal fields (its FAL_FIELDS)
/** fal's own fields the adapter passes on as they are (lib/providers/fal.ts reads this list): the one allow-list. */
export const FAL_OWN_FIELDS = [
  'guidance_scale',
  'num_inference_steps',
  'output_format',
  'enable_safety_checker',
  'safety_tolerance',
  'negative_prompt',
  'acceleration',
  'enhance_prompt',
  'raw',
  'strength',
  'resolution',
] as const;

const FAL_IMAGE_PARAMETERS = ['prompt', 'input', 'n', 'size', 'response_format', 'stream', 'parameters.size', 'parameters.n', 'parameters.seed', ...FAL_OWN_FIELDS] as const;

function falImage(id: string, limits: ModelEntry['limits']): ModelEntry {
  return {
    id,
    owned_by: 'fal',
    provider: 'fal',
    endpoints: imageRoutes(limits),
    supported_parameters: FAL_IMAGE_PARAMETERS,
    // the contract's parameters fal's endpoints have no input for: refused before the resolver
    refused_parameters: ['watermark', 'prompt_extend'],
    limits,
    streams: false,
  };
}

// Replicate's models under their `owner/name` ids (docs/providers/replicate.md): the fields the adapter
// maps for each family and the own fields it passes; `n` is `num_outputs` where the model has it (1-4),
// the gateway's fan-out of one prediction per image otherwise (at most 4, the gateway's own bound)
const REPLICATE_IMAGE_PARAMETERS = ['prompt', 'input', 'n', 'size', 'response_format', 'stream', 'parameters.size', 'parameters.n'] as const;

function replicateImage(id: string, limits: ModelEntry['limits'], own: readonly string[], seed = true): ModelEntry {
  return {
    id,
    owned_by: 'replicate',
    provider: 'replicate',
    endpoints: imageRoutes(limits),
    supported_parameters: [...REPLICATE_IMAGE_PARAMETERS, ...(seed ? ['parameters.seed'] : []), ...own],
    // the contract's parameters Replicate's image models have no field for: refused before the resolver
    refused_parameters: ['watermark', 'prompt_extend', ...(own.includes('negative_prompt') ? [] : ['negative_prompt'])],
    limits,
    streams: false,
  };
}

// fal's video endpoints (docs/providers/fal.md "Video tasks"): Ark's create shape, mapped by family
const FAL_VIDEO_PARAMETERS = ['content', 'ratio', 'duration', 'watermark', 'callback_url', 'negative_prompt', 'cfg_scale', 'prompt_optimizer', 'enhance_prompt'] as const;

// `extra`: the fields the family has an input for (docs/providers/fal.md "Video tasks")
function falVideo(id: string, durations: NonNullable<ModelEntry['limits']>['durations'], extra: readonly string[] = []): ModelEntry {
  return {
    id,
    owned_by: 'fal',
    provider: 'fal',
    endpoints: { '/api/v3/contents/generations/tasks': 'translated' },
    supported_parameters: [...FAL_VIDEO_PARAMETERS, ...extra],
    limits: { durations },
    streams: false,
  };
}

// the task body in Ark's shape, as the adapter maps it to a Replicate video model's input
function replicateVideo(id: string, fields: readonly string[], durations: NonNullable<ModelEntry['limits']>['durations']): ModelEntry {
  return {
    id,
    owned_by: 'replicate',
    provider: 'replicate',
    endpoints: { '/api/v3/contents/generations/tasks': 'native' },
    supported_parameters: ['content', 'callback_url', ...fields],
    ...(durations ? { limits: { durations } } : {}),
    streams: false,
  };
}

/** Today's vendor models under their vendor names (docs/models.md "Model rows"). */
const VENDOR_MODELS: readonly ModelEntry[] = [
  // DashScope Qwen-Image and Wan (upstreams §1.3)
  dashscope('qwen-image-2.0*', { n: { min: 1, max: 6 }, reference_images: { min: 0, max: 3 }, pixels: { min: 512 * 512, max: 2048 * 2048 } }),
  // unconfirmed beyond the model's existence: the contract's own bounds, the upstream refuses the rest
  dashscope('qwen-image-3.0*', { n: { min: 1, max: 6 }, reference_images: { min: 0, max: 3 } }),
  dashscope('qwen-image-max*', { n: { min: 1, max: 1 }, reference_images: { min: 0, max: 0 } }),
  dashscope('qwen-image-plus*', { n: { min: 1, max: 1 }, reference_images: { min: 0, max: 0 } }),
  dashscope('qwen-image', { n: { min: 1, max: 1 }, reference_images: { min: 0, max: 0 } }),
  dashscope('qwen-image-edit', { n: { min: 1, max: 1 }, reference_images: { min: 1, max: 1 } }),
  dashscope('qwen-image-edit-plus*', { n: { min: 1, max: 6 }, reference_images: { min: 1, max: 3 } }),
  dashscope('qwen-image-edit-max*', { n: { min: 1, max: 6 }, reference_images: { min: 1, max: 3 } }),
  // up to 9 inputs; sets of up to 12 with parameters.enable_sequential (1-4 without: the upstream refuses)
  dashscope('wan2.7-image*', { n: { min: 1, max: 12 }, reference_images: { min: 0, max: 9 } }, ['parameters.enable_sequential', 'parameters.thinking_mode', 'parameters.bbox_list']),
  // Ark Seedream (upstreams §2.7): reference images + generated images <= 15
  seedream('doubao-seedream-4-0*', { n: { min: 1, max: 15 }, reference_images: { min: 0, max: 14 }, tiers: ['1K', '2K', '4K'], pixels: { min: 1280 * 720, max: 4096 * 4096 } }, { streams: true }),
  seedream('doubao-seedream-4-5*', { n: { min: 1, max: 15 }, reference_images: { min: 0, max: 14 }, tiers: ['2K', '4K'], pixels: { min: 2560 * 1440, max: 4704 * 4704 } }, { streams: true }),
  seedream(
    'doubao-seedream-5-0-lite*',
    { n: { min: 1, max: 15 }, reference_images: { min: 0, max: 14 }, tiers: ['2K', '3K'], pixels: { min: 2560 * 1440, max: 10_404_496 } },
    { streams: false, extra: ['output_format'] },
  ),
  // the upstream answers 400 "the parameter `sequential_image_generation` is not supported by the current model"
  seedream(
    'doubao-seedream-5-0-pro*',
    { n: { min: 1, max: 1 }, reference_images: { min: 0, max: 10 } },
    { streams: false, refused: ['sequential_image_generation', 'sequential_image_generation_options'] },
  ),
  seedream('doubao-seedream-5-0-flash*', { n: { min: 1, max: 15 }, reference_images: { min: 0, max: 14 } }, { streams: false }),
  seedream('doubao-seedream-5-5*', { n: { min: 1, max: 15 }, reference_images: { min: 0, max: 14 } }, { streams: false }),
  // Ark Seedance (upstreams §2.2)
  seedance('doubao-seedance-1-0-pro*', { min: 2, max: 12 }),
  seedance('doubao-seedance-1-0-lite*', { min: 2, max: 12 }),
  seedance('doubao-seedance-1-5-pro*', { min: 4, max: 12, auto: true }),
  seedance('doubao-seedance-2-0*', { min: 4, max: 15, auto: true }),
  // unconfirmed beyond `duration: -1`: 2.0's range, so a budget has a maximum to reserve
  seedance('doubao-seedance-2-5*', { min: 4, max: 15, auto: true }),
  // OpenAI-compatible gpt-image (upstreams §4.1-4.2)
  gptImage('gpt-image-1*'),
  gptImage('gpt-image-2*'),
  gptImage('gpt-image-2.5*'),
  gptImage('gpt-image-2.6*', ['complexity']),
  // Gemini API image models (docs/providers/gemini.md); the operator's resolver names the exact id
  geminiImage('gemini-2.5-flash-image*', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 3 } }),
  geminiImage('gemini-3-pro-image*', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 14 }, tiers: ['1K', '2K', '4K'] }),
  geminiImage('gemini-3.1-flash-image*', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 14 }, tiers: ['1K', '2K', '4K'] }),
  // Veo (docs/providers/gemini.md "Video (Veo)"): 4, 6 or 8 seconds for Veo 3 and 3.1, 5 to 8 for Veo 2
  veo('veo-3.1-generate*', { min: 4, max: 8 }),
  veo('veo-3.1-fast-generate*', { min: 4, max: 8 }),
  veo('veo-3.0-generate*', { min: 4, max: 8 }),
  veo('veo-3.0-fast-generate*', { min: 4, max: 8 }),
  veo('veo-2.0-generate*', { min: 5, max: 8 }),
  // fal.ai endpoints under fal's endpoint ids (docs/providers/fal.md); num_images is at most 4 on these
  falImage('fal-ai/flux/dev', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 0 } }),
  falImage('fal-ai/flux/schnell', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 0 } }),
  falImage('fal-ai/flux-pro/v1.1', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 0 } }),
  falImage('fal-ai/flux-pro/v1.1-ultra', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 0 } }),
  falImage('fal-ai/flux-pro/kontext', { n: { min: 1, max: 4 }, reference_images: { min: 1, max: 1 } }),
  falImage('fal-ai/nano-banana', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 0 } }),
  falImage('fal-ai/nano-banana/edit', { n: { min: 1, max: 4 }, reference_images: { min: 1, max: 10 } }),
  falVideo('fal-ai/kling-video*', { min: 5, max: 10 }),
  falVideo('fal-ai/veo3*', { min: 4, max: 8 }, ['resolution', 'seed', 'generate_audio']),
  // Replicate (docs/providers/replicate.md); the operator's resolver names the `owner/name` id
  replicateImage('black-forest-labs/flux-schnell', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 0 } }, [
    'output_format',
    'output_quality',
    'go_fast',
    'num_inference_steps',
    'megapixels',
  ]),
  replicateImage('black-forest-labs/flux-dev', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 1 } }, [
    'output_format',
    'output_quality',
    'go_fast',
    'num_inference_steps',
    'megapixels',
    'guidance',
    'prompt_strength',
  ]),
  replicateImage('black-forest-labs/flux-1.1-pro*', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 1 } }, [
    'output_format',
    'output_quality',
    'safety_tolerance',
    'prompt_upsampling',
    'raw',
    'image_prompt_strength',
  ]),
  replicateImage('black-forest-labs/flux-kontext-*', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 1 } }, ['output_format', 'safety_tolerance', 'prompt_upsampling']),
  replicateImage('google/nano-banana*', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 14 } }, ['output_format', 'resolution', 'safety_filter_level'], false),
  replicateVideo('kwaivgi/kling-*', ['ratio', 'duration', 'negative_prompt', 'mode', 'cfg_scale'], { min: 5, max: 10 }),
  // video-01 makes 6 s videos and takes no duration
  replicateVideo('minimax/video-01*', ['prompt_optimizer'], undefined),
  replicateVideo('minimax/hailuo-*', ['duration', 'resolution', 'prompt_optimizer'], { min: 6, max: 10 }),
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

const BYTEPLUS_MODELS: readonly ModelEntry[] = BYTEPLUS_NAMES.map(([row, id]) => ({ ...VENDOR_MODELS.find((entry) => entry.id === row)!, id }));

/** The default catalogue: the contract's families, then the vendor rows (Ark's names, then BytePlus's). */
export const DEFAULT_MODEL_CATALOGUE: readonly ModelEntry[] = Object.freeze([...DEFAULT_IMAGE_MODELS.map(familyEntry), ...VENDOR_MODELS, ...BYTEPLUS_MODELS]);
