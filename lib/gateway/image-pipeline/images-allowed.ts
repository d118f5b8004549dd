// How many images an image request may be answered with, and so is charged for
// (docs/tenancy-and-billing.md): the `n` its model's family allows when the gateway translates, or
// what an OpenAI-compatible upstream is sent. The upstream never decides more (image-pipeline.ts cuts
// what it answers beyond this).
import type { ImageGenerationRequest } from '../../images/image-request.js';
import { readImageCount } from '../../images/image-count.js';
import type { ImageModelFamily } from '../../options/request-limits.js';
import type { Provider } from '../../providers/provider.js';
import { nativeImageGroups } from '../../providers/registry.js';
import { type ImageInput, requestedImagesOf } from './image-input.js';

/**
 * contract §2.3 `n` (default 1), or the image group the request sets itself where its upstream makes
 * groups (`groups`: Ark's `sequential_image_generation`, which its translation keeps), whichever is
 * larger; never more than the family allows (reading the request refused larger `n`: image-preparation.ts).
 */
export function allowedImages(request: ImageGenerationRequest, family: ImageModelFamily, groups?: Pick<NonNullable<Provider['imageGroups']>, 'asked'>): number {
  const n = request.parameters.n;
  const asked = typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : 1;
  const group = groups && request.extra ? groups.asked(request.extra) : 1;
  return Math.min(Math.max(asked, group), family.maxN);
}

// OpenAI's own ceiling for `n` on its image routes: a larger ask is refused, never forwarded as sent
const MAX_PASSTHROUGH_N = 10;

/**
 * The most images an OpenAI-compatible upstream may answer: `n` as it is sent (one whole number up to
 * OpenAI's ceiling, 1 when absent), or an image group the JSON body asks for (Ark's
 * `sequential_image_generation`, the same rule as the native route: docs/tenancy-and-billing.md), whichever
 * is larger: an upstream honours one or the other.
 */
export function forwardedCount(input: ImageInput): number {
  const n = readImageCount(requestedImagesOf(input), 'n', MAX_PASSTHROUGH_N, input.kind) ?? 1;
  if (input.kind === 'form') return n;
  const groups = nativeImageGroups();
  return groups ? Math.max(n, groups.asked(input.body)) : n;
}
