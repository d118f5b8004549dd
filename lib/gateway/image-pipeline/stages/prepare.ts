// The `prepare` stage of the image pipeline (docs/models.md "Which row a request follows"): the row the
// request follows, validation by it, and the resolver's upstreams (image-preparation.ts). Bad input
// never reaches the resolver, and nothing is charged or called here.
import type { ImageStage } from '../image-work.js';
import { prepareImageRequest } from '../image-preparation.js';

export const prepare: ImageStage = {
  name: 'prepare',
  run: (work, next) =>
    prepareImageRequest(work.deps, work.request).then((prepared) => {
      work.prepared = prepared;
      work.usage.imagesAsked = prepared.asked;
      return next();
    }),
};
