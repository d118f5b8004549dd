// The moderation policy on the image routes outside the image pipeline (docs/content-safety.md): the
// bodies forwarded to an OpenAI-compatible upstream that make images (Ark's native image generation,
// `/api/v3/images/generations`; responses with the `image_generation` tool and chat with an image
// model, conversation-content.ts), all through forward-request.ts, and the video tasks' prompt and
// reference images (video-tasks/video-task-executor.ts). Their input stages run before the resolver and
// any charge; the images they answer are checked as the OpenAI-compatible answers of the image pipeline are.
import { GatewayError } from '../../errors/gateway-error.js';
import { isObject } from '../../json/json-values.js';
import type { ModelCatalogue } from '../../models/model-catalogue.js';
import type { CallContext } from '../../providers/call-context.js';
import type { RouteName } from '../../types.js';
import type { UseCaseRequest, Usage } from '../use-case.js';
import { conversationContent, makesImages } from './conversation-content.js';
import { type InputFetch, type InputImage, checkPassthroughAnswer, checkRequestInput, imageOf, subjectOf, textOfField } from './image-moderation.js';
import type { ActivePolicy, CheckedText, Moderation } from './moderation.js';

/** Whether the policy covers a forwarded body: the native image route always, chat and responses when they make images. */
export function moderatesForward(route: RouteName, body: Readonly<Record<string, unknown>>, model: string, models: ModelCatalogue): boolean {
  return route === 'images.native' || makesImages(route, body, model, models);
}

/**
 * The input stages of a forwarded body the policy covers (moderatesForward): the native image body's
 * prompt, negative prompt (each its own check) and `image` (one value or a list); a chat or responses
 * body's text parts, each its own check named by its path, and its images. Resolves with the caller's
 * policy when it has one.
 */
export async function checkForwardedInput(
  where: InputFetch & { options: { moderation?: Moderation } },
  from: UseCaseRequest,
  route: RouteName,
  model: string,
  body: Record<string, unknown>,
): Promise<ActivePolicy | undefined> {
  const { moderation } = where.options;
  if (!moderation) return undefined;
  const { texts, images } = route === 'images.native' ? nativeContent(body) : conversationContent(route, body);
  return checkRequestInput(where, moderation, subjectOf(from, route, model), from, texts, images, (policy) => {
    if (route === 'images.native') refuseKeyVariants(policy, body, NATIVE_IMAGE_KEYS);
    // a relayed stream would carry the images unchecked: with output checks these routes answer whole only
    if (policy.outputImages && body.stream === true) {
      throw GatewayError.invalidRequest('stream: true is not available for this account: its images are checked before they are answered. Send stream: false.', 'stream');
    }
  });
}

/** The native image body's text fields and images. */
function nativeContent(body: Readonly<Record<string, unknown>>): { texts: CheckedText[]; images: InputImage[] } {
  const values = Array.isArray(body.image) ? (body.image as unknown[]) : body.image === undefined ? [] : [body.image];
  const images = values.filter((value): value is string => typeof value === 'string' && value !== '').map((value) => imageOf(value));
  return { texts: [...textOfField('prompt', body.prompt), ...textOfField('negative_prompt', body.negative_prompt)], images };
}

/** A forwarded answer with its flagged images dropped (docs/content-safety.md "The stages", output images). */
export function checkForwardedAnswer(
  where: InputFetch & { options: { moderation?: Moderation; allowPrivateResultUrls: boolean } },
  active: ActivePolicy,
  from: UseCaseRequest,
  route: RouteName,
  model: string,
  call: CallContext,
  usage: Usage,
  body: Buffer,
): Promise<Buffer> {
  const { moderation } = where.options;
  if (!moderation || !active.outputImages) return Promise.resolve(body);
  return checkPassthroughAnswer({ moderation, active, subject: subjectOf(from, route, model), call, allowPrivate: where.options.allowPrivateResultUrls }, usage, body);
}

/** A video task's text (its text items as the prompt; a `negative_prompt`, which some vendors take, on its own) and reference images (`image_url` items; `asset://` references are the vendor's own and not fetched). */
export async function checkVideoInput(
  where: InputFetch & { options: { moderation?: Moderation } },
  from: UseCaseRequest,
  route: RouteName,
  model: string,
  body: Readonly<Record<string, unknown>>,
  content: ReadonlyArray<Record<string, unknown>>,
): Promise<void> {
  const { moderation } = where.options;
  if (!moderation) return;
  const texts: string[] = [];
  const images: InputImage[] = [];
  for (const item of content) {
    if (typeof item.text === 'string' && item.text !== '') texts.push(item.text);
    const url = isObject(item.image_url) ? item.image_url.url : undefined;
    if (typeof url === 'string' && url !== '' && !/^asset:\/\//i.test(url)) images.push(imageOf(url));
  }
  await checkRequestInput(
    where,
    moderation,
    subjectOf(from, route, model),
    from,
    [...textOfField('prompt', texts.length > 0 ? texts.join('\n') : undefined), ...textOfField('negative_prompt', body.negative_prompt)],
    images,
    (policy) => refuseKeyVariants(policy, { ...body, content }, VIDEO_TASK_KEYS),
  );
}

/** The keys whose values the checks read on a native image body, and on a video task's body. */
const NATIVE_IMAGE_KEYS: ReadonlySet<string> = new Set(['prompt', 'negative_prompt', 'image']);
const VIDEO_TASK_KEYS: ReadonlySet<string> = new Set(['content', 'text', 'image_url', 'url', 'negative_prompt']);

/**
 * A 400 for a key, at any depth, that equals a checked key case-insensitively but not exactly
 * (docs/content-safety.md "Keys that differ only in case"): these bodies are forwarded as they are, and
 * Ark's Go JSON decoder matches keys case-insensitively, so `Prompt` beside a checked `prompt` would reach
 * the vendor unread. Only when the caller's policy checks input; a walk without recursion, so no nesting
 * depth can overflow the stack.
 */
function refuseKeyVariants(active: ActivePolicy, body: unknown, checked: ReadonlySet<string>): void {
  if (!active.prompt && !active.inputImages) return;
  const pending: Array<{ value: unknown; path: string }> = [{ value: body, path: '' }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value, path } = next;
    if (Array.isArray(value)) {
      value.forEach((item, index) => pending.push({ value: item, path: `${path}[${index}]` }));
    } else if (isObject(value)) {
      for (const [key, inner] of Object.entries(value)) {
        const at = path === '' ? key : `${path}.${key}`;
        // Go's case folding also takes the long s (U+017F) for an s, as toLowerCase does the Kelvin sign for a k
        const lower = key.toLowerCase().replace(/\u017f/g, 's');
        if (!checked.has(key) && checked.has(lower)) {
          throw GatewayError.invalidRequest(`${at}: the key ${key} differs from ${lower} only in case, and the vendor may read it as ${lower} unchecked. Send ${lower} only.`, at);
        }
        pending.push({ value: inner, path: at });
      }
    }
  }
}
