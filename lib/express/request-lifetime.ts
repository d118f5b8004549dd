// When a request's resources are given back (part of its context, request-context.ts). Normally when
// its response closes; a request whose work must finish after its client left (an Idempotency-Key
// create: its answer is kept for the retry, so the upstream call is not aborted) holds the request
// open until that work is done, so its in-flight slot stays taken meanwhile and a client that
// disconnects cannot start unbounded work. Work that outlives its bound gives back its slot early
// (whenSlotFree), but its usage event still waits for its outcome (whenRequestDone): the answer it
// produces is billed once, with its status.
import type { Response } from 'express';

// The callback lists are made with their first entry ([callback], one slot), not as [] then push
// (17 slots): a held request keeps them for its whole wait (docs/architecture.md "Performance").
type Callbacks = Array<() => void> | undefined;

/** A hold on a request: `release` when its work is done (idempotent); `freeSlot` when it runs too long to keep its in-flight slot once its client has left. */
export interface RequestHold {
  readonly release: () => void;
  readonly freeSlot: () => void;
}

export class RequestLifetime {
  private holds = 0;
  private closed = false;
  /** Run first when the response closes (the context's client-gone watch), in order. */
  private closing: Callbacks;
  private done: Callbacks;
  private slotFreed = false;
  /** A hold gave the slot up: it goes as soon as the response has closed (an open one still holds a socket). */
  private slotGivenUp = false;
  private slot: Callbacks;

  constructor(res: Response) {
    // the one 'close' listener per request: every other close hook of the gateway rides on it; a
    // plain listener, not once()'s wrapper
    res.on('close', () => {
      this.closed = true;
      runAll(this.closing);
      this.closing = undefined;
      if (this.holds === 0) this.finish();
      else if (this.slotGivenUp) this.freeSlot();
    });
  }

  /** True while a hold keeps the request's work going (its client may have left). */
  get held(): boolean {
    return this.holds > 0;
  }

  /** Runs `callback` when the response closes (finished or not), before the request-done and slot callbacks. */
  whenResponseCloses(callback: () => void): void {
    this.closing = added(this.closing, callback);
  }

  /** Runs `callback` once, when the response has closed and no hold is left. */
  whenRequestDone(callback: () => void): void {
    this.done = added(this.done, callback);
  }

  /** Runs `callback` once, when the request is done or a hold gave its slot back early (the in-flight cap). */
  whenSlotFree(callback: () => void): void {
    if (this.slotFreed) callback();
    else this.slot = added(this.slot, callback);
  }

  /** Keeps the request alive past its response's close until the hold is released. */
  hold(): RequestHold {
    this.holds += 1;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.holds -= 1;
        if (this.closed && this.holds === 0) this.finish();
      },
      freeSlot: () => {
        this.slotGivenUp = true;
        if (this.closed) this.freeSlot();
      },
    };
  }

  private freeSlot(): void {
    this.slotFreed = true;
    const slot = this.slot;
    this.slot = undefined;
    runAll(slot);
  }

  private finish(): void {
    this.freeSlot();
    const done = this.done;
    this.done = undefined;
    runAll(done);
  }
}

function added(list: Callbacks, callback: () => void): Array<() => void> {
  if (!list) return [callback];
  list.push(callback);
  return list;
}

function runAll(list: Callbacks): void {
  if (list) for (const callback of list) callback();
}
