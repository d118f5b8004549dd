// OpenAI's rows of the default model catalogue (docs/models.md "Model rows"): gpt-image, passed through.
import type { ModelEntry } from '../../options/model-catalogue.js';

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

/** OpenAI-compatible gpt-image (upstreams §4.1-4.2). */
export const OPENAI_MODELS: readonly ModelEntry[] = [gptImage('gpt-image-1*'), gptImage('gpt-image-2*'), gptImage('gpt-image-2.5*'), gptImage('gpt-image-2.6*', ['complexity'])];
