// Keeps one repeating error from flooding the log. While Redis is down, BullMQ's queue and worker emit
// 'error' on every reconnect attempt (several a second, for as long as the outage lasts): the first
// of a kind is let through at once, repeats within the window are only counted, and the count rides
// on the next one let through, so the operator sees the outage and how loud it was, in a few lines.

export interface RepeatLimiter {
  /**
   * Whether to log this occurrence of `key`: undefined to stay quiet, otherwise how many occurrences
   * were kept quiet since the last one logged.
   */
  admit(key: string): number | undefined;
}

// a bound on what is remembered: error messages are the keys, and a host's Redis errors could vary
const MAX_KEYS = 100;

export function repeatLimiter(windowMs: number, now: () => number = Date.now): RepeatLimiter {
  const seen = new Map<string, { at: number; suppressed: number }>();
  return {
    admit(key) {
      const at = now();
      const last = seen.get(key);
      if (last && at - last.at < windowMs) {
        last.suppressed += 1;
        return undefined;
      }
      seen.delete(key);
      seen.set(key, { at, suppressed: 0 });
      // Map keeps insertion order: the first key is the one logged longest ago
      if (seen.size > MAX_KEYS) seen.delete(seen.keys().next().value!);
      return last?.suppressed ?? 0;
    },
  };
}
