// The `moderate-input` stage of the image pipeline (docs/content-safety.md): the prompt, the negative
// prompt (each its own check) and the caller's images, as the model's family read them (else as sent), checked under the
// caller's policy once the request is validated and resolved, before any paid call. Without a policy
// nothing is awaited. The policy's core and the checks every route shares are in moderation/.
import type { ImageGenerationRequest } from '../../../images/image-request.js';
import type { RouteName } from '../../../types.js';
import type { GatewayDeps } from '../../gateway-deps.js';
import { type InputImage, checkRequestInput, imageOf, subjectOf, textOfField } from '../../moderation/image-moderation.js';
import type { ActivePolicy, CheckedText, Moderation } from '../../moderation/moderation.js';
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
  const { texts, images } = contentOf(request.input, read);
  return checkRequestInput({ options: deps.options, http: deps.http }, moderation, subjectOf(request.from, request.route, request.model), request.from, texts, images);
}

/**
 * The text fields and the caller's images, as the model's family read them (else as sent). Each text
 * field the gateway forwards is its own check: a negative prompt names what to avoid, so it is never
 * pasted into the prompt's text (docs/content-safety.md "The stages").
 */
function contentOf(input: ImageInput, read: ImageGenerationRequest | undefined): { texts: CheckedText[]; images: InputImage[] } {
  if (read) {
    const prompt: string[] = [];
    const images: InputImage[] = [];
    for (const item of read.content) {
      if ('text' in item) prompt.push(item.text);
      else images.push(imageOf(item.image));
    }
    return { texts: [...textOfField('prompt', prompt.length > 0 ? prompt.join('\n') : undefined), ...textOfField('negative_prompt', read.parameters.negative_prompt)], images };
  }
  if (input.kind === 'form') {
    const { form } = input;
    return { texts: [...textOfField('prompt', form.prompt), ...textOfField('negative_prompt', form.fields.negative_prompt)], images: form.images.map(({ file }) => Buffer.concat(file.chunks)) };
  }
  return { texts: [...textOfField('prompt', input.body.prompt), ...textOfField('negative_prompt', input.body.negative_prompt)], images: [] };
}

export const moderateInput: ImageStage = {
  name: 'moderate-input',
  only: 'moderation',
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
