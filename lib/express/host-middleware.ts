// The host's middleware of the `afterAuthentication` option (docs/configuration.md), run inside a route's
// chain after the key was accepted. A rejected promise (an async middleware on Express 4, which does not
// catch it) and a throw both become `next(error)`, so the gateway's error middleware answers them in
// its own shape.
import type { RequestHandler } from 'express';
import type { AuthenticatedMiddleware } from '../options/host-hooks.js';

export function hostMiddleware(middleware: AuthenticatedMiddleware): RequestHandler {
  const wrapped: RequestHandler = (req, res, next) => {
    const returned = middleware(req, res, next);
    if (returned !== null && typeof returned === 'object' && typeof (returned as Promise<unknown>).then === 'function') {
      (returned as Promise<unknown>).then(undefined, (error: unknown) => next(error ?? new Error('afterAuthentication middleware rejected')));
    }
  };
  // the host's name in stack traces and profiles
  Object.defineProperty(wrapped, 'name', { value: `afterAuthentication(${middleware.name || 'middleware'})` });
  return wrapped;
}
