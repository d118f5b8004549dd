// The clock that waits of seconds are measured on (docs/contributing.md "The clock of the specs"): the
// pauses between reads of work a vendor queued, and the bound of that wait. In production it is the
// system's clock. A spec (or a host's own test) installs another one through `useSkippingClock()` of
// `express-image-gateway/testing`, under which a pause ends at once and the clock's time moves on by its
// length, so following a job through ten reads takes milliseconds and still meets its bound in the
// clock's time. It is found under a global symbol, not imported, because each package entry is a bundle
// of its own and the testing entry must never be imported by the gateway.

/** What the gateway asks of a clock. */
export interface Clock {
  /** The time, in ms since the epoch. */
  now(): number;
  /** Calls `run` once `ms` of this clock's time has passed; the answer cancels it. */
  after(ms: number, run: () => void): () => void;
}

/** The global symbol a clock is installed under; the testing entry (lib/testing/skipping-clock.ts) spells the same name. */
const CLOCK_SYMBOL: unique symbol = Symbol.for('express-image-gateway.clock');

const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  after(ms, run) {
    const timer = setTimeout(run, ms);
    // a pending wait never holds the process open: the request it serves does
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** The clock in force: an installed one, else the system's. */
export function clock(): Clock {
  return (globalThis as { [CLOCK_SYMBOL]?: Clock })[CLOCK_SYMBOL] ?? SYSTEM_CLOCK;
}
