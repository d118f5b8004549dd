// The `results` stage of the image pipeline (docs/tenancy-and-billing.md): the upstream's answer made
// whole and capped. The upstream never decides how many images the caller gets and is charged for: at
// most what the request allowed, the rest dropped and reported in the usage event; the bytes of a
// b64_json answer are downloaded here (results/result-images.ts). An opened stream passes on untouched.
// On an OpenAI-compatible upstream's answer (upstreams §4.1) the cap also reads what was answered and
// at which sizes, for the usage event.
import { GENERIC_IMAGE_FAMILY } from '../../../images/model-families.js';
import { downloadImages } from '../../results/result-images.js';
import { allowedImages } from '../image-input.js';
import type { ImageStage } from '../image-work.js';
import { GatewayError } from '../../../errors/gateway-error.js';
import { parseJsonBody, usageOf } from '../../../json/json-values.js';

export const results: ImageStage = {
  name: 'results',
  run(work, next) {
    const { usage, deps } = work;
    const prepared = work.prepared!;
    const answer = work.attempted!;
    if (answer.kind === 'stream') return next();
    if (answer.kind === 'passthrough') {
      usage.upstreamRequestId = answer.response.requestId;
      const capped = capPassthroughImages(answer.response.body, usage.provider ?? 'upstream', prepared.asked, answer.response.requestId);
      usage.upstreamImages = capped.upstreamImages;
      usage.images = capped.images;
      if (capped.sizes) usage.imageSizes = capped.sizes;
      if (capped.usage) usage.upstreamUsage = capped.usage;
      work.whole = { kind: 'passthrough', response: { ...answer.response, body: capped.body } };
      return next();
    }
    const { response } = answer;
    usage.upstreamRequestId = response.extra.request_id || undefined;
    usage.upstreamImages = response.data.length;
    // (a family's: the images charged, an image group the request set itself included)
    response.data = response.data.slice(0, prepared.family ? prepared.asked : allowedImages(answer.request, GENERIC_IMAGE_FAMILY));
    usage.images = response.data.length;
    if (response.sizes) usage.imageSizes = response.sizes.slice(0, usage.images);
    if (response.usage) usage.upstreamUsage = response.usage;
    // for the usage event only: the caller's answer is the contract §2.4 body
    delete response.sizes;
    delete response.usage;
    if (answer.request.responseFormat !== 'b64_json') {
      work.whole = { kind: 'image', response };
      return next();
    }
    return downloadImages(response, prepared.call, answer.provider, { allowPrivate: deps.options.allowPrivateResultUrls }).then((images) => {
      work.bytes = images;
      work.whole = { kind: 'image', response, images };
      return next();
    });
  },
};

/**
 * An OpenAI-compatible image answer with at most `allowed` entries in `data`; the body is
 * re-serialized only when the upstream returned more (otherwise it goes out byte for byte, as a
 * passthrough). An image route's 2xx answer is JSON with a `data` list (upstreams §4.1): anything
 * else is refused (502) rather than relayed, whatever its Content-Type says, so no answer escapes
 * the cap or the count the caller is billed by.
 */
function capPassthroughImages(body: Buffer, provider: string, allowed: number, requestId: string | undefined): CappedImages {
  const parsed = parseJsonBody(body);
  const data = typeof parsed === 'object' && parsed !== null ? (parsed as { data?: unknown }).data : undefined;
  if (!Array.isArray(data)) throw GatewayError.badUpstreamResponse(provider, 'the image answer is not JSON with a data list', requestId);
  const billed = { ...imageSizesOf(parsed as Record<string, unknown>, data.slice(0, allowed)), ...usageOf(parsed) };
  // a `provenance` report is the gateway's word on the bytes (docs/provenance.md): one an upstream wrote
  // itself is dropped, whether or not the gateway reports for this caller
  const forged = data.some((item) => typeof item === 'object' && item !== null && 'provenance' in item) || 'provenance' in (parsed as object);
  if (data.length <= allowed && !forged) return { body, images: data.length, upstreamImages: data.length, ...billed };
  const kept = (data as unknown[])
    .slice(0, allowed)
    .map((item): unknown => (typeof item === 'object' && item !== null && 'provenance' in item ? withoutProvenance(item as Record<string, unknown>) : item));
  const trimmed = { ...withoutProvenance(parsed as Record<string, unknown>), data: kept };
  return { body: Buffer.from(JSON.stringify(trimmed)), images: kept.length, upstreamImages: data.length, ...billed };
}

function withoutProvenance(item: Record<string, unknown>): Record<string, unknown> {
  const { provenance: _dropped, ...rest } = item;
  return rest;
}

/** A capped answer: its body (re-serialized only when cut), the images answered and made, and what the usage event reads. */
interface CappedImages {
  body: Buffer;
  images: number;
  upstreamImages: number;
  sizes?: string[];
  usage?: Record<string, number>;
}

/** `WxH` of each returned image, when the answer says (Ark: `data[].size`; OpenAI gpt-image: top-level `size`). */
function imageSizesOf(parsed: Record<string, unknown>, data: unknown[]): { sizes?: string[] } {
  const sizes = data.map((item) => {
    const size = typeof item === 'object' && item !== null ? (item as { size?: unknown }).size : undefined;
    return typeof size === 'string' ? size : parsed.size;
  });
  return sizes.length > 0 && sizes.every((size): size is string => typeof size === 'string' && /^\d+x\d+$/.test(size)) ? { sizes } : {};
}
