// The image pipeline's list of stages (docs/architecture.md "The image pipeline"): the order the docs
// give is the order the code runs, a run of part of the list runs only that part, and a router's lists
// leave out the stages its options give nothing to do.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IMAGE_STAGES, imageStageLists, runImageStages } from '../../lib/gateway/image-pipeline/image-stages.js';
import type { ResolvedOptions } from '../../lib/gateway/resolve-options.js';
import type { ImageWork } from '../../lib/gateway/image-pipeline/image-work.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The stage column of the docs' table, in order. */
function documentedStages(): string[] {
  const page = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = page.slice(page.indexOf('## The image pipeline'));
  const table = section.slice(0, section.indexOf('Who runs which stages'));
  return [...table.matchAll(/^\| `([a-z-]+)` \| `stages\//gm)].map((match) => match[1]!);
}

describe('the image stages', () => {
  it('run in the order docs/architecture.md gives, each in a file named after it', () => {
    expect(IMAGE_STAGES.map((stage) => stage.name)).toEqual(documentedStages());
    expect(documentedStages()).toEqual(['prepare', 'moderate-input', 'charge', 'call', 'results', 'moderate-output', 'provenance', 'store', 'answer']);
  });

  it('a run of a slice that ends before it begins is refused before any stage runs', async () => {
    const work = {} as ImageWork;
    await expect(runImageStages(work, 'store', 'call')).rejects.toThrow('no image stages from store to call');
    expect(work).toEqual({});
  });

  it.each([
    {
      options: {},
      whole: ['prepare', 'charge', 'call', 'results'],
      streamed: ['prepare', 'charge', 'call', 'results', 'answer'],
    },
    {
      options: { moderation: {} },
      whole: ['prepare', 'moderate-input', 'charge', 'call', 'results', 'moderate-output'],
      streamed: ['prepare', 'moderate-input', 'charge', 'call', 'results', 'moderate-output', 'answer'],
    },
    {
      options: { storage: {} },
      whole: ['prepare', 'charge', 'call', 'results', 'store'],
      streamed: ['prepare', 'charge', 'call', 'results', 'store', 'answer'],
    },
    {
      options: { moderation: {}, storage: {} },
      whole: ['prepare', 'moderate-input', 'charge', 'call', 'results', 'moderate-output', 'store'],
      streamed: ['prepare', 'moderate-input', 'charge', 'call', 'results', 'moderate-output', 'store', 'answer'],
    },
    {
      options: { provenance: {}, storage: {} },
      whole: ['prepare', 'charge', 'call', 'results', 'provenance', 'store'],
      streamed: ['prepare', 'charge', 'call', 'results', 'provenance', 'store', 'answer'],
    },
  ])('a router with $options runs $whole for a whole request, and the answer stage for a stream only', ({ options, whole, streamed }) => {
    const lists = imageStageLists(options as Pick<ResolvedOptions, 'moderation' | 'provenance' | 'storage'>);
    expect(lists.whole.map(({ stage }) => stage.name)).toEqual(whole);
    expect(lists.streamed.map(({ stage }) => stage.name)).toEqual(streamed);
    // each keeps its place in the one list, by which a run of part of it is named
    for (const { stage, at } of [...lists.whole, ...lists.streamed]) expect(IMAGE_STAGES[at]).toBe(stage);
  });
});
