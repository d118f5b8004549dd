// The moderation policy on the image pipeline (docs/content-safety.md): the prompt and the caller's images
// checked once the request is validated and before the resolver and any paid call (image-pipeline/moderate-input.ts;
// image tasks prepare at submit, so before their 202), and the images made checked before any byte of
// them is answered, stored, called back or streamed (image-pipeline.ts, image-tasks/). A flagged image
// made is dropped and counted in `usage.flaggedImages`; the tenant pays for it as for work lost by its
// own act (ledger/reckoning.ts: lostBy 'flagged'), since the vendor made it at the tenant's request.
import { ContentPolicyError } from '../../errors/content-policy-error.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ImageGenerationResponse } from '../../images/image-generation-response.js';
import { UploadedImage } from '../../images/uploaded-image.js';
import { sniffImageType } from '../../images/sniff-image-type.js';
import { DataUrlText } from '../../json/data-url-text.js';
import { parseJsonBody } from '../../json/json-values.js';
import type { ModerationImage } from '../../options/moderation-options.js';
import type { CallContext } from '../../providers/call-context.js';
import type { RouteName } from '../../types.js';
import type { ResolvedOptions } from '../resolve-options.js';
import type { UpstreamHttp } from '../../transport/upstream-http.js';
import type { Usage, UseCaseRequest } from '../use-case.js';
import { dropImages, imagesOfAnswer } from './answer-images.js';
import { type ActivePolicy, type CheckedText, type InputImages, type Moderation, type ModerationSubject, unavailable } from './moderation.js';

/** A request's subject: who, where, which model. */
export function subjectOf(from: UseCaseRequest, route: RouteName, model: string): ModerationSubject {
  return { requestId: from.requestId ?? '', caller: from.caller, route, model };
}

/** An image as a checker gets it. */
function moderationImage(bytes: Buffer, mediaType = sniffImageType(bytes.subarray(0, 32)) ?? 'application/octet-stream'): ModerationImage {
  return { mediaType, bytes, dataUrl: () => `data:${mediaType};base64,${bytes.toString('base64')}` };
}

/**
 * The input stages of any request: the caller's policy looked up, its text fields and images checked
 * (images fetched only then); `beforeChecks` refuses what the policy makes uncheckable, before any check.
 */
export async function checkRequestInput(
  where: InputFetch,
  moderation: Moderation,
  subject: ModerationSubject,
  from: UseCaseRequest,
  texts: readonly CheckedText[],
  images: readonly InputImage[],
  beforeChecks?: (active: ActivePolicy) => void,
): Promise<ActivePolicy | undefined> {
  const active = await moderation.policyFor(from.caller);
  if (!active) return undefined;
  beforeChecks?.(active);
  const fetched = (): Promise<InputImages> =>
    Promise.all(
      images.map((image) =>
        bytesOf(where, image, from).catch((error: unknown) => {
          // a URL the gateway cannot fetch is the caller's 400, unless the policy lets unchecked content through
          if (active.refuseOnError || !GatewayError.is(error)) throw error;
          return undefined;
        }),
      ),
    ).then((list) => ({ images: list.filter((image): image is ModerationImage => image !== undefined), unfetched: list.filter((image) => image === undefined).length }));
  await moderation.checkInputs(active, subject, texts, fetched);
  return active;
}

/**
 * The text of a field as the checker reads it: a string as it is; any other value the gateway forwards
 * (a list, an object) as its JSON, so nothing forwarded goes unread; nothing for an absent field.
 */
export function textOfField(field: CheckedText['field'], value: unknown): CheckedText[] {
  if (value === undefined || value === null) return [];
  return [{ field, text: typeof value === 'string' ? value : JSON.stringify(value) }];
}

/** A caller's image: its bytes, or a URL fetched for the check. */
export type InputImage = Buffer | { url: string };

/** What fetching a caller's image URL needs. */
export interface InputFetch {
  options: Pick<ResolvedOptions, 'limits' | 'allowPrivateImageUrls'>;
  http: UpstreamHttp;
}

/** An image value of a request (a Data URL, a URL, an upload) as bytes or a URL to fetch. */
export function imageOf(image: string | UploadedImage | DataUrlText): InputImage {
  if (image instanceof UploadedImage) return Buffer.concat(image.chunks);
  const text = image instanceof DataUrlText ? image.text.toString('latin1') : image;
  if (/^data:/i.test(text)) return Buffer.from(text.slice(text.indexOf(',') + 1), 'base64');
  return { url: text };
}

/** An image's bytes: a URL fetched under the rules of the caller's image URLs (json-edit.ts), its failure the caller's 400. */
async function bytesOf({ options, http }: InputFetch, image: InputImage, from: UseCaseRequest): Promise<ModerationImage> {
  if (Buffer.isBuffer(image)) return moderationImage(image);
  const { uploadFileBytes, downloadTimeoutMs } = options.limits;
  try {
    const bytes = await http.download(image.url, {
      provider: 'image URL',
      maxBytes: uploadFileBytes,
      timeoutMs: downloadTimeoutMs,
      signal: from.cancel.clientGone,
      allowPrivate: options.allowPrivateImageUrls,
    });
    return moderationImage(bytes);
  } catch (error) {
    if (!GatewayError.is(error)) throw error;
    throw GatewayError.invalidRequest('An image URL could not be fetched for the content check: make it publicly reachable, or send the image as a Data URL', 'image');
  }
}

/** What the output stage needs: the policy, the subject, where to download from. */
export interface OutputCheck {
  moderation: Moderation;
  active: ActivePolicy;
  subject: ModerationSubject;
  call: CallContext;
  allowPrivate: boolean;
}

/**
 * The contract §2.4 answer with its flagged images dropped (before anything is downloaded for the
 * caller, stored or answered). Returns the bytes fetched for the check, index for index with the kept
 * data, so the answer and the store reuse them; throws when no image passed.
 */
export async function checkImageAnswer(check: OutputCheck, usage: Usage, response: ImageGenerationResponse, known: ReadonlyArray<Buffer | undefined> | undefined): Promise<Array<Buffer | undefined>> {
  const bytes = await Promise.all(
    response.data.map((item, index) => {
      const bytes = known?.[index] ?? (item.b64_json !== '' ? Buffer.from(item.b64_json, 'base64') : undefined);
      return bytes || item.url === '' ? Promise.resolve(bytes) : download(check, item.url);
    }),
  );
  const passed = await verdictsOf(check, usage, bytes);
  const keep = (_item: unknown, index: number): boolean => passed[index]!;
  response.data = response.data.filter(keep);
  if (response.sizes) response.sizes = response.sizes.filter(keep);
  usage.images = response.data.length;
  if (usage.imageSizes) usage.imageSizes = usage.imageSizes.filter(keep);
  return bytes.filter(keep);
}

/**
 * An OpenAI-compatible answer's body with its flagged images dropped (re-serialized only when one was):
 * an image route's `data`, a response's image generation calls, a chat answer's images (answer-images.ts).
 * Only the image routes count their images in the usage; chat and responses keep theirs as they were.
 */
export async function checkPassthroughAnswer(check: OutputCheck, usage: Usage, body: Buffer): Promise<Buffer> {
  const parsed = parseJsonBody(body);
  const found = imagesOfAnswer(check.subject.route, parsed);
  if (!found || found.images.length === 0) return body;
  const bytes = await Promise.all(
    found.images.map(({ source }): Promise<Buffer | undefined> => {
      if (!source) return Promise.resolve(undefined);
      return 'base64' in source ? Promise.resolve(Buffer.from(source.base64, 'base64')) : download(check, source.url);
    }),
  );
  const passed = await verdictsOf(check, usage, bytes);
  if (passed.every(Boolean)) return body;
  dropImages(found.images.filter((_image, index) => !passed[index]));
  if (found.counted) {
    const keep = (_item: unknown, index: number): boolean => passed[index]!;
    usage.images = passed.filter(Boolean).length;
    if (usage.imageSizes) usage.imageSizes = usage.imageSizes.filter(keep);
  }
  return Buffer.from(JSON.stringify(parsed));
}

/** Each image checked (an entry without bytes cannot be shown to anyone unchecked: withheld). */
async function verdictsOf(check: OutputCheck, usage: Usage, bytes: ReadonlyArray<Buffer | undefined>): Promise<boolean[]> {
  const present = bytes.flatMap((item, index) => (item ? [{ index, image: moderationImage(item) }] : []));
  const verdicts = await check.moderation.checkOutputs(
    check.active,
    check.subject,
    present.map((entry) => entry.image),
  );
  const passed = bytes.map(() => false);
  present.forEach((entry, at) => (passed[entry.index] = verdicts.passed[at]!));
  if (verdicts.flagged > 0) {
    usage.flaggedImages = (usage.flaggedImages ?? 0) + verdicts.flagged;
    usage.lostBy = 'flagged';
  }
  if (passed.some(Boolean) || bytes.length === 0) return passed;
  if (verdicts.flagged > 0) {
    usage.images = 0;
    throw new ContentPolicyError(
      `Every image made was refused by the content policy${verdicts.categories.length > 0 ? ` (${verdicts.categories.join(', ')})` : ''}.`,
      undefined,
      verdicts.categories,
      'output',
    );
  }
  throw unavailable();
}

function download(check: OutputCheck, url: string): Promise<Buffer> {
  const { call } = check;
  return call.http.download(url, { provider: 'result', maxBytes: call.limits.downloadBytes, timeoutMs: call.limits.downloadTimeoutMs, signal: call.signal, allowPrivate: check.allowPrivate });
}
