// A pass-through stream that counts what goes through it: the stores report the bytes they wrote
// (UsageEvent.storedBytes) without listening for 'data' on the body, which would start it flowing.
import { Transform } from 'node:stream';

export interface ByteCounter extends Transform {
  readonly bytes: number;
}

export function byteCounter(): ByteCounter {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      callback(null, chunk);
    },
  });
  return Object.defineProperty(counter, 'bytes', { get: () => bytes }) as ByteCounter;
}
