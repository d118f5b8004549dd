// Which catalogue row a routed request follows (lib/gateway/routing/catalogue-routing.ts, docs/models.md "Which
// row a request follows"): the caller-facing entry of the name (the host's `models`, a contract family)
// first, else the upstream model's row written for the routed provider, else the name's own row, else
// none; and the edit-only rows listed for edits alone.
import { describe, expect, it } from 'vitest';
import { rowFor } from '../../lib/gateway/routing/catalogue-routing.js';
import { resolveModelCatalogue } from '../../lib/models/model-catalogue.js';
import { imageRoutes } from '../../lib/models/model-rows.js';
import { defaultModelRows, isVendorRow, modelEntry } from '../../lib/providers/registry.js';
import type { ModelEntry, Upstream } from '../../lib/index.js';

const mine: ModelEntry = { ...modelEntry('qwen-image-2.0')!, id: 'ds-own' };
const catalogue = resolveModelCatalogue([mine], defaultModelRows(), isVendorRow);
const id = (entry: ModelEntry | undefined): string | undefined => entry?.id;

describe('rowFor', () => {
  const cases: Array<[string, string, Pick<Upstream, 'provider' | 'model'> | undefined, string | undefined]> = [
    ['a host name follows its upstream model', 'ds-plus', { provider: 'dashscope', model: 'qwen-image-plus' }, 'qwen-image-plus*'],
    ['a dated upstream model by its prefix row', 'poster', { provider: 'ark', model: 'doubao-seedream-4-0-250828' }, 'doubao-seedream-4-0*'],
    ['an openai row serves an azure upstream', 'house-gpt', { provider: 'azure', model: 'gpt-image-1' }, 'gpt-image-1*'],
    ['a row of another provider is not followed', 'ds-plus', { provider: 'fal', model: 'qwen-image-plus' }, undefined],
    ['a name no row describes passes through', 'house-model', { provider: 'openai', model: 'acme-model' }, undefined],
    ['an upstream without model: the name’s own row', 'qwen-image-max', { provider: 'dashscope' }, 'qwen-image-max*'],
    ['a vendor name renamed: the upstream row wins', 'qwen-image-plus', { provider: 'dashscope', model: 'qwen-image-edit-plus' }, 'qwen-image-edit-plus*'],
    ['an upstream model no row covers: the name’s own row (an Azure deployment)', 'gpt-image-1', { provider: 'azure', model: 'my-deployment' }, 'gpt-image-1*'],
    ['a host models entry wins over the upstream row', 'ds-own', { provider: 'dashscope', model: 'qwen-image-plus' }, 'ds-own'],
    ['a contract family wins over the upstream row', 'x-image-edit', { provider: 'dashscope', model: 'qwen-image-plus' }, 'x-image-edit*'],
    ['no upstream: the name’s own row', 'qwen-image', undefined, 'qwen-image'],
  ];
  it.each(cases)('%s', (_name, model, upstream, expected) => {
    expect(id(rowFor(catalogue, model, upstream))).toBe(expected);
  });

  it('a models function that keeps a default row keeps it a vendor row; a copy under another name is the host’s', () => {
    const kept = resolveModelCatalogue((defaults) => defaults.filter((entry) => entry.provider === 'dashscope'), defaultModelRows(), isVendorRow);
    expect(kept.named('qwen-image-plus')).toBeUndefined();
    expect(kept.find('qwen-image-plus')?.id).toBe('qwen-image-plus*');
    expect(catalogue.named('ds-own')?.id).toBe('ds-own');
    expect(catalogue.named('x-image-2.0')?.id).toBe('x-image-2.0*');
  });
});

describe('imageRoutes', () => {
  const cases: Array<[string, ModelEntry['limits'], string[]]> = [
    ['text to image only', { reference_images: { min: 0, max: 0 } }, ['/v1/images/generations']],
    ['takes images or not', { reference_images: { min: 0, max: 3 } }, ['/v1/images/generations', '/v1/images/edits']],
    ['needs an image: edits only', { reference_images: { min: 1, max: 3 } }, ['/v1/images/edits']],
    ['no limits', undefined, ['/v1/images/generations', '/v1/images/edits']],
  ];
  it.each(cases)('%s', (_name, limits, endpoints) => {
    expect(Object.keys(imageRoutes(limits))).toEqual(endpoints);
  });
});
