// The `moderate-output` stage of the image pipeline (docs/content-safety.md): the images made, checked
// under the caller's policy before any byte of them is stored, streamed or answered. A flagged image is
// dropped and counted in `usage.flaggedImages`. The bytes the check fetched are kept for `store`, so
// what is stored is exactly what was checked.
import type { CallContext } from '../../../providers/call-context.js';
import type { GatewayDeps } from '../../gateway-deps.js';
import { type OutputCheck, checkImageAnswer, checkPassthroughAnswer, subjectOf } from '../../moderation/image-moderation.js';
import type { ImageRequest } from '../image-preparation.js';
import type { ImageStage } from '../image-work.js';

export const moderateOutput: ImageStage = {
  name: 'moderate-output',
  only: 'moderation',
  run(work, next) {
    const { whole } = work;
    const output = whole && outputCheckOf(work.deps, work.request, work.prepared!.call);
    if (!whole || !output) return next();
    if (whole.kind === 'passthrough') {
      return checkPassthroughAnswer(output, work.usage, whole.response.body).then((body) => {
        work.whole = { kind: 'passthrough', response: { ...whole.response, body } };
        return next();
      });
    }
    return checkImageAnswer(output, work.usage, whole.response, whole.images).then((checked) => {
      if (whole.images && checked) whole.images = checked;
      work.bytes = checked ?? work.bytes;
      return next();
    });
  },
};

/** The output stage of the caller's policy, when it has one (docs/content-safety.md). */
function outputCheckOf(deps: GatewayDeps, request: ImageRequest, call: CallContext): OutputCheck | undefined {
  const { moderation } = deps.options;
  const active = request.moderation;
  if (!moderation || !active?.outputImages) return undefined;
  return { moderation, active, subject: subjectOf(request.from, request.route, request.model), call, allowPrivate: deps.options.allowPrivateResultUrls };
}
