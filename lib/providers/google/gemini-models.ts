// The Gemini API's rows of the default model catalogue (docs/models.md "Model rows"): its image models and Veo.
import type { ModelEntry } from '../../options/model-catalogue.js';
import { IMAGE_ROUTES_TRANSLATED, type VideoLimits, videoTaskRow } from '../../models/model-rows.js';

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
    streams: true,
  };
}

// Veo on the video task route (docs/providers/gemini.md "Video (Veo)"): the Ark create fields the adapter
// translates and Veo's own `parameters` it passes, as the Gemini API takes them (Vertex AI takes `seed`
// and `generate_audio` too)
const VEO_PARAMETERS = ['content', 'duration', 'resolution', 'ratio', 'negative_prompt', 'callback_url', 'negativePrompt', 'personGeneration', 'enhancePrompt'] as const;

// Veo's resolutions and aspect ratios (docs/providers/gemini.md "Video (Veo)"): 720p and 1080p for Veo 3, 720p for Veo 2
const VEO_RATIOS = ['16:9', '9:16'] as const;

function veo(id: string, durations: NonNullable<VideoLimits['durations']>, resolutions: readonly string[] = ['720p', '1080p']): ModelEntry {
  return videoTaskRow(id, { ownedBy: 'google', provider: 'gemini', parameters: VEO_PARAMETERS, limits: { durations, resolutions, ratios: VEO_RATIOS } });
}

const VEO_3_LENGTHS = { min: 4, max: 8, values: [4, 6, 8] };

/** Gemini API image models and Veo (docs/providers/gemini.md). */
export const GEMINI_MODELS: readonly ModelEntry[] = [
  // Gemini API image models (docs/providers/gemini.md); the operator's resolver names the exact id
  geminiImage('gemini-2.5-flash-image*', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 3 } }),
  geminiImage('gemini-3-pro-image*', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 14 }, tiers: ['1K', '2K', '4K'] }),
  geminiImage('gemini-3.1-flash-image*', { n: { min: 1, max: 4 }, reference_images: { min: 0, max: 14 }, tiers: ['1K', '2K', '4K'] }),
  // Veo (docs/providers/gemini.md "Video (Veo)"): 4, 6 or 8 seconds for Veo 3 and 3.1, 5 to 8 for Veo 2
  veo('veo-3.1-generate*', VEO_3_LENGTHS),
  veo('veo-3.1-fast-generate*', VEO_3_LENGTHS),
  veo('veo-3.0-generate*', VEO_3_LENGTHS),
  veo('veo-3.0-fast-generate*', VEO_3_LENGTHS),
  veo('veo-2.0-generate*', { min: 5, max: 8 }, ['720p']),
];
