// A synchronous throw as a rejection: code that hands back a call's promise (no async frame of its own
// waiting beside a slow upstream; docs/benchmarks.md "Memory per held request") must still fail the
// way an async function would when the call throws before it has a promise. The one copy of this.

/** `work()`'s promise, or a promise rejected with what `work` threw. */
export function rejectionOf<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work();
  } catch (thrown) {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- what was thrown, as an async function would reject with it
    return Promise.reject(thrown);
  }
}
