// When a request's resources are given back. Normally when its response closes; a request whose
// work must finish after its client left (an Idempotency-Key create: its answer is kept for the
// retry, so the upstream call is not aborted) holds the request open until that work is done, so
// its in-flight slot stays taken meanwhile and a client that disconnects cannot start unbounded work.
// Work that outlives its bound gives back its slot early (whenSlotFree), but its usage event still
// waits for its outcome (whenRequestDone): the answer it produces is billed once, with its status.
import type { Response } from 'express';

// The callback lists are made with their first entry ([callback], one slot), not as [] then push
// (17 slots): a held request keeps them for its whole wait (issue 15: memory per held request).
type Callbacks = Array<() => void> | undefined;

interface Lifetime {
  holds: number;
  closed: boolean;
  /** Run first when the response closes (route state: client-gone watch), in order. */
  closing: Callbacks;
  done: Callbacks;
  slotFreed: boolean;
  /** A hold gave the slot up: it goes as soon as the response has closed (an open one still holds a socket). */
  slotGivenUp: boolean;
  slot: Callbacks;
}

const lifetimes = new WeakMap<Response, Lifetime>();

function lifetimeOf(res: Response): Lifetime {
  let lifetime = lifetimes.get(res);
  if (!lifetime) {
    const created: Lifetime = { holds: 0, closed: false, closing: undefined, done: undefined, slotFreed: false, slotGivenUp: false, slot: undefined };
    lifetimes.set(res, created);
    // the one 'close' listener per request: every other close hook of the gateway rides on it; a
    // plain listener, not once()'s wrapper (issue 15)
    res.on('close', () => {
      created.closed = true;
      runAll(created.closing);
      created.closing = undefined;
      if (created.holds === 0) finish(created);
      else if (created.slotGivenUp) freeSlot(created);
    });
    lifetime = created;
  }
  return lifetime;
}

function added(list: Callbacks, callback: () => void): Array<() => void> {
  if (!list) return [callback];
  list.push(callback);
  return list;
}

function runAll(list: Callbacks): void {
  if (list) for (const callback of list) callback();
}

function freeSlot(lifetime: Lifetime): void {
  lifetime.slotFreed = true;
  const slot = lifetime.slot;
  lifetime.slot = undefined;
  runAll(slot);
}

function finish(lifetime: Lifetime): void {
  freeSlot(lifetime);
  const done = lifetime.done;
  lifetime.done = undefined;
  runAll(done);
}

/** Runs `callback` when the response closes (finished or not), before the request-done and slot callbacks. */
export function whenResponseCloses(res: Response, callback: () => void): void {
  const lifetime = lifetimeOf(res);
  lifetime.closing = added(lifetime.closing, callback);
}

/** Runs `callback` once, when the response has closed and no hold is left. */
export function whenRequestDone(res: Response, callback: () => void): void {
  const lifetime = lifetimeOf(res);
  lifetime.done = added(lifetime.done, callback);
}

/** Runs `callback` once, when the request is done or a hold gave its slot back early (the in-flight cap). */
export function whenSlotFree(res: Response, callback: () => void): void {
  const lifetime = lifetimeOf(res);
  if (lifetime.slotFreed) callback();
  else lifetime.slot = added(lifetime.slot, callback);
}

/** A hold on a request: `release` when its work is done (idempotent); `freeSlot` when it runs too long to keep its in-flight slot once its client has left. */
export interface RequestHold {
  readonly release: () => void;
  readonly freeSlot: () => void;
}

/** Keeps the request alive past its response's close until the hold is released. */
export function holdRequest(res: Response): RequestHold {
  const lifetime = lifetimeOf(res);
  lifetime.holds += 1;
  let released = false;
  return {
    release: () => {
      if (released) return;
      released = true;
      lifetime.holds -= 1;
      if (lifetime.closed && lifetime.holds === 0) finish(lifetime);
    },
    freeSlot: () => {
      lifetime.slotGivenUp = true;
      if (lifetime.closed) freeSlot(lifetime);
    },
  };
}

/** True while a hold keeps the request's work going (its client may have left). */
export function isHeld(res: Response): boolean {
  return (lifetimes.get(res)?.holds ?? 0) > 0;
}
