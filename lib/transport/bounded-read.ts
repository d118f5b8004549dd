// Reading an upstream body with a bound (upstream-http.ts): never more than `maxBytes` in memory, a
// declared Content-Length over the bound refused before a byte is read, and a large declared body
// read straight into one buffer of that size (held once, not as chunks plus a copy).
import { type Readable, Transform } from 'node:stream';
import type { Deadline } from './deadline.js';

/** A body that passed its bound; upstream-failure.ts turns it into a 502 that names the bound. */
export class TooLargeError extends Error {}

/** Bodies declared larger than this are read into one buffer of the declared size. */
export const PREALLOCATE_ABOVE = 64 * 1024;

/** The Content-Length an answer declares, when it is a usable number. */
export function declaredLength(headers: Record<string, string | undefined>): number | undefined {
  const length = Number(headers['content-length']);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/**
 * Reads a stream into one Buffer, failing as soon as it passes maxBytes (no unbounded buffering).
 * With a declared length the body is refused before it is read when too large, and otherwise read
 * straight into one buffer of that size: a large image is held once, not as chunks plus a copy.
 */
export function readBounded(stream: Readable, maxBytes: number, deadline: Pick<Deadline, 'onCancel'>, declared?: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (declared !== undefined && declared > maxBytes) {
      stream.destroy();
      reject(new TooLargeError());
      return;
    }
    const into = declared !== undefined && declared > PREALLOCATE_ABOVE ? Buffer.allocUnsafe(declared) : undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    let filled = 0;
    const stopListening = deadline.onCancel((reason) => {
      stream.destroy();
      reject(reason);
    });
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        stream.destroy();
        stopListening();
        reject(new TooLargeError());
        return;
      }
      if (into && chunks.length === 0 && filled + chunk.length <= into.length) {
        chunk.copy(into, filled);
        filled += chunk.length;
      } else chunks.push(chunk);
    });
    stream.once('end', () => {
      stopListening();
      if (!into) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      else if (chunks.length === 0) resolve(filled === into.length ? into : into.subarray(0, filled));
      // more than declared (Node's parser normally refuses that first): keep every byte, in order
      else resolve(Buffer.concat([into.subarray(0, filled), ...chunks]));
    });
    stream.once('error', (error) => {
      stopListening();
      reject(error);
    });
  });
}

/**
 * `response` passed through as it arrives, failing with `tooLarge()` as soon as it passes
 * `maxBytes`; the consumer must read or destroy what this returns. `done` runs when it closes, and a
 * response not read to its end is destroyed then (its connection is not kept half read).
 */
export function boundedStream(response: Readable, maxBytes: number, failure: (error: unknown) => Error, done: () => void): Readable {
  let size = 0;
  const bounded = new Transform({
    transform: (chunk: Buffer, _encoding, callback) => {
      size += chunk.length;
      callback(size > maxBytes ? failure(new TooLargeError()) : null, chunk);
    },
  });
  response.once('error', (error) => bounded.destroy(failure(error)));
  bounded.once('close', () => {
    done();
    if (!response.readableEnded) response.destroy();
  });
  return response.pipe(bounded);
}
