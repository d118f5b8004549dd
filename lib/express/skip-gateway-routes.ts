// For host apps whose own body parsers come first (docs/getting-started.md "Your parsers first"):
// `skipGatewayRoutes(parser)` runs the host's middleware everywhere except under the gateway's
// prefixes, so the gateway still authenticates before it reads a body and reads it with its own
// limits; `isGatewayPath` is the predicate for hosts that compose their middleware otherwise.
import type { RequestHandler } from 'express';
import { GATEWAY_PREFIXES } from './routes/not-found.js';

/** Where the gateway is mounted, for `skipGatewayRoutes` and `isGatewayPath`. */
export interface GatewayPathOptions {
  /**
   * The path the gateway router is mounted under, as in `app.use('/ai', gateway)`. Default `''`
   * (the gateway at the root).
   * @example mountPath: '/ai'
   */
  mountPath?: string;
}

/**
 * True when `path` (a request path, with or without its query) is under one of the gateway's
 * prefixes, `/v1` and `/api/v3`, below `mountPath`. Express matches paths in any case, so this does.
 * @example isGatewayPath(req.originalUrl, { mountPath: '/ai' })
 */
export function isGatewayPath(path: string, options: GatewayPathOptions = {}): boolean {
  return prefixTest(options)(path);
}

/**
 * Wraps a host middleware (its `express.json()`, `express.urlencoded()`, a raw-body logger) so it
 * does not run for requests to the gateway's paths: the gateway authenticates first, then reads the
 * body with its own limits. Mount the wrapped parser where the plain one was.
 * @example app.use(skipGatewayRoutes(express.json(), { mountPath: '/ai' })); app.use('/ai', gateway);
 */
export function skipGatewayRoutes(middleware: RequestHandler, options: GatewayPathOptions = {}): RequestHandler {
  if (typeof middleware !== 'function') throw new TypeError('skipGatewayRoutes(middleware): pass the middleware to skip, e.g. skipGatewayRoutes(express.json())');
  const isGateway = prefixTest(options);
  const skipping: RequestHandler = (req, res, next) => {
    // originalUrl: the whole path the client sent, wherever this wrapper itself is mounted
    if (isGateway(req.originalUrl || req.url)) return next();
    return middleware(req, res, next);
  };
  Object.defineProperty(skipping, 'name', { value: `skipGatewayRoutes(${middleware.name || 'middleware'})` });
  return skipping;
}

function prefixTest(options: GatewayPathOptions): (path: string) => boolean {
  const mountPath = (options.mountPath ?? '').replace(/\/+$/, '');
  if (mountPath !== '' && !mountPath.startsWith('/')) throw new TypeError(`mountPath must start with '/', got '${mountPath.slice(0, 100)}'`);
  const prefixes = GATEWAY_PREFIXES.map((prefix) => `${mountPath}${prefix}`.toLowerCase());
  return (path) => {
    const end = path.search(/[?#]/);
    const pathname = (end === -1 ? path : path.slice(0, end)).toLowerCase();
    return prefixes.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
  };
}
