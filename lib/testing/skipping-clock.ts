// A clock under which waits of seconds take no time (docs/contributing.md "The clock of the specs"): the
// gateway's pauses between reads of queued vendor work end on the next turn of the event loop, in the
// order of their due times, and the clock's time moves on to each one's due time, so every bound is kept
// in the clock's time. Installed under the global symbol the gateway reads (lib/clock.ts), so it reaches
// the gateway whichever bundle it was loaded from. Only what the gateway measures on its clock skips:
// HTTP timeouts, sockets and other timers keep real time.
import type { Clock } from '../clock.js';

/** The installed skipping clock: its time, and how to put the system's clock back. */
export interface SkippingClock {
  /** The clock's time, ms since the epoch: real time plus every skip so far. */
  now(): number;
  /** The ms skipped so far. */
  skipped(): number;
  /** Removes this clock: the gateway reads the system's clock again. */
  restore(): void;
}

interface Due {
  at: number;
  run: () => void;
}

const SYMBOL = Symbol.for('express-image-gateway.clock');

/** Installs a skipping clock for this process (call `restore()` in `afterAll`). */
export function useSkippingClock(): SkippingClock {
  let offset = 0;
  const pending: Due[] = [];
  const now = (): number => Date.now() + offset;
  // one turn per wait: each turn ends the earliest wait still pending, moving the time on to its due time
  const turn = (): void => {
    const next = pending.shift();
    if (!next) return;
    const current = now();
    if (next.at > current) offset += next.at - current;
    next.run();
  };
  const clock: Clock = {
    now,
    after(ms, run) {
      const due: Due = { at: now() + Math.max(0, ms), run };
      const index = pending.findIndex((other) => other.at > due.at);
      pending.splice(index === -1 ? pending.length : index, 0, due);
      setImmediate(turn);
      return () => {
        const at = pending.indexOf(due);
        if (at !== -1) pending.splice(at, 1);
      };
    },
  };
  const global = globalThis as { [SYMBOL]?: Clock };
  const before = global[SYMBOL];
  global[SYMBOL] = clock;
  return {
    now,
    skipped: () => offset,
    restore() {
      if (global[SYMBOL] === clock) {
        if (before) global[SYMBOL] = before;
        else delete global[SYMBOL];
      }
    },
  };
}
