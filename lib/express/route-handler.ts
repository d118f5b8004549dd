// How a route runs (docs/architecture.md "One use-case shape" and "Performance"). Every route handler
// is a function of the request's context that reads, calls one use case, and writes; Express 5 forwards
// rejected promises to next(err) and Express 4 does not, so every handler is wrapped and errors reach
// the gateway's error middleware either way, with the request's span active (the body parsers' stream
// events may have lost it). One Express handler per route: the route's own handlers (begin,
// authenticate, the in-flight cap, the body, Idempotency-Key, the route) run from a plain array inside
// it, so the router keeps one layer per route instead of one per handler.
import type { RequestHandler, NextFunction, Request, Response } from 'express';
import { type RequestContext, contextOf } from './request-context.js';

/**
 * A named Express handler around `handler(context)`. The handler may be a plain function returning
 * its work's promise (no async frame of its own waiting beside a slow upstream): its synchronous throw
 * is an error like a rejection.
 */
export function routeHandler(name: string, handler: (context: RequestContext) => Promise<void>): RequestHandler {
  const routed: RequestHandler = (_req, res, next) => {
    const context = contextOf(res);
    const trace = context.trace;
    let done: Promise<void>;
    try {
      done = trace ? trace.run(() => handler(context)) : handler(context);
    } catch (error) {
      next(error);
      context.endWork();
      return;
    }
    // the request's usage event waits for its work, whose books a client that left does not end (request-context.ts)
    const settled = done.catch(next);
    context.awaitBooks(settled);
    // its failure, if any, has reached the error middleware: the chain is over
    void settled.then(() => context.endWork());
  };
  Object.defineProperty(routed, 'name', { value: name });
  return routed;
}

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
