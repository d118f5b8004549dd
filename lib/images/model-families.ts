// The image model families of contract §1 and what each may do (contract §2.2 rules 1-3, §8; per-model limits
// from upstreams §1.3). Configurable through `imageModels`; this is the default table.
import type { ImageModelFamily } from '../options/request-limits.js';

export const DEFAULT_IMAGE_MODELS: readonly ImageModelFamily[] = Object.freeze([
  // text-to-image and editing, 0-3 images; qwen-image-2.x allows n 1-6
  Object.freeze({ pattern: 'x-image-2.0*', minImages: 0, maxImages: 3, maxN: 6 }),
  // text-to-image only (contract §2.2 rule 1: no image field at all); qwen-image-max/plus accept n = 1 only
  Object.freeze({ pattern: 'x-image-max', minImages: 0, maxImages: 0, maxN: 1 }),
  Object.freeze({ pattern: 'x-image-plus', minImages: 0, maxImages: 0, maxN: 1 }),
  // editing, 1-3 images; qwen-image-edit-plus/-max allow n 1-6 (contract §8: "normally 1")
  Object.freeze({ pattern: 'x-image-edit*', minImages: 1, maxImages: 3, maxN: 6 }),
]);

/** Families compiled for lookup: exact names in a map, prefixes checked in table order. */
export interface ImageModelTable {
  readonly families: readonly ImageModelFamily[];
  find(model: string): ImageModelFamily | undefined;
}

export function compileImageModelTable(families: readonly ImageModelFamily[]): ImageModelTable {
  const frozen = Object.freeze(families.map((family) => Object.freeze({ ...family })));
  const cache = new Map<string, ImageModelFamily | undefined>();
  return Object.freeze({
    families: frozen,
    find(model: string): ImageModelFamily | undefined {
      if (cache.has(model)) return cache.get(model);
      // first match in table order wins, as a reader of the table would expect
      const found = frozen.find((family) => (family.pattern.endsWith('*') ? model.startsWith(family.pattern.slice(0, -1)) : model === family.pattern));
      // bounded: arbitrary caller-chosen model names must not grow the cache without end
      if (cache.size < 1024) cache.set(model, found);
      return found;
    },
  });
}

/** Used when a translated model matches no family: the most the structure allows (contract §8). */
export const GENERIC_IMAGE_FAMILY: ImageModelFamily = Object.freeze({ pattern: '*', minImages: 0, maxImages: 3, maxN: 6 });
