// The answer for paths and methods under the gateway's own prefixes (`/v1`, `/api/v3`) that it does
// not serve: the contract §2.5 error object as JSON 404, never Express's HTML "Cannot GET" page, because
// the clients calling there (OpenAI SDKs, UIs) parse every answer as JSON. Hosts that serve their own
// routes under those prefixes set `fallthrough: true` and this handler is not mounted.
import type { RequestHandler } from 'express';
import { GatewayError } from '../../errors/gateway-error.js';

/** The prefixes of contract §9 that the gateway answers for. */
export const GATEWAY_PREFIXES: readonly string[] = Object.freeze(['/v1', '/api/v3']);

export function notFoundHandler(): RequestHandler {
  return function unservedPath(req, _res, next) {
    // originalUrl keeps a mount prefix (`/ai/v1/...`), which is the path the client actually sent
    const path = (req.originalUrl || req.url).split('?')[0]!.slice(0, 200);
    // the message names only what the client can try: the client of a host's API has no contract to open
    // baseUrl ends with the prefix this handler is mounted at: what is before it is the gateway's mount path
    const mount = req.baseUrl.replace(/\/(?:v1|api\/v3)$/i, '');
    next(GatewayError.notFound(`No route ${req.method} ${path}. Check the method and the path; GET ${mount}/v1/models lists the models your key may use.`));
  };
}
