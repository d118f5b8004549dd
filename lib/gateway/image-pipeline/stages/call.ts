// The `call` stage of the image pipeline: the upstreams asked under the fallback rule
// (image-upstream-calls.ts, docs/routing-and-health.md), through a provider's native image capability,
// its own task API, its OpenAI-compatible API or, for a stream, its event stream. With the
// `provenance` option the caller's provenance is read first: a streamed request whose images are
// reported or signed is asked whole (no partial image reaches the caller unsigned: docs/provenance.md).
import type { ImageStage, ImageWork } from '../image-work.js';
import { callUpstreams } from '../image-upstream-calls.js';

export const call: ImageStage = {
  name: 'call',
  run(work, next) {
    const { provenance } = work.deps.options;
    if (!provenance) return callThen(work, next);
    return provenance.forCaller(work.request.from.caller).then((mine) => {
      if (mine) work.request.provenance = mine;
      return callThen(work, next);
    });
  },
};

function callThen(work: ImageWork, next: () => Promise<void>): Promise<void> {
  return callUpstreams(work.deps, work.usage, work.request, work.prepared!).then((attempted) => {
    work.attempted = attempted;
    return next();
  });
}
