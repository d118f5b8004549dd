// The one place errors are rendered (style.md: an Express error handler has four parameters).
// Everything thrown on a gateway route becomes the contract §2.5 object; nothing else reaches a client:
// no stack traces, no upstream secrets, no HTML.
import type { ErrorRequestHandler } from 'express';
import { sendJson } from './send-body.js';
import { ClientGoneError } from '../errors/client-gone-error.js';
import type { ResolvedOptions } from '../gateway/options.js';
import { GatewayError } from '../errors/gateway-error.js';

export function createErrorMiddleware(options: ResolvedOptions): ErrorRequestHandler {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- Express needs all four parameters
  return (error: unknown, _req, res, _next) => {
    if (error instanceof ClientGoneError || res.destroyed) return;
    const gatewayError = toGatewayError(error, options);
    if (res.headersSent) {
      // a response already under way cannot change its status; end it so the client is not left hanging
      res.end();
      return;
    }
    // 429 and 503 say when to come back (the OpenAI SDKs wait that long before their retry)
    if (gatewayError.retryAfterSeconds !== undefined) res.setHeader('retry-after', String(gatewayError.retryAfterSeconds));
    sendJson(res, gatewayError.status, gatewayError.toJSON());
  };
}

function toGatewayError(error: unknown, options: ResolvedOptions): GatewayError {
  if (error instanceof GatewayError) return error;
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
    if (status === 413) return GatewayError.tooLarge('The request is too large');
    if (status === 415) return GatewayError.unsupportedMediaType('The request body has an unsupported encoding or type');
    return GatewayError.invalidRequest('The request could not be read: check the path, the Content-Encoding and the body');
  }
  options.logger.error('unexpected error on a gateway route', { error: error instanceof Error ? error.message : String(error) });
  return GatewayError.internal();
}
