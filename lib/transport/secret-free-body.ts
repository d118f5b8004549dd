// The credentials the gateway sent an upstream, cut out of the body it relays (docs/errors.md): an
// upstream's streamed error event may quote the request it got, the operator's key included, and a
// relayed stream is written to the caller byte for byte. A key split across two chunks is caught
// too: the end of a chunk that could begin a key waits for the next chunk (never a whole event,
// as keys do not begin with the blank line that ends one).
//
// A cut applied by the reader to each chunk as it takes it (the relay's per-chunk hook), not a
// Transform stream between the upstream body and the relay: the stream, its pipeline and the hop
// of every chunk through it cost about a fifth of a relayed stream's CPU (docs/benchmarks.md).
import type { Readable } from 'node:stream';

const REDACTED = Buffer.from('[redacted]');
// as redact.ts: short strings would blank ordinary words; real keys are long
const MIN_SECRET = 8;

/** The cut of one body: every chunk through `take` in order, then `end` once the body ended. */
export interface SecretCut {
  /** The chunk with the secrets replaced, less an end that may begin a secret (it waits for the next chunk); may be empty. */
  take(chunk: Buffer): Buffer;
  /** What was held back, once the body ended; undefined when nothing was. */
  end(): Buffer | undefined;
}

/** The cut of `secrets`, or undefined when none is long enough to cut (the body goes as it is). */
export function secretCut(secrets: ReadonlyArray<string | undefined>): SecretCut | undefined {
  const cut = [...new Set(secrets)].filter((secret): secret is string => typeof secret === 'string' && secret.length >= MIN_SECRET).map((secret) => Buffer.from(secret));
  if (cut.length === 0) return undefined;
  let pending: Buffer | undefined;
  return {
    take(chunk) {
      let data = pending ? Buffer.concat([pending, chunk]) : chunk;
      for (const secret of cut) if (data.includes(secret)) data = replaceAll(data, secret);
      const held = heldBack(data, cut);
      pending = held > 0 ? data.subarray(data.length - held) : undefined;
      return held > 0 ? data.subarray(0, data.length - held) : data;
    },
    end() {
      const rest = pending;
      pending = undefined;
      return rest;
    },
  };
}

/** The body's chunks with `cut` applied, its held end last; errors of the body are thrown as they are. */
export async function* secretFreeChunks(body: Readable, cut: SecretCut | undefined): AsyncGenerator<Buffer> {
  for await (const chunk of body) {
    const clean = cut ? cut.take(chunk as Buffer) : (chunk as Buffer);
    if (clean.length > 0) yield clean;
  }
  const rest = cut?.end();
  if (rest) yield rest;
}

function replaceAll(data: Buffer, secret: Buffer): Buffer {
  const pieces: Buffer[] = [];
  let from = 0;
  for (let at = data.indexOf(secret); at !== -1; at = data.indexOf(secret, from)) {
    pieces.push(data.subarray(from, at), REDACTED);
    from = at + secret.length;
  }
  pieces.push(data.subarray(from));
  return Buffer.concat(pieces);
}

/** The length of the longest end of `data` that is the beginning of a secret (and may go on in the next chunk). */
function heldBack(data: Buffer, secrets: readonly Buffer[]): number {
  let longest = 0;
  for (const secret of secrets) {
    // such an end begins with the secret's first byte: only those places are compared (an event's
    // tail has none, most often), from the longest end down
    const first = secret[0]!;
    for (let at = data.indexOf(first, Math.max(0, data.length - secret.length + 1)); at !== -1 && data.length - at > longest; at = data.indexOf(first, at + 1)) {
      if (data.compare(secret, 0, data.length - at, at) === 0) {
        longest = data.length - at;
        break;
      }
    }
  }
  return longest;
}
