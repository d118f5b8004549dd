// The request bounds resolved (docs/configuration.md "limits", "imageModels"): the
// `limits` over DEFAULT_LIMITS, what compressed bodies may decode to, and the contract's image families,
// each checked with a fix.
import { GatewayConfigError } from '../../errors/config-error.js';
import { DEFAULT_LIMITS } from '../../default-limits.js';
import { DEFAULT_IMAGE_MODELS, compileImageModelTable, type ImageModelTable } from '../../images/model-families.js';
import type { LimitOptions } from '../../options/gateway-options.js';
import type { CompressedBodiesOptions, GatewayLimits, ImageModelFamily } from '../../options/request-limits.js';

/** What `limits.compressedBodies: true` means. */
const DEFAULT_COMPRESSED_BODIES: Readonly<Required<CompressedBodiesOptions>> = Object.freeze({
  maxDecodedBytes: 1024 * 1024,
  maxRatio: 20,
});

/** The `limits` fields that are objects of their own, resolved by resolveCompressedBodies and resolveImageTasks. */
const LIMIT_GROUPS = new Set(['compressedBodies', 'imageTasks']);
/** The request bounds of the `limits` option over DEFAULT_LIMITS (its `limits.compressedBodies` and `imageTasks` apart). */
export function resolveLimits(limits: LimitOptions | undefined): Readonly<GatewayLimits> {
  if (limits === undefined) return DEFAULT_LIMITS;
  if (limits === null || typeof limits !== 'object') {
    throw new GatewayConfigError('limits_type', 'options.limits must be an object.', 'limits: { jsonBodyBytes: 50 * 1024 * 1024 }');
  }
  const resolved: GatewayLimits = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(limits)) {
    if (LIMIT_GROUPS.has(key)) continue;
    if (!Object.hasOwn(DEFAULT_LIMITS, key)) {
      throw new GatewayConfigError('limit_unknown', `Unknown limit '${key}'.`, `use only: ${[...Object.keys(DEFAULT_LIMITS), ...LIMIT_GROUPS].join(', ')}.`);
    }
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
      throw new GatewayConfigError('limit_value', `limits.${key} must be a positive integer, got ${String(value)}.`, `limits: { ${key}: ${DEFAULT_LIMITS[key as keyof GatewayLimits]} }`);
    }
    resolved[key as keyof GatewayLimits] = value;
  }
  return Object.freeze(resolved);
}

export function resolveCompressedBodies(value: boolean | CompressedBodiesOptions | undefined): Readonly<Required<CompressedBodiesOptions>> | false {
  if (value === undefined || value === false) return false;
  if (value === true) return DEFAULT_COMPRESSED_BODIES;
  const example = 'limits: { compressedBodies: { maxDecodedBytes: 1048576, maxRatio: 20 } } (or true for these defaults)';
  if (value === null || typeof value !== 'object') throw new GatewayConfigError('compressed_bodies_type', 'options.limits.compressedBodies must be a boolean or an object.', example);
  const resolved = { ...DEFAULT_COMPRESSED_BODIES };
  for (const [key, item] of Object.entries(value)) {
    if (!Object.hasOwn(DEFAULT_COMPRESSED_BODIES, key)) {
      throw new GatewayConfigError('compressed_bodies_unknown', `Unknown limits.compressedBodies option '${key}'.`, `use only: ${Object.keys(DEFAULT_COMPRESSED_BODIES).join(', ')}.`);
    }
    if (item === undefined) continue;
    if (typeof item !== 'number' || !Number.isSafeInteger(item) || item <= 0) {
      throw new GatewayConfigError('compressed_bodies_value', `limits.compressedBodies.${key} must be a positive integer, got ${String(item)}.`, example);
    }
    resolved[key as keyof CompressedBodiesOptions] = item;
  }
  return Object.freeze(resolved);
}

export function resolveImageModels(families: readonly ImageModelFamily[] | undefined): ImageModelTable {
  if (families === undefined) return compileImageModelTable(DEFAULT_IMAGE_MODELS);
  if (!Array.isArray(families)) {
    throw new GatewayConfigError('image_models_type', 'options.imageModels must be an array of families.', "imageModels: [{ pattern: 'x-image-2.0*', minImages: 0, maxImages: 3, maxN: 6 }]");
  }
  families.forEach((family: ImageModelFamily, index: number) => {
    const where = `options.imageModels[${index}]`;
    const example = "{ pattern: 'x-image-edit*', minImages: 1, maxImages: 3, maxN: 6 }";
    if (!family || typeof family.pattern !== 'string' || family.pattern.replace(/\*$/, '') === '') {
      throw new GatewayConfigError('image_models_pattern', `${where}.pattern must be a model name or a prefix ending in '*'.`, example);
    }
    for (const key of ['minImages', 'maxImages', 'maxN'] as const) {
      if (!Number.isSafeInteger(family[key]) || family[key] < 0) {
        throw new GatewayConfigError('image_models_number', `${where}.${key} must be a whole number >= 0.`, example);
      }
    }
    if (family.minImages > family.maxImages || family.maxN < 1) {
      throw new GatewayConfigError('image_models_range', `${where} needs minImages <= maxImages and maxN >= 1.`, example);
    }
  });
  return compileImageModelTable(families);
}
