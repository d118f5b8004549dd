// Google's error envelope (docs/providers/gemini.md "Errors"), shared by the Gemini API and Vertex AI,
// for images (gemini.ts) and Veo (google-video.ts): `{ error: { code, message, status, details } }`
// read into the gateway's error, the wait a 429 asks for kept.
import { GatewayError } from '../../errors/gateway-error.js';
import { classifyUpstreamCode } from '../../errors/status-policy.js';
import { isObject, stringOr } from '../../json/json-values.js';
import { retryAfterOf } from '../retry-after.js';

/** Seconds of a google.rpc.RetryInfo `retryDelay` ("37s", "1.5s"), when the error carries one. */
function retryDelayOf(details: unknown): number | undefined {
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    const delay = isObject(detail) ? stringOr(detail.retryDelay) : undefined;
    const match = delay ? /^(\d+(?:\.\d+)?)s$/.exec(delay) : null;
    if (match) return Number(match[1]);
  }
  return undefined;
}

/**
 * `{ error: { code, message, status, details } }` (docs/providers/gemini.md "Errors"): the google.rpc.Code name
 * decides, except that an ErrorInfo reason naming the key (API_KEY_INVALID, sent as a 400) is the
 * operator's problem. A 429 keeps the wait Google asked for (`Retry-After`, else RetryInfo).
 */
export function normalizeGeminiError(status: number, body: unknown, headers: Record<string, string | undefined> = {}, provider = 'gemini'): GatewayError {
  const error = isObject(body) && isObject(body.error) ? body.error : undefined;
  const details = error?.details;
  const reason = Array.isArray(details) ? details.map((detail) => (isObject(detail) ? stringOr(detail.reason) : undefined)).find((found) => found !== undefined) : undefined;
  const reasonKind = classifyUpstreamCode(reason);
  const code = reasonKind === 'auth' ? reason : (error && stringOr(error.status)) || reason;
  // Retry-After in seconds or as an HTTP date (RFC 9110), else RetryInfo's retryDelay
  const header = retryAfterOf(headers);
  const retryAfter = typeof header === 'number' ? header : (retryDelayOf(details) ?? header);
  return GatewayError.fromUpstream({
    provider,
    status,
    upstreamCode: code,
    upstreamMessage: error ? stringOr(error.message) : undefined,
    requestId: headers['x-request-id'],
    kind: classifyUpstreamCode(code),
    ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
  });
}
