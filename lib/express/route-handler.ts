// The shape every route handler has (docs/architecture.md "One use-case shape"): a function of the
// request's context that reads, calls one use case, and writes. Express 5 forwards rejected promises to
// next(err); Express 4 does not: wrapping every handler gives both the same behaviour, errors reach the
// gateway's error middleware. The handler runs with the request's span active: the body parsers'
// stream events may have lost it.
import type { RequestHandler } from 'express';
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
