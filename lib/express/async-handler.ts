// Express 5 forwards rejected promises to next(err); Express 4 does not. Wrapping every async
// handler gives both the same behaviour: errors reach the gateway's error middleware.
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export function asyncHandler(handler: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    handler(req, res).catch(next);
  };
}
