// A body a host middleware read before the gateway's own parser (docs/getting-started.md "Your parsers
// first"). Its stream has ended, so reading it again would wait for bytes that never come: the
// request is answered at once with the gateway's own error object, and the operator's log says how
// to mount the host's parsers so the gateway reads its own bodies.
import type { Request } from 'express';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Logger } from '../../options/host-hooks.js';

/** True when the request's body stream was already read (or is being read) by someone else. */
export function bodyReadElsewhere(req: Request): boolean {
  return (req as { _body?: boolean })._body === true || req.readableEnded || (req.readableDidRead ?? false);
}

/**
 * The answer for a body a host middleware consumed in a form the gateway cannot use (text, raw
 * bytes, a form, nothing at all). A 500: the client's request was fine, the server's setup is not;
 * the message names nothing the client cannot see, the log line names the fix.
 */
export function bodyAlreadyRead(logger: Logger, route: string): GatewayError {
  logger.error(
    { route, fix: 'app.use(skipGatewayRoutes(express.json())) or mount the gateway before the parser' },
    'a host middleware read the request body before the gateway; answering 500 (docs/getting-started.md "Your parsers first")',
  );
  return new GatewayError({
    status: 500,
    code: ERROR_CODES.internalError,
    message: 'The server read the request body before the gateway could, so the request was not processed. This is a server configuration problem, not a problem with the request: tell the operator.',
  });
}
