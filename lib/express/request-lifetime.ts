// When a request's resources are given back. Normally when its response closes; a request whose
// work must finish after its client left (an Idempotency-Key create: its answer is kept for the
// retry, so the upstream call is not aborted) holds the request open until that work is done, so
// its in-flight slot stays taken meanwhile and a client that disconnects cannot start unbounded work.
import type { Response } from 'express';

interface Lifetime {
  holds: number;
  closed: boolean;
  done: Array<() => void>;
}

const lifetimes = new WeakMap<Response, Lifetime>();

function lifetimeOf(res: Response): Lifetime {
  let lifetime = lifetimes.get(res);
  if (!lifetime) {
    const created: Lifetime = { holds: 0, closed: false, done: [] };
    lifetimes.set(res, created);
    res.once('close', () => {
      created.closed = true;
      if (created.holds === 0) finish(created);
    });
    lifetime = created;
  }
  return lifetime;
}

function finish(lifetime: Lifetime): void {
  for (const callback of lifetime.done.splice(0)) callback();
}

/** Runs `callback` once, when the response has closed and no hold is left. */
export function whenRequestDone(res: Response, callback: () => void): void {
  lifetimeOf(res).done.push(callback);
}

/** Keeps the request alive past its response's close until the returned function is called (idempotent). */
export function holdRequest(res: Response): () => void {
  const lifetime = lifetimeOf(res);
  lifetime.holds += 1;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    lifetime.holds -= 1;
    if (lifetime.closed && lifetime.holds === 0) finish(lifetime);
  };
}

/** True while a hold keeps the request's work going (its client may have left). */
export function isHeld(res: Response): boolean {
  return (lifetimes.get(res)?.holds ?? 0) > 0;
}
