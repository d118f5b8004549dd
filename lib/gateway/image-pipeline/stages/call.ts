// The `call` stage of the image pipeline: the upstreams asked under the fallback rule
// (image-upstream-calls.ts, docs/routing-and-health.md), through a provider's native image capability,
// its own task API, its OpenAI-compatible API or, for a stream, its event stream.
import type { ImageStage } from '../image-work.js';
import { callUpstreams } from '../image-upstream-calls.js';

export const call: ImageStage = {
  name: 'call',
  run: (work, next) =>
    callUpstreams(work.deps, work.usage, work.request, work.prepared!).then((attempted) => {
      work.attempted = attempted;
      return next();
    }),
};
