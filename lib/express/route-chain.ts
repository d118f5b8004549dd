// One Express handler per route (docs/architecture.md "Performance"): the route's own handlers (begin,
// authenticate, the in-flight cap, the body, Idempotency-Key, the route) run from a plain array inside
// it, so the router keeps one layer per route instead of one per handler. Express's public API
// (`router.post(path, handler)`) still matches the path and hands errors to the router's error
// middleware: an error passed on or thrown here goes to Express's `next` like any handler's.
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export function routeChain(name: string, handlers: readonly RequestHandler[]): RequestHandler {
  const chain: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    let index = 0;
    const step = (error?: unknown): void => {
      // 'route' and 'router' skip the rest as Express's own next would
      if (error !== undefined && error !== null) return next(error);
      const handler = handlers[index];
      index += 1;
      if (!handler) return next();
      try {
        handler(req, res, step);
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
  Object.defineProperty(chain, 'name', { value: name });
  return chain;
}
