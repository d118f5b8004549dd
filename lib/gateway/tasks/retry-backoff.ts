// The delay before a retry of a task poll or a callback delivery (callbacks.retryBaseMs and
// retryMaxMs): exponential backoff with "equal jitter", half fixed, half random, so the retries of
// many tasks that failed together spread out instead of arriving together again.

export interface BackoffBounds {
  /** Ceiling of the first retry, ms. */
  baseMs: number;
  /** Largest ceiling, ms. */
  maxMs: number;
}

/**
 * The delay before retry `retry` (1-based): its ceiling doubles each retry up to `maxMs`, and the
 * delay lies between half the ceiling and the ceiling. `random` answers in [0, 1) (Math.random).
 */
export function equalJitterBackoff(retry: number, bounds: BackoffBounds, random: () => number = Math.random): number {
  const ceiling = Math.min(bounds.maxMs, bounds.baseMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
