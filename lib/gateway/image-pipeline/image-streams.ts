// Streamed image answers (docs/routes.md "Streamed images"): what the image pipeline hands the inbound
// side when the caller sent `stream: true`. Three ways, chosen per upstream attempt:
// - an upstream that streams OpenAI's own image events (upstreams §4.2) is relayed as it comes; the
//   images it delivered are counted from its `*.completed` events as they go by;
// - an upstream that streams image groups in its own events (Ark, upstreams §2.7) is translated event
//   by event: each finished image becomes one `*.completed` event as it arrives (a finished image of a
//   group is a whole image, not a preview of one, and a completed event with b64_json per image is
//   what an SDK consumer of the stream reads);
// - any other answer is awaited whole and becomes one `*.completed` event per image.
// Bytes come from the upstream's b64_json or from its URLs through the same download rules as a
// b64_json answer (result-images.ts). Nothing here writes to a response.
import type { ProvenanceReport } from '../../options/provenance-options.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ImageGenerationResponse } from '../../images/image-generation-response.js';
import { sniffImageType } from '../../images/sniff-image-type.js';
import { isObject, parseJsonBody, stringOr } from '../../json/json-values.js';
import { SseReader } from '../../json/sse-events.js';
import type { CallContext } from '../../providers/call-context.js';
import type { ImageStreamRules, OpenedStream } from '../../providers/provider.js';
import { downloadImages, type DownloadPolicy } from '../results/result-images.js';
import type { QuotaCost } from '../tenancy/quota-cost.js';
import type { QuotaCharge, Quotas } from '../tenancy/quotas.js';
import { settleBooks } from '../tenancy/with-charge.js';
import type { Usage } from '../use-case.js';
import { secretFreeChunks } from '../../transport/secret-free-body.js';

/** The settings an image event repeats (the openai SDK's ImageGenCompletedEvent fields but `type` and `b64_json`). */
export interface ImageEventFields {
  created_at: number;
  size: string;
  quality: string;
  background: string;
  output_format: string;
  partial_image_index?: number;
  /** On a completed event, always: OpenAI's API reference requires it and the `openai` SDK types it as present. */
  usage?: ImageEventUsage;
  /** With the `provenance` option, on a completed event: the image's Content Credentials (docs/provenance.md). */
  provenance?: ProvenanceReport;
}

/** OpenAI's `usage` of an image completed event (the SDK's ImageGenCompletedEvent.Usage). */
export interface ImageEventUsage {
  total_tokens: number;
  input_tokens: number;
  output_tokens: number;
  input_tokens_details: { text_tokens: number; image_tokens: number };
}

function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * The `usage` of a completed event from what the upstream reported (OpenAI's names or chat's), else
 * zeros: a vendor that counts no tokens (DashScope, fal, Replicate) still gets the field the SDK reads
 * (docs/routes.md "Streamed images"). The input's text/image split only where the upstream gave it.
 */
function imageEventUsage(reported: unknown): ImageEventUsage {
  const fields = typeof reported === 'object' && reported !== null ? (reported as Record<string, unknown>) : {};
  const input = tokenCount(fields.input_tokens) ?? tokenCount(fields.prompt_tokens) ?? 0;
  const output = tokenCount(fields.output_tokens) ?? tokenCount(fields.completion_tokens) ?? 0;
  const total = tokenCount(fields.total_tokens) ?? input + output;
  const details = typeof fields.input_tokens_details === 'object' && fields.input_tokens_details !== null ? (fields.input_tokens_details as Record<string, unknown>) : {};
  return {
    total_tokens: total,
    input_tokens: input,
    output_tokens: output,
    input_tokens_details: { text_tokens: tokenCount(details.text_tokens) ?? 0, image_tokens: tokenCount(details.image_tokens) ?? 0 },
  };
}

/** One event of OpenAI's image stream format, its image as raw bytes (base64-encoded as it is written). */
export interface ImageStreamEvent {
  phase: 'partial_image' | 'completed';
  image: Buffer;
  fields: ImageEventFields;
}

/** What the request said about the images it wants: echoed in every event (`auto` when it did not say). */
export interface RequestedSettings {
  size?: string;
  quality?: string;
  background?: string;
}

/** The settings of a request, read from its JSON body or its form fields. */
export function requestedSettings(fields: Record<string, unknown>, parameters?: Record<string, unknown>): RequestedSettings {
  const size = stringOr(fields.size) ?? stringOr(parameters?.size);
  const quality = stringOr(fields.quality);
  const background = stringOr(fields.background);
  return {
    // contract §2.3 writes sizes `W*H`; OpenAI's events `WxH`
    ...(size ? { size: size.replace('*', 'x') } : {}),
    ...(quality ? { quality } : {}),
    ...(background ? { background } : {}),
  };
}

/** One finished image and the size the upstream said it has. */
export interface StreamedImage {
  bytes: Buffer;
  size?: string;
  provenance?: ProvenanceReport;
}

const FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/webp': 'webp' };

/** A completed event for one image, with the tokens it is reported with (zeros when none). */
function completedEvent(image: StreamedImage, settings: RequestedSettings, usage: ImageEventUsage = imageEventUsage(undefined)): ImageStreamEvent {
  const type = sniffImageType(image.bytes);
  const fields: ImageEventFields = {
    created_at: Math.floor(Date.now() / 1000),
    size: image.size ?? settings.size ?? 'auto',
    quality: settings.quality ?? 'auto',
    background: settings.background ?? 'auto',
    // OpenAI's three formats by name; any other image type by its subtype
    output_format: type ? (FORMATS[type] ?? type.slice('image/'.length)) : 'png',
    usage,
    ...(image.provenance ? { provenance: image.provenance } : {}),
  };
  return { phase: 'completed', image: image.bytes, fields };
}

/**
 * The events of an answer that is already whole: one completed event per image, in order. The
 * request's tokens (`reported`, the upstream's usage) go on the last event, zeros on the others, so
 * the events add up to the request's usage once (docs/routes.md "Streamed images").
 */
export async function* eventsOf(images: readonly StreamedImage[], settings: RequestedSettings, reported?: unknown): AsyncGenerator<ImageStreamEvent> {
  const last = images.length - 1;
  for (const [index, image] of images.entries()) yield completedEvent(image, settings, index === last ? imageEventUsage(reported) : undefined);
}

/** The images of a contract §2.4 answer whose b64_json was downloaded (`images[i]`) or given. */
export function imagesOfAnswer(response: ImageGenerationResponse, images: ReadonlyArray<Buffer | undefined> | undefined): StreamedImage[] {
  return response.data.map((item, index) => ({ bytes: images?.[index] ?? Buffer.from(item.b64_json, 'base64'), ...(item.provenance ? { provenance: item.provenance } : {}) }));
}

/**
 * The images of an OpenAI-compatible JSON answer (`data` already cut to what was charged): each
 * entry's b64_json, or its URL downloaded under the b64_json rules.
 */
export async function imagesOfPassthrough(body: Buffer, call: CallContext, provider: string, policy: DownloadPolicy): Promise<StreamedImage[]> {
  const parsed = parseJsonBody(body) as { data: unknown[]; size?: unknown };
  const entries = parsed.data.map((item) => (isObject(item) ? item : {}));
  const response: ImageGenerationResponse = {
    created: 0,
    data: entries.map((item) => ({ url: stringOr(item.b64_json) ? '' : (stringOr(item.url) ?? ''), b64_json: stringOr(item.b64_json) ?? '', revised_prompt: '' })),
    extra: { request_id: '' },
  };
  if (response.data.some((item) => item.url === '' && item.b64_json === '')) throw GatewayError.badUpstreamResponse(provider, 'an image has neither url nor b64_json');
  const downloaded = await downloadImages(response, call, provider, policy);
  return entries.map((item, index) => {
    const size = stringOr(item.size) ?? stringOr(parsed.size);
    const bytes = downloaded[index] ?? checkedImage(Buffer.from(response.data[index]!.b64_json, 'base64'), provider);
    const provenance = isObject(item.provenance) ? (item.provenance as unknown as ProvenanceReport) : undefined;
    return { bytes, ...(size ? { size } : {}), ...(provenance ? { provenance } : {}) };
  });
}

/** Decoded b64_json handed on as an image only when its bytes are one (as downloads are checked). */
function checkedImage(bytes: Buffer, provider: string): Buffer {
  if (!sniffImageType(bytes)) throw GatewayError.badUpstreamResponse(provider, 'b64_json is not an image');
  return bytes;
}

/** A relayed stream of OpenAI's image events, cut to the images charged, with those it delivered counted as they go by. */
export interface RelayedImages {
  stream: OpenedStream;
  /** Takes each upstream chunk, and gives the bytes to send: whole events, none past the last image charged. */
  observe: (chunk: Buffer) => Buffer;
  /** Resolves once the upstream body closed, with the usage of what was streamed and the charge settled. */
  settled: Promise<Usage>;
}

// the event that carries one final image, on either route
const COMPLETED = /"type"\s*:\s*"image_(?:generation|edit)\.completed"/;
// one event of the stream ends at a blank line (WHATWG server-sent events; CRLF or LF)
const EVENT_END = /\r?\n\r?\n/g;
const NOTHING = Buffer.alloc(0);

/** Where a stream's charge is settled: the quotas, the charge, and whether its client cut it. */
export interface StreamCharge {
  quotas: Quotas;
  charge: QuotaCharge;
  cost: QuotaCost;
  /** True once the client went away: a stream that ends then was cut by the caller. */
  clientGone: () => boolean;
}

/**
 * The upstream's events relayed whole, the completed images counted; once the images charged were
 * delivered, nothing more is sent (an upstream that answers more images than `n` does not hand them
 * out unbilled: they are the vendor's excess, `upstreamImages`). Settled when the upstream body closes:
 * a stream that did not reach its end was cut (by the client, or failed), and what the vendor may have
 * made for it is in the books either way (ledger/reckoning.ts).
 */
export function relayedImages(usage: Usage, stream: OpenedStream, charged: StreamCharge, asked: number): RelayedImages {
  usage.upstreamRequestId = stream.headers['x-request-id'];
  const attempt = usage.attempts?.at(-1);
  let carry = '';
  let completed = 0;
  let ended = false;
  const observe = (chunk: Buffer): Buffer => {
    const text = carry + chunk.toString('latin1');
    let sent = '';
    let from = 0;
    for (const match of text.matchAll(EVENT_END)) {
      const end = match.index + match[0].length;
      const event = text.slice(from, end);
      from = end;
      if (completed >= asked) {
        if (COMPLETED.test(event)) completed += 1;
        continue;
      }
      if (COMPLETED.test(event)) {
        completed += 1;
        usage.images = completed;
      }
      sent += withoutVendorProvenance(event);
    }
    carry = text.slice(from);
    return sent === '' ? NOTHING : Buffer.from(sent, 'latin1');
  };
  stream.body.once('end', () => (ended = true));
  const settled = new Promise<Usage>((resolve) => {
    stream.body.once('close', () => {
      usage.upstreamImages = completed;
      if (attempt) {
        // a stream read to its end made what it sent; one cut short may have made what was asked
        attempt.outcome = ended || completed >= asked ? 'made' : 'unknown';
        attempt.images = Math.max(completed, ended ? 0 : asked);
        if (usage.upstreamRequestId) attempt.id = usage.upstreamRequestId;
      }
      const cut = !ended && charged.clientGone();
      if (cut) usage.lostBy = 'stream_cut';
      void settleBooks(charged.quotas, charged.charge, charged.cost, usage, ended || cut ? { streamed: true } : { error: streamFailure(stream), streamed: true }).then(() => resolve(usage));
    });
  });
  return { stream, observe, settled };
}

/**
 * An upstream event without a `provenance` member of its own: that name is the gateway's report on the
 * bytes (docs/provenance.md), never a vendor's claim passed on. Events without it go as they came.
 */
function withoutVendorProvenance(event: string): string {
  if (!event.includes('"provenance"')) return event;
  // the relay holds events as latin1 text (byte for byte); the JSON is read and written as UTF-8
  return event
    .split('\n')
    .map((line) => {
      if (!line.startsWith('data:')) return line;
      const cr = line.endsWith('\r') ? '\r' : '';
      const payload = Buffer.from(line.slice(5, cr ? -1 : undefined).trimStart(), 'latin1').toString('utf8');
      const parsed = parseJsonBody(Buffer.from(payload, 'utf8'));
      if (!isObject(parsed) || !('provenance' in parsed)) return line;
      const { provenance: _dropped, ...rest } = parsed;
      return `data: ${Buffer.from(JSON.stringify(rest), 'utf8').toString('latin1')}${cr}`;
    })
    .join('\n');
}

/** The failure of a stream that closed before its end while its client was there. */
function streamFailure(stream: OpenedStream): unknown {
  return stream.failure(new Error('the upstream stream closed before its end'));
}

interface GroupStream {
  rules: Extract<ImageStreamRules, { kind: 'groups' }>;
  stream: OpenedStream;
  provider: string;
  call: CallContext;
  policy: DownloadPolicy;
  settings: RequestedSettings;
  /** The images charged: more are not delivered (nor billed). */
  asked: number;
  quotas: Quotas;
  charge: QuotaCharge;
  cost: QuotaCost;
}

/**
 * The group's images as completed events, each as soon as the upstream finished it. A failed image
 * of the group is skipped (the others go on, its charge comes back); a group that ends with none is
 * the first failure, told as the stream's error.
 */
export async function* groupEvents(usage: Usage, group: GroupStream): AsyncGenerator<ImageStreamEvent> {
  const { rules, stream, provider } = group;
  usage.upstreamRequestId = stream.headers['x-request-id'];
  const attempt = usage.attempts?.at(-1);
  const reader = new SseReader(group.call.limits.upstreamResponseBytes);
  let failure: GatewayError | undefined;
  let made = 0;
  let ended = false;
  let thrown: unknown;
  try {
    for await (const chunk of readChunks(stream)) {
      for (const sse of reader.take(chunk)) {
        const event = rules.readEvent(sse);
        if (!event) continue;
        if (event.kind === 'error') throw event.error;
        if (event.kind === 'failed') failure ??= event.error;
        else if (event.kind === 'done') {
          if (event.usage) usage.upstreamUsage = event.usage;
        } else if (usage.images < group.asked) {
          made += 1;
          const bytes = event.b64 ? checkedImage(Buffer.from(event.b64, 'base64'), provider) : await downloadOne(event.url!, group);
          usage.images += 1;
          if (event.size) (usage.imageSizes ??= []).push(event.size);
          yield completedEvent(event.size ? { bytes, size: event.size } : { bytes }, group.settings);
        } else {
          made += 1;
          usage.upstreamImages = (usage.upstreamImages ?? usage.images) + 1;
        }
      }
    }
    ended = true;
    if (usage.images === 0) throw failure ?? GatewayError.noImage(provider, ' (the stream ended without one)', usage.upstreamRequestId);
  } catch (error) {
    thrown = error;
    throw error;
  } finally {
    // left early (the client went away, or an error): the upstream is not read any further
    stream.body.destroy();
    if (attempt) {
      // a group read to its end made the images it sent (a failed one is not billed); one cut short may have made what was asked
      attempt.outcome = ended ? 'made' : 'unknown';
      attempt.images = ended ? made : Math.max(made, group.asked);
      if (usage.upstreamRequestId) attempt.id = usage.upstreamRequestId;
    }
    const cut = !ended && thrown === undefined;
    if (cut) usage.lostBy = 'stream_cut';
    await settleBooks(group.quotas, group.charge, group.cost, usage, thrown === undefined || ended ? { streamed: true } : { error: thrown, streamed: true });
  }
}

/** The upstream body's chunks; a read failure becomes what it means for the caller (timeout, client gone, upstream). */
async function* readChunks(stream: OpenedStream): AsyncGenerator<Buffer> {
  try {
    yield* secretFreeChunks(stream.body, stream.cut);
  } catch (error) {
    throw stream.failure(error);
  }
}

async function downloadOne(url: string, group: GroupStream): Promise<Buffer> {
  const response: ImageGenerationResponse = { created: 0, data: [{ url, b64_json: '', revised_prompt: '' }], extra: { request_id: '' } };
  const [bytes] = await downloadImages(response, group.call, group.provider, group.policy);
  return bytes!;
}
