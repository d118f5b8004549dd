// The one place errors are rendered (docs/errors.md): an Express error handler has four parameters.
// Everything thrown on a gateway route becomes the contract §2.5 object; nothing else reaches a client:
// no stack traces, no upstream secrets, no HTML. Every 5xx is logged here, once.
import type { ErrorRequestHandler, Response } from 'express';
import { sendJson } from './answers/send-body.js';
import { ClientGoneError } from '../errors/client-gone-error.js';
import type { ResolvedOptions } from '../gateway/resolve-options.js';
import { GatewayError } from '../errors/gateway-error.js';
import { ERROR_CODES } from '../errors/error-codes.js';
import { QuotaExceededError } from '../errors/quota-exceeded-error.js';
import { RequestContext, findContext } from './request-context.js';
import { bearerKeyOf } from './authenticate.js';
import { redactSecrets } from '../errors/redact.js';

// the same request gets the same refusal: a retry would only spend a check (docs/content-safety.md)
const REFUSED_AS_IS: ReadonlySet<string> = new Set([ERROR_CODES.contentPolicyViolation, ERROR_CODES.tenantSuspended]);

export function createErrorMiddleware(options: ResolvedOptions): ErrorRequestHandler {
  return function renderGatewayError(error: unknown, req, res, _next) {
    // an error of a host layer hung on the router comes without a context: one is made to answer it
    const context = findContext(res) ?? new RequestContext(undefined, req, res, options, false);
    // the route's chain ends here: what follows uses the context at once (request-context.ts endWork)
    context.endWork();
    // the ledger reads what the vendor may have made from the failure (ledger/reckoning.ts)
    context.failure ??= error;
    // an Idempotency-Key request that failed frees its key, also when its client has left; but an output
    // refusal ends made, paid, flagged work: it is kept under the key like an answer (as a followed key
    // keeps it, gateway/kept-work/lapsed-keys.ts), so a retry neither pays for it again nor strikes the tenant again
    // (docs/content-safety.md)
    const refusal = outputRefusalOf(error);
    if (refusal && context.recorder?.keepRefusal) context.recorder.keepRefusal(refusal.status, 'application/json; charset=utf-8', JSON.stringify(refusal.toJSON()));
    else context.recorder?.fail();
    // a client that left gets nothing and is no failure; a response that finished (a stream whose error
    // event was already sent) still gets its one log line below
    if (error instanceof ClientGoneError || (res.destroyed && !res.writableFinished)) return;
    const gatewayError = toGatewayError(error, options);
    context.errorCode = gatewayError.code;
    // an upstream may have started (and billed) the work: a blind retry would pay for it again
    // (docs/tenancy-and-billing.md "Retries"); the OpenAI SDKs honour x-should-retry
    if (context.usage.attempted && !gatewayError.notStarted) context.workMayHaveStarted = true;
    if (gatewayError.status >= 500 || res.headersSent) logFailure(options, res, context, gatewayError, error);
    if (res.headersSent) {
      // a response already under way cannot change its status; end it so the client is not left hanging
      res.end();
      return;
    }
    // work kept for the retry (kept-work.ts): the retry of the same request receives it, so say to retry
    if (context.workKept) {
      res.setHeader('x-should-retry', 'true');
      res.setHeader('retry-after', '1');
    } else if (context.workMayHaveStarted || REFUSED_AS_IS.has(gatewayError.code)) res.setHeader('x-should-retry', 'false');
    // 429 and 503 say when to come back (the OpenAI SDKs wait that long before their retry)
    if (gatewayError.retryAfterSeconds !== undefined) res.setHeader('retry-after', String(gatewayError.retryAfterSeconds));
    // a quota's 429 also says which limit and what is left (draft-ietf-httpapi-ratelimit-headers)
    if (gatewayError instanceof QuotaExceededError) {
      // every refusal (quotas and the in-flight cap) counted here, once (docs/observability.md)
      options.telemetry.recordLimitRefusal(gatewayError.rateLimit.name, context.route);
      const { policy, limit } = gatewayError.headers();
      res.setHeader('ratelimit-policy', policy);
      res.setHeader('ratelimit', limit);
    }
    // the id of the operator's log line, so a client can quote it (the OpenAI SDKs read this header)
    if (gatewayError.status >= 500) res.setHeader('x-request-id', context.requestId);
    sendJson(context, gatewayError.status, gatewayError.toJSON());
  };
}

/**
 * One line per failed request the operator must see: every 5xx, and a failure that cut a response
 * already under way. Identifiers only: the caller's message can quote the upstream's answer (which
 * may echo image bytes); an unexpected error's own message is the one detail kept, since nothing else
 * says what broke. A cause logged where it was raised (a verifyKey that threw) keeps its own line: that
 * one says why, this one which request.
 */
function logFailure(options: ResolvedOptions, res: Response, context: RequestContext, gatewayError: GatewayError, error: unknown): void {
  const { usage } = context;
  const fields = {
    requestId: context.requestId,
    route: context.route,
    model: usage.model || undefined,
    provider: usage.provider,
    caller: context.caller?.id,
    status: gatewayError.status,
    code: gatewayError.code,
    upstreamRequestId: gatewayError.upstreamRequestId ?? usage.upstreamRequestId,
    latencyMs: context.route ? Math.round((performance.now() - context.startedAt) * 1000) / 1000 : undefined,
    // an unexpected error's message may quote what it was handed, the caller's key included
    ...(GatewayError.is(error) ? {} : { error: redactSecrets(error instanceof Error ? error.message : String(error), [bearerKeyOf(res.req)]) }),
  };
  options.logger.error(fields, res.headersSent ? 'request failed after its response began; response cut' : `request answered ${gatewayError.status}`);
}

function toGatewayError(error: unknown, options: ResolvedOptions): GatewayError {
  // GatewayError.is, not instanceof: a host's function (resolveUpstream) may throw one made by the
  // package's other build (ESM beside CommonJS)
  if (GatewayError.is(error)) return error;
  const type = (error as { type?: unknown }).type;
  // body-parser's errors carry a `type` naming what went wrong
  switch (type) {
    case 'entity.too.large':
      return GatewayError.tooLarge(`The request body is larger than the ${options.limits.jsonBodyBytes} byte limit`);
    case 'entity.parse.failed':
      return GatewayError.invalidRequest('The request body is not valid JSON');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return GatewayError.unsupportedMediaType('The request body must be UTF-8 JSON');
    case 'request.size.invalid':
    case 'request.aborted':
      return GatewayError.invalidRequest('The request body ended before its declared length');
    default:
      break;
  }
  // errors that say the request itself was bad (a malformed path escape, a Content-Encoding that
  // does not decode) carry a 4xx status: the caller's problem, not a server error
  const status = (error as { status?: unknown; statusCode?: unknown }).status ?? (error as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // a host middleware's http-errors error (tenancy.afterAuthentication) whose message is meant for clients
    const exposed = (error as { expose?: unknown }).expose === true && error instanceof Error && error.message !== '' ? error.message.slice(0, 500) : undefined;
    if (status === 401) return GatewayError.authentication(exposed ?? 'The request was not authorized.');
    if (status === 403) return GatewayError.permissionDenied(exposed ?? 'The request is not allowed.');
    if (status === 404) return GatewayError.notFound(exposed ?? 'Not found.');
    if (status === 429) return GatewayError.rateLimited(exposed ?? 'Too many requests: wait and retry.', retryAfterOf(error));
    // the parsers' and the router's own 4xx (a malformed path escape) keep a message that quotes nothing
    if (status === 413) return GatewayError.tooLarge('The request is too large');
    if (status === 415) return GatewayError.unsupportedMediaType('The request body has an unsupported encoding or type');
    return GatewayError.invalidRequest('The request could not be read: check the path, the Content-Encoding and the body');
  }
  // logged once, with the request's fields, by logFailure
  return GatewayError.internal();
}

/** A content policy refusal of the images made (stage `output`), by its code: it may come from the package's other build. */
function outputRefusalOf(error: unknown): GatewayError | undefined {
  if (!GatewayError.is(error) || error.code !== ERROR_CODES.contentPolicyViolation) return undefined;
  return error.toJSON().error.stage === 'output' ? error : undefined;
}

/** Seconds from an error's own `Retry-After` (http-errors `headers`), when it has one. */
function retryAfterOf(error: unknown): number | undefined {
  const headers = (error as { headers?: unknown }).headers;
  const value = typeof headers === 'object' && headers !== null ? ((headers as Record<string, unknown>)['retry-after'] ?? (headers as Record<string, unknown>)['Retry-After']) : undefined;
  const seconds = Number(value);
  return value !== undefined && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}
