// Counts the requests each key (a caller id) has in flight and refuses one past the limit. Kept
// apart from the middleware and from any storage so that a later rate limiter (rate-limiter-flexible)
// can sit behind the same small interface: acquire a slot, get back its one release.

export interface InFlightLimiter {
  /** Slots each key may hold at once. */
  readonly limit: number;
  /**
   * Takes one slot for `key` (at most `limit` held, default the limiter's: a caller's quota may override it). Returns the function that gives it back, or null when `key` already
   * holds `limit` slots. The release is idempotent: calling it again frees nothing more, so every
   * way a response can end (finish, error, abort) may call it without counting twice.
   */
  tryAcquire(key: string, limit?: number): (() => void) | null;
  /** Slots `key` holds now. */
  inFlight(key: string): number;
  /** Keys holding at least one slot (a key is forgotten at zero, so memory follows live callers). */
  size(): number;
}

export function createInFlightLimiter(limit: number): InFlightLimiter {
  const held = new Map<string, number>();
  return {
    limit,
    tryAcquire(key, most = limit) {
      const current = held.get(key) ?? 0;
      if (current >= most) return null;
      held.set(key, current + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const remaining = (held.get(key) ?? 1) - 1;
        if (remaining > 0) held.set(key, remaining);
        else held.delete(key);
      };
    },
    inFlight: (key) => held.get(key) ?? 0,
    size: () => held.size,
  };
}
