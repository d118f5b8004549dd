// The `moderate-input` stage of the image pipeline (docs/content-safety.md): the prompt, the negative
// prompt and the caller's images, as the model's family read them (else as sent), checked under the
// caller's policy once the request is validated and resolved, before any paid call. Without a policy
// nothing is awaited. The policy's core and the checks every route shares are in moderation/.
import type { ImageGenerationRequest } from '../../../images/image-request.js';
import type { RouteName } from '../../../types.js';
import type { GatewayDeps } from '../../gateway-deps.js';
import { type InputImage, checkRequestInput, imageOf, subjectOf } from '../../moderation/image-moderation.js';
import type { ActivePolicy, Moderation } from '../../moderation/moderation.js';
import type { UseCaseRequest } from '../../use-case.js';
import type { ImageInput } from '../image-input.js';
import type { ImageStage } from '../image-work.js';

/**
 * The input stages of an image request: resolves with the caller's active policy (kept on the request
 * for its output stage), or undefined when the caller has none; throws the refusal.
 */
function checkImageInput(
  deps: GatewayDeps,
  moderation: Moderation,
  request: { from: UseCaseRequest; route: RouteName; model: string; input: ImageInput },
  read: ImageGenerationRequest | undefined,
): Promise<ActivePolicy | undefined> {
  const { text, images } = contentOf(request.input, read);
  return checkRequestInput({ options: deps.options, http: deps.http }, moderation, subjectOf(request.from, request.route, request.model), request.from, text, images);
}

/** The prompt text and the caller's images, as the model's family read them (else as sent). */
function contentOf(input: ImageInput, read: ImageGenerationRequest | undefined): { text?: string; images: InputImage[] } {
  if (read) {
    const texts: string[] = [];
    const images: InputImage[] = [];
    for (const item of read.content) {
      if ('text' in item) texts.push(item.text);
      else images.push(imageOf(item.image));
    }
    const negative = read.parameters.negative_prompt;
    if (typeof negative === 'string' && negative !== '') texts.push(negative);
    return { text: texts.join('\n'), images };
  }
  if (input.kind === 'form') return { text: input.form.prompt, images: input.form.images.map(({ file }) => Buffer.concat(file.chunks)) };
  const prompt = input.body.prompt;
  return { ...(typeof prompt === 'string' ? { text: prompt } : {}), images: [] };
}

export const moderateInput: ImageStage = {
  name: 'moderate-input',
  run(work, next) {
    const { moderation } = work.deps.options;
    if (!moderation) return next();
    const { request } = work;
    return checkImageInput(work.deps, moderation, request, work.prepared!.request).then((active) => {
      request.moderation = active;
      return next();
    });
  },
};
