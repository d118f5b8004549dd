// What the two guards that keep answers share (idempotency.ts by the client's key, kept-work.ts by the
// body): the record of a kept answer, and store writes that never throw into a timer or a writer.
import type { Logger } from '../../types.js';

export { doneRecord } from '../../stores/idempotency/idempotency-store.js';

// the headers that are part of an answer, not of one delivery of it: replayed with the body (a task's
// 202 has all four, docs/image-tasks.md; only 2xx answers are kept, so Retry-After is never an error's)
const ANSWER_HEADERS = ['location', 'preference-applied', 'retry-after', 'cache-control'] as const;
export const ANSWER_HEADER_NAMES: ReadonlySet<string> = new Set(ANSWER_HEADERS);

/** The answer headers (ANSWER_HEADERS) a response has set, or undefined when it has none. */
export function answerHeadersOf(res: { getHeader(name: string): unknown }): Record<string, string> | undefined {
  let found: Record<string, string> | undefined;
  for (const name of ANSWER_HEADERS) {
    const value = res.getHeader(name);
    if (typeof value === 'string') (found ??= {})[name] = value;
  }
  return found;
}

/**
 * Runs store calls in the background: a host store that throws instead of rejecting (not an async
 * function) must not throw in a timer or in the answer writer; either way it is one logged failure.
 */
export function backgroundWrites(logger: Logger, what: string): (call: () => Promise<void>) => void {
  const failed = (error: unknown): void => {
    logger.error({ error: error instanceof Error ? error.message : String(error) }, `${what} store write failed`);
  };
  return (call) => {
    Promise.resolve().then(call).catch(failed);
  };
}
