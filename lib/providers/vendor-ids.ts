// Ids a vendor answers that the gateway then puts into a URL it calls with the operator's key (a fal
// `request_id`, a Replicate prediction id, a DashScope or Ark task id, a Veo operation name): each is
// checked against the vendor's documented form before any call, so no answer can reshape the URL (a
// `..` segment would reach another path of the vendor's host). A bad one is a 502
// `upstream_bad_response` and nothing is sent (docs/security.md "What an upstream can send").
import { GatewayError } from '../errors/gateway-error.js';

// one path segment: letters, digits, `-` and `_` (UUIDs, Replicate's base32 ids, Ark's `cgt-…`); no
// dot, no separator, no encoding
const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,199}$/;
// a segment of a Google resource name: as above, and dots inside (`veo-3.0-generate-001`), never a dot segment
const NAME_SEGMENT = /^(?!\.{1,2}$)[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** `id` when it is one plain path segment, else the 502 of an answer the gateway will not follow. */
export function vendorId(provider: string, id: string, what: string, requestId?: string): string {
  if (ID.test(id)) return id;
  throw GatewayError.badUpstreamResponse(provider, `the ${what} '${id.slice(0, 64)}' is not an id the gateway follows`, requestId);
}

/**
 * A Google long-running operation's name (`models/{model}/operations/{id}` on the Gemini API,
 * `projects/…/operations/{id}` on Vertex AI) when each of its segments is a plain one and it names an
 * operation, else the 502 of an answer the gateway will not follow.
 */
export function operationName(provider: string, name: string): string {
  const segments = name.split('/');
  const at = segments.lastIndexOf('operations');
  const shaped = (segments[0] === 'models' || segments[0] === 'projects') && at > 0 && at === segments.length - 2;
  if (shaped && segments.length <= 16 && segments.every((segment) => NAME_SEGMENT.test(segment))) return name;
  throw GatewayError.badUpstreamResponse(provider, `the operation name '${name.slice(0, 96)}' is not one the gateway follows`);
}
