// How a request's or a task's work ended, as far as the ledger reads it (docs/tenancy-and-billing.md
// "The books"): apart from the reckoning, so the use case's own types can name it without a cycle.

/** How the work ended, as far as the ledger needs it. */
export interface WorkEnd {
  /** The failure the request or task ended with; undefined when it answered. */
  error?: unknown;
  /** The caller did not receive the answer: it left before the response was finished. */
  clientLeft?: boolean;
  /** The answer was kept for the client's retry (gateway/kept-work/): charged when delivered or expired. */
  kept?: boolean;
  /** A task's terminal event, or a read: no per-request fee (it was charged on the submit). */
  noFee?: boolean;
  /** A stream: the images it sent reached the caller, whatever ended it (a failure, a cut). */
  streamed?: boolean;
  /** A stream whose answer did not reach its end at the caller: what it did not send was cut (`stream_cut`). */
  cut?: boolean;
}
