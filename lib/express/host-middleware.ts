// The host's middleware of the `tenancy.afterAuthentication` option (docs/configuration.md), run inside a route's
// chain after the key was accepted. A rejected promise (an async middleware on Express 4, which does not
// catch it) and a throw both become `next(error)`, so the gateway's error middleware answers them in
// its own shape. The chain goes on once: a middleware that passes it on and then fails (`next()`, then
// a rejected audit write) has its failure logged, not answered a second time into a request that has
// moved on (its body half read, its upstream call maybe started).
import type { NextFunction, RequestHandler } from 'express';
import type { AuthenticatedMiddleware } from '../options/host-hooks.js';
import type { Logger } from '../types.js';

export function hostMiddleware(middleware: AuthenticatedMiddleware, logger: Logger): RequestHandler {
  const name = middleware.name || 'middleware';
  const wrapped: RequestHandler = (req, res, next) => {
    let passed = false;
    const once: NextFunction = (error?: unknown) => {
      if (passed) {
        logger.error(
          {
            middleware: name,
            route: req.path.slice(0, 200),
            error: error instanceof Error ? error.message : error === undefined ? 'next() called again' : typeof error === 'string' ? error : 'a non-Error value',
          },
          'an afterAuthentication middleware went on to the gateway and then failed or went on again: ignored (docs/configuration.md "tenancy.afterAuthentication")',
        );
        return;
      }
      passed = true;
      next(error);
    };
    let returned: unknown;
    try {
      returned = middleware(req, res, once);
    } catch (thrown) {
      once(thrown ?? new Error('afterAuthentication middleware threw'));
      return;
    }
    if (returned !== null && typeof returned === 'object' && typeof (returned as Promise<unknown>).then === 'function') {
      (returned as Promise<unknown>).then(undefined, (error: unknown) => once(error ?? new Error('afterAuthentication middleware rejected')));
    }
  };
  // the host's name in stack traces and profiles
  Object.defineProperty(wrapped, 'name', { value: `afterAuthentication(${name})` });
  return wrapped;
}
