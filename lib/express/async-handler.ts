// Express 5 forwards rejected promises to next(err); Express 4 does not. Wrapping every async
// handler gives both the same behaviour: errors reach the gateway's error middleware. The handler
// runs with the request's span active: the body parsers' stream events may have lost it.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { findRouteState } from './route-state.js';

export function asyncHandler(handler: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const trace = findRouteState(res)?.trace;
    let done: Promise<void>;
    // a handler may be a plain function returning its work's promise (no async frame of its own
    // waiting beside a slow upstream, issue 15): its synchronous throw is an error like a rejection
    try {
      done = trace ? trace.run(() => handler(req, res)) : handler(req, res);
    } catch (error) {
      next(error);
      return;
    }
    done.catch(next);
  };
}
