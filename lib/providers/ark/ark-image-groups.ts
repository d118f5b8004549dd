// Ark's native image groups (upstreams §2.6): how many images a request to POST /api/v3/images/generations
// may return, and how many an answer or a stream did return. The charge of the route and the usage
// event read these; they are Ark's wire format, so they live with Ark's provider.
import { parseJsonBody, usageOf } from '../../json/json-values.js';

/** Ark's largest image group (upstreams §2.6: `sequential_image_generation_options.max_images`, 1-15). */
const ARK_MAX_GROUP = 15;

/** What one answer returned: its images, their `WxH`, Ark's usage counters. */
export interface ImageGroupCount {
  images: number;
  sizes?: string[];
  usage?: Record<string, number>;
}

/** A provider's rules for image groups on its native image route. */
export interface ImageGroupRules {
  /** The most images the request may return: the quota is charged this much up front. */
  asked(body: Record<string, unknown>): number;
  /** What a whole JSON answer returned; undefined when it is not an image answer. */
  countAnswer(body: Buffer): ImageGroupCount | undefined;
  /** A counter fed each streamed chunk as it goes by: answers the images seen so far. */
  streamCounter(): (chunk: Buffer) => number;
}

/**
 * Images an Ark native image request may return: 1, or with `sequential_image_generation: 'auto'`
 * its `max_images` (default 15, Ark's ceiling).
 */
export function nativeImagesAsked(body: Record<string, unknown>): number {
  if (body.sequential_image_generation !== 'auto') return 1;
  const options = body.sequential_image_generation_options as { max_images?: unknown } | undefined;
  const most = options?.max_images;
  return typeof most === 'number' && Number.isSafeInteger(most) && most >= 1 ? Math.min(most, ARK_MAX_GROUP) : ARK_MAX_GROUP;
}

/** What an Ark native image answer returned: images, their `WxH`, Ark's usage counters. */
function countNativeImages(body: Buffer): ImageGroupCount | undefined {
  let parsed: unknown;
  try {
    parsed = parseJsonBody(body);
  } catch {
    return undefined;
  }
  const data = (parsed as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return undefined;
  const count: ImageGroupCount = { images: data.length };
  const sizes = data.map((item) => (item as { size?: unknown } | null)?.size);
  if (sizes.length > 0 && sizes.every((size): size is string => typeof size === 'string')) count.sizes = sizes;
  const { usage } = usageOf(parsed);
  if (usage) count.usage = usage;
  return count;
}

// an Ark stream event that carries one image; the carry keeps a marker cut by a chunk edge
const PARTIAL_SUCCEEDED = /"type"\s*:\s*"image_generation\.partial_succeeded"/g;
const CARRY = 64;

/** Counts the images of a streamed Ark image answer as its chunks go by. */
function streamedImageCounter(): (chunk: Buffer) => number {
  let carry = '';
  let images = 0;
  return (chunk) => {
    const text = carry + chunk.toString('latin1');
    for (const match of text.matchAll(PARTIAL_SUCCEEDED)) {
      // a match wholly inside the carry was counted with the previous chunk
      if (match.index + match[0].length > carry.length) images += 1;
    }
    carry = text.slice(-CARRY);
    return images;
  };
}

export const arkImageGroups: ImageGroupRules = { asked: nativeImagesAsked, countAnswer: countNativeImages, streamCounter: streamedImageCounter };
