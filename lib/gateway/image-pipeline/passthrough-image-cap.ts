// The image cap on an OpenAI-compatible upstream's answer (upstreams §4.1): at most the images the
// request allowed go to the caller, and what was answered and at which sizes is read for the usage
// event. The image pipeline (image-pipeline.ts) applies it to every passthrough image answer.
import { GatewayError } from '../../errors/gateway-error.js';
import { parseJsonBody } from '../../json/json-values.js';
import { usageOf } from '../../json/usage-fields.js';

/**
 * An OpenAI-compatible image answer with at most `allowed` entries in `data`; the body is
 * re-serialized only when the upstream returned more (otherwise it goes out byte for byte, as a
 * passthrough). An image route's 2xx answer is JSON with a `data` list (upstreams §4.1): anything
 * else is refused (502) rather than relayed, whatever its Content-Type says, so no answer escapes
 * the cap or the count the caller is billed by.
 */
export function capPassthroughImages(body: Buffer, provider: string, allowed: number, requestId: string | undefined): CappedImages {
  const parsed = parseJsonBody(body);
  const data = typeof parsed === 'object' && parsed !== null ? (parsed as { data?: unknown }).data : undefined;
  if (!Array.isArray(data)) throw GatewayError.badUpstreamResponse(provider, 'the image answer is not JSON with a data list', requestId);
  const billed = { ...imageSizesOf(parsed as Record<string, unknown>, data.slice(0, allowed)), ...usageOf(parsed) };
  if (data.length <= allowed) return { body, images: data.length, upstreamImages: data.length, ...billed };
  const trimmed = { ...(parsed as Record<string, unknown>), data: data.slice(0, allowed) };
  return { body: Buffer.from(JSON.stringify(trimmed)), images: allowed, upstreamImages: data.length, ...billed };
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
