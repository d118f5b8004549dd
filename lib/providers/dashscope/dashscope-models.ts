// DashScope's rows of the default model catalogue (docs/models.md "Model rows"): Qwen-Image and Wan under
// their vendor names, and the contract's families (contract §1), which are its multimodal call's.
import type { ModelEntry } from '../../options/model-catalogue.js';
import type { ImageModelFamily } from '../../options/request-limits.js';
import { CONTRACT_PARAMETERS, familyEntry, imageRoutes } from '../../models/model-rows.js';

/** A contract §1 family as a catalogue row, owned by DashScope, whose multimodal call the contract describes. */
export function dashscopeFamilyRow(family: ImageModelFamily): ModelEntry {
  return familyEntry(family, 'dashscope');
}

function dashscope(id: string, limits: ModelEntry['limits'], extra: readonly string[] = []): ModelEntry {
  return { id, owned_by: 'dashscope', provider: 'dashscope', endpoints: imageRoutes(limits), supported_parameters: [...CONTRACT_PARAMETERS, ...extra], limits, streams: true };
}

/** DashScope Qwen-Image and Wan (upstreams §1.3). */
export const DASHSCOPE_MODELS: readonly ModelEntry[] = [
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
];
