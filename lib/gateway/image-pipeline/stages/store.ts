// The `store` stage of the image pipeline (docs/durable-results.md): with result storage, every image is
// written to the operator's store, from the bytes already known when there are any, and `url` answers
// the store's URL (results/rehost-images.ts). A stream carries the bytes themselves: nothing is stored
// for it.
import { rehostImageAnswer, rehostPassthrough } from '../../results/rehost-images.js';
import { requestedFormatOf } from '../image-input.js';
import type { ImageStage } from '../image-work.js';

export const store: ImageStage = {
  name: 'store',
  only: 'storage',
  run(work, next) {
    const { whole, request, deps, usage } = work;
    if (!whole || request.stream) return next();
    if (whole.kind === 'passthrough') {
      // images the upstream answered by URL that `provenance` hands on as bytes are answered by URL, as they came
      return rehostPassthrough(deps, usage, request.from, whole.response, work.urlsAsBytes ? 'url' : requestedFormatOf(request.input)).then((response) => {
        work.whole = { kind: 'passthrough', response };
        return next();
      });
    }
    return rehostImageAnswer(deps, usage, request.from, whole.response, work.bytes).then(() => {
      // an upstream that answers bytes only (Gemini): once stored, a caller who asked for `url` gets the
      // URL alone; one who did not ask keeps the bytes the model answers by default beside it, since
      // clients such as the Vercel AI SDK's edit read b64_json without asking (docs/routes.md "The answer")
      if (requestedFormatOf(request.input) === 'url') for (const item of whole.response.data) if (item.url !== '' && item.b64_json !== '') item.b64_json = '';
      return next();
    });
  },
};
