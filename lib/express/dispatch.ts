// One dispatch per router for the POST routes (issue 15): the path is looked up once in a Map and
// the route's handlers run as a plain array, instead of Express matching every route's path in
// turn and wrapping each handler in a layer of its own. The hot path of every request.
//
// Matching stays Express's default for routes (case-insensitive, one trailing slash optional), so
// a client that reached a route before still reaches it. Errors, thrown or passed to next, go to
// the router's next layers (the error middleware), as a route's would.
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export function dispatchPosts(routes: ReadonlyMap<string, readonly RequestHandler[]>): RequestHandler {
  const table = new Map<string, readonly RequestHandler[]>();
  for (const [path, handlers] of routes) table.set(routeKey(path), handlers);
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'POST') return next();
    const chain = table.get(routeKey(req.path));
    if (!chain) return next();
    let index = 0;
    const step = (error?: unknown): void => {
      if (error !== undefined && error !== null) return next(error);
      const handler = chain[index];
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
}

function routeKey(path: string): string {
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}
