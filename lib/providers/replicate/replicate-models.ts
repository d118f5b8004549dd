// Replicate's rows of the default model catalogue (docs/models.md "Model rows"): image and video models
// under their `owner/name` ids.
import type { ModelEntry } from '../../options/model-catalogue.js';
import { type VideoLimits, imageRoutes, videoTaskRow } from '../../models/model-rows.js';

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
    streams: true,
  };
}

// the task body in Ark's shape, as the adapter maps it to a Replicate video model's input
function replicateVideo(id: string, fields: readonly string[], limits: VideoLimits): ModelEntry {
  return videoTaskRow(id, { ownedBy: 'replicate', provider: 'replicate', parameters: ['content', 'callback_url', ...fields], limits });
}

/** Replicate's models (docs/providers/replicate.md). */
export const REPLICATE_MODELS: readonly ModelEntry[] = [
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
  replicateVideo('kwaivgi/kling-*', ['ratio', 'duration', 'negative_prompt', 'mode', 'cfg_scale'], { durations: { min: 5, max: 10, values: [5, 10] }, ratios: ['16:9', '9:16', '1:1'] }),
  // video-01 makes 6 s videos and takes no duration
  replicateVideo('minimax/video-01*', ['prompt_optimizer'], {}),
  replicateVideo('minimax/hailuo-*', ['duration', 'resolution', 'prompt_optimizer'], { durations: { min: 6, max: 10 } }),
];
