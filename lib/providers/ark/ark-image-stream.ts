// How Ark's Seedream image route streams (upstreams §2.7): with `stream: true` and a group
// (`sequential_image_generation: "auto"`) it sends `image_generation.partial_succeeded` per finished
// image, `image_generation.partial_failed` per failed one, then `image_generation.completed` with the
// usage. A single image is not worth streaming upstream (it comes in one event at the end either way),
// so only groups are; a model that refuses `stream` (Seedream 3.0) answers 400 before any work.
import { isObject, stringOr, usageOf } from '../../json/json-values.js';
import type { SseEvent } from '../../json/sse-events.js';
import { normalizeOpenAIError } from '../openai/openai.js';
import type { GroupStreamEvent, ImageStreamRules } from '../provider.js';
import { GatewayError } from '../../errors/gateway-error.js';

/** One Ark stream event in the gateway's terms (pure: table-tested). */
export function readArkImageEvent(event: SseEvent): GroupStreamEvent | undefined {
  if (event.data.trim() === '[DONE]') return undefined;
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    return { kind: 'error', error: GatewayError.badUpstreamResponse('ark', 'a stream event is not JSON') };
  }
  if (!isObject(data)) return { kind: 'error', error: GatewayError.badUpstreamResponse('ark', 'a stream event is not a JSON object') };
  const type = stringOr(data.type) ?? event.event;
  if (type === 'image_generation.partial_succeeded') {
    const b64 = stringOr(data.b64_json);
    const url = stringOr(data.url);
    if (!b64 && !url) return { kind: 'error', error: GatewayError.badUpstreamResponse('ark', 'a partial_succeeded event has neither url nor b64_json') };
    const size = stringOr(data.size);
    return { kind: 'image', ...(b64 ? { b64 } : { url }), ...(size ? { size } : {}) };
  }
  if (type === 'image_generation.partial_failed') return { kind: 'failed', error: normalizeOpenAIError(400, data, undefined, 'ark') };
  if (type === 'image_generation.completed') {
    const { usage } = usageOf(data);
    return usage ? { kind: 'done', usage } : { kind: 'done' };
  }
  // an error told in the stream itself (the §2.8 envelope, or an `error` event)
  if (isObject(data.error) || type === 'error') return { kind: 'error', error: normalizeOpenAIError(502, data, undefined, 'ark') };
  return undefined;
}

/** A 400 that names `stream`: the model does not stream, and has done no work. */
export function arkRefusesStream(error: unknown): boolean {
  return GatewayError.is(error) && error.status === 400 && /\bstream\b/i.test(error.message);
}

export const arkImageStreams: ImageStreamRules = {
  kind: 'groups',
  streams: (body) => body.sequential_image_generation === 'auto',
  readEvent: readArkImageEvent,
  refusesStream: arkRefusesStream,
};
