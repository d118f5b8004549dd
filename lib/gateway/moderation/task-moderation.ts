// The output stage for an image task followed on its upstream's own task (image-tasks/upstream-image-task.ts):
// the task's caller's policy is asked again when the images are in (a policy is never stored with the
// task), and the flagged ones are dropped before they are stored or called back (docs/content-safety.md).
import type { ImageGenerationResponse } from '../../images/image-generation-response.js';
import type { CallContext } from '../../providers/call-context.js';
import type { ImageTaskRecord } from '../../stores/tasks/task-store.js';
import type { RouteName } from '../../types.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { Usage, UseCaseRequest } from '../use-case.js';
import { checkImageAnswer, subjectOf } from './image-moderation.js';

/** The bytes checked, index for index with the images kept; undefined when the caller has no output checks. */
export function checkTaskOutput(
  deps: GatewayDeps,
  call: CallContext,
  from: UseCaseRequest,
  record: ImageTaskRecord,
  usage: Usage,
  response: ImageGenerationResponse,
): Promise<Array<Buffer | undefined> | undefined> {
  return checkFollowedOutput(deps, call, from, { route: record.image.route ?? 'images.generations', model: record.model }, usage, response);
}

/** The same for any work followed by its upstream id (an Idempotency-Key request finished by another instance, lapsed-keys.ts). */
export async function checkFollowedOutput(
  deps: GatewayDeps,
  call: CallContext,
  from: UseCaseRequest,
  work: { route: RouteName; model: string },
  usage: Usage,
  response: ImageGenerationResponse,
): Promise<Array<Buffer | undefined> | undefined> {
  const { moderation } = deps.options;
  if (!moderation) return undefined;
  const active = await moderation.policyFor(from.caller);
  if (!active?.outputImages) return undefined;
  const subject = subjectOf(from, work.route, work.model);
  return checkImageAnswer({ moderation, active, subject, call, allowPrivate: deps.options.allowPrivateResultUrls }, usage, response, undefined);
}
