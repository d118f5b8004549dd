// fal's rows of the default model catalogue (docs/models.md "Model rows"): image and video endpoints under
// fal's endpoint ids, and the one allow-list of fal's own fields.
import type { ModelEntry } from '../../options/model-catalogue.js';
import { type VideoLimits, imageRoutes, videoTaskRow } from '../../models/model-rows.js';

// fal's image endpoints (docs/providers/fal.md): the caller names fal's endpoint id; the adapter maps
// size, n and seed by family and passes the allow-listed fal fields (its FAL_FIELDS)
/** fal's own fields the adapter passes on as they are (lib/providers/fal/fal.ts reads this list): the one allow-list. */
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
    streams: true,
  };
}

// fal's video endpoints (docs/providers/fal.md "Video tasks"): Ark's create shape, mapped by family
const FAL_VIDEO_PARAMETERS = ['content', 'ratio', 'duration', 'watermark', 'callback_url', 'negative_prompt', 'cfg_scale', 'prompt_optimizer', 'enhance_prompt'] as const;

// `extra`: the fields the family has an input for (docs/providers/fal.md "Video tasks")
function falVideo(id: string, limits: VideoLimits, extra: readonly string[] = []): ModelEntry {
  return videoTaskRow(id, { ownedBy: 'fal', provider: 'fal', serving: 'translated', parameters: [...FAL_VIDEO_PARAMETERS, ...extra], limits });
}

/** fal.ai endpoints (docs/providers/fal.md). */
export const FAL_MODELS: readonly ModelEntry[] = [
  // fal.ai endpoints under fal's endpoint ids (docs/providers/fal.md); num_images is at most 4 on these
  falImage('fal-ai/flux/dev', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 0 } }),
  falImage('fal-ai/flux/schnell', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 0 } }),
  falImage('fal-ai/flux-pro/v1.1', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 0 } }),
  falImage('fal-ai/flux-pro/v1.1-ultra', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 0 } }),
  falImage('fal-ai/flux-pro/kontext', { n: { min: 1, max: 4 }, reference_images: { min: 1, max: 1 } }),
  falImage('fal-ai/nano-banana', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 0 } }),
  falImage('fal-ai/nano-banana/edit', { n: { min: 1, max: 4 }, reference_images: { min: 1, max: 10 } }),
  // Kling makes 5 or 10 s at 16:9, 9:16 or 1:1 and takes no resolution; Veo 3 on fal 4, 6 or 8 s
  falVideo('fal-ai/kling-video*', { durations: { min: 5, max: 10, values: [5, 10] }, ratios: ['16:9', '9:16', '1:1'] }),
  falVideo('fal-ai/veo3*', { durations: { min: 4, max: 8, values: [4, 6, 8] }, resolutions: ['720p', '1080p'], ratios: ['16:9', '9:16'] }, ['resolution', 'seed', 'generate_audio']),
];
