// The image pipeline as one list of stages (docs/architecture.md "The image pipeline"): the synchronous
// route and the stream run the whole list, an image task runs `prepare` and `moderate-input` at submit
// (its charge is the task's) and `call` to `store` when it runs. A stage is one file of stages/ and one
// line here; each does its part of the work and hands it on, and the charge wraps what follows it, so
// every failure after it is settled by the books (tenancy/with-charge.ts). A stage that has work only
// with an option (moderation, storage) or only for a stream says so (`only`): each router makes its two
// lists once, for whole and for streamed requests, and a request runs its list without the stages that
// would have nothing to do.
import type { ResolvedOptions } from '../resolve-options.js';
import type { ImageStage, ImageStageName, ImageWork } from './image-work.js';
import { answer } from './stages/answer.js';
import { call } from './stages/call.js';
import { charge } from './stages/charge.js';
import { moderateInput } from './stages/moderate-input.js';
import { moderateOutput } from './stages/moderate-output.js';
import { prepare } from './stages/prepare.js';
import { provenance } from './stages/provenance.js';
import { results } from './stages/results.js';
import { store } from './stages/store.js';

/** The stages of an image request, in order. */
export const IMAGE_STAGES: readonly ImageStage[] = [prepare, moderateInput, charge, call, results, moderateOutput, provenance, store, answer];

/** A stage of a router's list, with its place in IMAGE_STAGES (a run of part of the list is named by places). */
interface PlacedStage {
  readonly stage: ImageStage;
  readonly at: number;
}

/** The stages one router runs: for whole requests, and for streamed ones. */
export interface ImageStageLists {
  readonly whole: readonly PlacedStage[];
  readonly streamed: readonly PlacedStage[];
}

/**
 * The lists of a router with these options: every stage, less those with nothing to do here (the
 * moderation stages without the `moderation` option, `provenance` without its option, `store` without `storage`, and `answer` for a
 * whole request, which is answered what the stages before it left).
 */
export function imageStageLists(options: Pick<ResolvedOptions, 'moderation' | 'provenance' | 'storage'>): ImageStageLists {
  const has = { moderation: options.moderation !== undefined, provenance: options.provenance !== undefined, storage: options.storage !== undefined };
  const placed = IMAGE_STAGES.map((stage, at): PlacedStage => ({ stage, at }));
  const streamed = placed.filter(({ stage }) => stage.only === undefined || stage.only === 'stream' || has[stage.only]);
  return { whole: streamed.filter(({ stage }) => stage.only !== 'stream'), streamed };
}

// one pair of lists per router: its resolved options are made once, frozen, and outlive its requests
const listsOf = new WeakMap<ResolvedOptions, ImageStageLists>();

function routerLists(options: ResolvedOptions): ImageStageLists {
  let lists = listsOf.get(options);
  if (!lists) {
    lists = imageStageLists(options);
    listsOf.set(options, lists);
  }
  return lists;
}

// each stage's place in the list, by name, read when a run of part of it is asked
const PLACES: ReadonlyMap<ImageStageName, number> = new Map(IMAGE_STAGES.map((stage, at) => [stage.name, at]));

/**
 * Runs the stages from `first` to `last` (the whole list by default) on `work`, those of its router's
 * list for its kind of request. Not async: each stage hands back its own promise chain, so no
 * suspended frame per stage waits beside a slow upstream (docs/architecture.md "Performance"). A stage
 * that throws at once rejects the run.
 */
export function runImageStages(work: ImageWork, first: ImageStageName = 'prepare', last: ImageStageName = 'answer'): Promise<void> {
  const from = PLACES.get(first);
  const to = PLACES.get(last);
  if (from === undefined || to === undefined || to < from) return Promise.reject(new Error(`no image stages from ${first} to ${last}`));
  const lists = routerLists(work.deps.options);
  const list = work.request.stream ? lists.streamed : lists.whole;
  // the executor turns a stage that throws at once into the run's rejection
  const step = (index: number): Promise<void> => {
    const placed = list[index];
    if (!placed || placed.at > to) return Promise.resolve();
    if (placed.at < from) return step(index + 1);
    return new Promise<void>((resolve) => resolve(placed.stage.run(work, () => step(index + 1))));
  };
  return step(0);
}
