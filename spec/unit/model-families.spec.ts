// compileImageModelTable with DEFAULT_IMAGE_MODELS: which family of contract §1 a model name falls in.
import { describe, expect, it } from 'vitest';
import { DEFAULT_IMAGE_MODELS, compileImageModelTable } from '../../lib/images/model-families.js';
import type { ImageModelFamily } from '../../lib/options/request-limits.js';

const FAMILY_2_0: ImageModelFamily = { pattern: 'x-image-2.0*', minImages: 0, maxImages: 3, maxN: 6 };
const FAMILY_MAX: ImageModelFamily = { pattern: 'x-image-max', minImages: 0, maxImages: 0, maxN: 1 };
const FAMILY_PLUS: ImageModelFamily = { pattern: 'x-image-plus', minImages: 0, maxImages: 0, maxN: 1 };
const FAMILY_EDIT: ImageModelFamily = { pattern: 'x-image-edit*', minImages: 1, maxImages: 3, maxN: 6 };

describe('compileImageModelTable(DEFAULT_IMAGE_MODELS).find', () => {
  const table = compileImageModelTable(DEFAULT_IMAGE_MODELS);

  it.each<{ model: string; family: ImageModelFamily | undefined }>([
    { model: 'x-image-2.0', family: FAMILY_2_0 },
    { model: 'x-image-2.0-pro', family: FAMILY_2_0 },
    { model: 'x-image-2.0-2026-03-03', family: FAMILY_2_0 },
    { model: 'x-image-max', family: FAMILY_MAX },
    { model: 'x-image-max-2', family: undefined }, // exact name, not a prefix
    { model: 'x-image-plus', family: FAMILY_PLUS },
    { model: 'x-image-plus-2026-01-09', family: undefined },
    { model: 'x-image-edit', family: FAMILY_EDIT },
    { model: 'x-image-edit-plus', family: FAMILY_EDIT },
    { model: 'x-image-edit-max', family: FAMILY_EDIT },
    { model: 'x-image', family: undefined },
    { model: 'X-IMAGE-2.0', family: undefined }, // model names are case-sensitive
    { model: 'gpt-image-1', family: undefined },
    { model: '', family: undefined },
  ])('$model', ({ model, family }) => {
    expect(table.find(model)).toEqual(family);
    // a second lookup (from the cache) answers the same
    expect(table.find(model)).toEqual(family);
  });

  it('keeps the table in order, frozen', () => {
    expect(table.families).toEqual([FAMILY_2_0, FAMILY_MAX, FAMILY_PLUS, FAMILY_EDIT]);
    expect(Object.isFrozen(table.families)).toBe(true);
    expect(table.families.every((family) => Object.isFrozen(family))).toBe(true);
  });

  it.each<{ name: string; families: ImageModelFamily[]; model: string; expected: ImageModelFamily | undefined }>([
    {
      name: 'the first matching family in table order wins',
      families: [
        { pattern: 'y-*', minImages: 0, maxImages: 3, maxN: 6 },
        { pattern: 'y-edit', minImages: 1, maxImages: 1, maxN: 1 },
      ],
      model: 'y-edit',
      expected: { pattern: 'y-*', minImages: 0, maxImages: 3, maxN: 6 },
    },
    {
      name: 'an exact name listed first wins over a later prefix',
      families: [
        { pattern: 'y-edit', minImages: 1, maxImages: 1, maxN: 1 },
        { pattern: 'y-*', minImages: 0, maxImages: 3, maxN: 6 },
      ],
      model: 'y-edit',
      expected: { pattern: 'y-edit', minImages: 1, maxImages: 1, maxN: 1 },
    },
  ])('$name', ({ families, model, expected }) => {
    expect(compileImageModelTable(families).find(model)).toEqual(expected);
  });
});
