// One dispatch per request for the POST routes (issue 15): the router's own `handle` looks the path
// up once in a Map and runs the route's handlers as a plain array, before Express's layer stack.
// Express matching every route's path in turn, a layer per handler, and even one pass of the
// router's own stack (its closures, its param and URL bookkeeping, about 5 KB per request) are
// skipped; every other request (the GET routes, unknown paths, other methods) goes through the
// router's stack as before. README "Benchmarks" has the measured effect.
//
// Matching stays Express's default for routes (case-insensitive, one trailing slash optional), so
// a client that reached a route before still reaches it. Errors, thrown or passed to next, go to
// the router's error middleware, as they did from a layer of the router (the layers between the
// routes and it take no errors); what the error middleware throws goes to the host's next.
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response, Router } from 'express';

/** The method Express 4 and 5 routers call on every request (`router(req, res, next)` is `router.handle(req, res, next)`). */
interface HandledRouter {
  handle: (this: unknown, req: Request, res: Response, next: NextFunction) => void;
}

/**
 * Makes `router` answer POSTs to `routes` itself, ahead of its layer stack; `onError` is the
 * router's error middleware.
 */
export function dispatchPostsFirst(router: Router, routes: ReadonlyMap<string, readonly RequestHandler[]>, onError: ErrorRequestHandler): void {
  const table = new Map<string, { path: string; chain: readonly RequestHandler[] }>();
  for (const [path, chain] of routes) table.set(routeKey(path), { path, chain });
  const stack = router as unknown as HandledRouter;
  // the prototype's handle, kept to run the layer stack for everything else
  const layers = stack.handle;
  stack.handle = (req: Request, res: Response, out: NextFunction): void => {
    const route = req.method === 'POST' ? table.get(routeKey(req.path)) : undefined;
    if (!route) return layers.call(router, req, res, out);
    dispatched.set(req, route.path);
    const chain = route.chain;
    let index = 0;
    const fail = (error: unknown): void => {
      try {
        onError(error, req, res, out);
      } catch (thrown) {
        out(thrown);
      }
    };
    const step = (error?: unknown): void => {
      if (error !== undefined && error !== null) return fail(error);
      const handler = chain[index];
      index += 1;
      // every route's last handler answers; a chain that ends anyway goes on as a layer's next would
      if (!handler) return layers.call(router, req, res, out);
      try {
        handler(req, res, step);
      } catch (thrown) {
        fail(thrown);
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
