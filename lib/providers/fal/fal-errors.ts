// fal's error answers as the gateway's errors (docs/providers/fal.md "Errors"). fal answers a failure
// with an HTTP status and a JSON body: `{ detail: string }`, or FastAPI/Pydantic's 422
// `{ detail: [{ loc: ['body', field], msg, type }] }` (@fal-ai/client libs/client/src/response.ts,
// ValidationError.fieldErrors), sometimes `{ message }`. The request id is `x-fal-request-id`.
import { GatewayError } from '../../errors/gateway-error.js';
import { isObject, stringOr } from '../../json/json-values.js';
import { retryAfterOf } from '../retry-after.js';

/** The caller's field for a field fal names in a 422: the gateway's own names where it translated one. */
const CALLER_FIELD: Readonly<Record<string, string>> = {
  image_size: 'size',
  aspect_ratio: 'size',
  num_images: 'n',
  image_url: 'image',
  image_urls: 'image',
  prompt: 'prompt',
};

/** The first 422 `detail` entry's field (its `loc` without the leading `body`), when fal names one. */
export function falFieldOf(body: unknown): string | undefined {
  const detail = isObject(body) ? body.detail : undefined;
  if (!Array.isArray(detail)) return undefined;
  const first: unknown = detail[0];
  const loc = isObject(first) && Array.isArray(first.loc) ? first.loc.filter((part): part is string => typeof part === 'string' && part !== 'body') : [];
  return loc[0];
}

/** What fal said: a string `detail`, the 422 entries' `msg`s, or `message`. */
function messageOf(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  if (typeof body.detail === 'string') return body.detail;
  if (Array.isArray(body.detail)) {
    const said = body.detail.flatMap((entry: unknown) => {
      if (!isObject(entry) || typeof entry.msg !== 'string') return [];
      const loc = Array.isArray(entry.loc) ? entry.loc.filter((part) => part !== 'body').join('.') : '';
      return [loc ? `${loc}: ${entry.msg}` : entry.msg];
    });
    if (said.length > 0) return said.join('; ');
  }
  return stringOr(body.message) ?? stringOr(body.error);
}

/**
 * A failed fal answer as the gateway's error: 401/403 the operator's key (never the caller's 401), 429
 * a 429 with fal's Retry-After, 422 a 400 naming the caller's field when fal names one, a refusal of
 * the content (`content_policy_violation` in the body) a 400 content_policy_violation, the rest by status.
 */
export function normalizeFalError(status: number, body: unknown, headers: Record<string, string | undefined> = {}): GatewayError {
  const requestId = headers['x-fal-request-id'] ?? headers['x-request-id'];
  const retryAfter = retryAfterOf(headers);
  const upstreamMessage = messageOf(body);
  const errorType = isObject(body) ? (stringOr(body.error_type) ?? stringOr(body.type)) : undefined;
  const detailType = isObject(body) && Array.isArray(body.detail) && isObject(body.detail[0]) ? stringOr(body.detail[0].type) : undefined;
  const refused = [errorType, detailType].some((type) => type !== undefined && /content_policy|nsfw|moderation/i.test(type));
  const error = GatewayError.fromUpstream({
    provider: 'fal',
    // fal's 422 is FastAPI's validation answer: the contract's 400 for a request the model refuses
    status: status === 422 ? 400 : status,
    upstreamCode: errorType ?? detailType,
    upstreamMessage,
    requestId,
    ...(refused ? { kind: 'content_policy' as const } : {}),
    ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
  });
  const field = status === 422 && !refused ? falFieldOf(body) : undefined;
  if (field === undefined) return error;
  return new GatewayError({
    status: error.status,
    code: error.code,
    message: error.message,
    param: CALLER_FIELD[field] ?? field,
    retryable: error.retryable,
    notStarted: error.notStarted,
    ...(requestId !== undefined ? { upstreamRequestId: requestId } : {}),
  });
}
