// The image pipeline as one list of stages (docs/architecture.md "The image pipeline"): the synchronous
// route and the stream run the whole list, an image task runs `prepare` and `moderate-input` at submit
// (its charge is the task's) and `call` to `store` when it runs. A stage is one file of stages/ and one
// line here; each does its part of the work and hands it on, and the charge wraps what follows it, so
// every failure after it is settled by the books (tenancy/with-charge.ts).
import type { ImageStage, ImageStageName, ImageWork } from './image-work.js';
import { answer } from './stages/answer.js';
import { call } from './stages/call.js';
import { charge } from './stages/charge.js';
import { moderateInput } from './stages/moderate-input.js';
import { moderateOutput } from './stages/moderate-output.js';
import { prepare } from './stages/prepare.js';
import { results } from './stages/results.js';
import { store } from './stages/store.js';

/** The stages of an image request, in order. */
export const IMAGE_STAGES: readonly ImageStage[] = [prepare, moderateInput, charge, call, results, moderateOutput, store, answer];

const positionOf = (name: ImageStageName): number => IMAGE_STAGES.findIndex((stage) => stage.name === name);

/**
 * Runs the stages from `first` to `last` (the whole list by default) on `work`. Not async: each stage
 * hands back its own promise chain, so no suspended frame per stage waits beside a slow upstream
 * (docs/architecture.md "Performance"). A stage that throws at once rejects the run.
 */
export function runImageStages(work: ImageWork, first: ImageStageName = 'prepare', last: ImageStageName = 'answer'): Promise<void> {
  const from = positionOf(first);
  const to = positionOf(last);
  if (from === -1 || to < from) return Promise.reject(new Error(`no image stages from ${first} to ${last}`));
  // the executor turns a stage that throws at once into the run's rejection
  const step = (at: number): Promise<void> => (at > to ? Promise.resolve() : new Promise<void>((resolve) => resolve(IMAGE_STAGES[at]!.run(work, () => step(at + 1)))));
  return step(from);
}
