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
  const canonical = new Map<string, string>();
  for (const [path, handlers] of routes) {
    table.set(routeKey(path), handlers);
    canonical.set(routeKey(path), path);
  }
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'POST') return next();
    const key = routeKey(req.path);
    const chain = table.get(key);
    if (!chain) return next();
    dispatched.set(req, canonical.get(key)!);
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

// the route's own path for each dispatched request (Express sets req.route only for its own routes)
const dispatched = new WeakMap<Request, string>();

/**
 * The route pattern a dispatched request matched, as declared (`/v1/images/generations`), never
 * the caller's spelling of it: `http.route` must stay one value per route whatever case or
 * trailing slash a client sends (README "Observability": bounded attributes).
 */
export function dispatchedRouteOf(req: Request): string | undefined {
  return dispatched.get(req);
}

function routeKey(path: string): string {
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}
