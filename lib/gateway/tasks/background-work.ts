// What the background parts of every kind of task share (task-jobs.ts, the video follower and results,
// the image tasks' runs):
// a signal no client aborts, the bound on compare-and-set rounds, and how an error reads in the log.

/** Background calls are never aborted by a client; the deadline of each call still applies. */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/** Compare-and-set losers re-read and decide again; a handful of rounds settles any real contention. */
export const CAS_ROUNDS = 5;

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
