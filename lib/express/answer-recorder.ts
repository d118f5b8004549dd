// The seam between the answer writers (send-body.ts, write-image-response.ts) and the Idempotency-Key
// middleware (idempotency.ts): a response whose answer must be kept for replays has a recorder, and
// each writer hands it the exact status, Content-Type and bytes it is about to send.
import type { Response } from 'express';

export interface AnswerRecorder {
  /** Largest body kept; a writer of a larger one passes no body, only its size. */
  readonly maxBytes: number;
  record(status: number, contentType: string, body: Buffer | string | undefined, bytes: number): void;
  /** The request failed (the error middleware got an error), whether or not an answer can still be sent. */
  fail(): void;
}

// module-private, as route-state.ts: nothing outside the gateway can set or read one
const recorders = new WeakMap<Response, AnswerRecorder>();

export function setAnswerRecorder(res: Response, recorder: AnswerRecorder): void {
  recorders.set(res, recorder);
}

export function answerRecorderOf(res: Response): AnswerRecorder | undefined {
  return recorders.get(res);
}
