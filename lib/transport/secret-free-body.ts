// A relayed upstream body with the credentials the gateway sent it cut out (docs/errors.md): an
// upstream's streamed error event may quote the request it got, the operator's key included, and a
// relayed stream is written to the caller byte for byte. A key split across two chunks is caught
// too: the end of a chunk that could begin a key waits for the next chunk (never a whole event,
// as keys do not begin with the blank line that ends one).
import { type Readable, Transform, pipeline } from 'node:stream';

const REDACTED = Buffer.from('[redacted]');
// as redact.ts: short strings would blank ordinary words; real keys are long
const MIN_SECRET = 8;

/** `body` as it comes, each of `secrets` replaced; the body itself when there is nothing to cut. */
export function secretFreeBody(body: Readable, secrets: ReadonlyArray<string | undefined>): Readable {
  const cut = [...new Set(secrets)].filter((secret): secret is string => typeof secret === 'string' && secret.length >= MIN_SECRET).map((secret) => Buffer.from(secret));
  if (cut.length === 0) return body;
  let pending: Buffer = Buffer.alloc(0);
  const redacting = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let data = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      for (const secret of cut) if (data.includes(secret)) data = replaceAll(data, secret);
      const held = heldBack(data, cut);
      pending = data.subarray(data.length - held);
      done(null, held === data.length ? undefined : data.subarray(0, data.length - held));
    },
    flush(done) {
      done(null, pending.length > 0 ? pending : undefined);
    },
  });
  // errors of the upstream body reach the relay as the same error (its failure() reads them); a relay
  // that destroys the body (the client left) ends the upstream call with it
  pipeline(body, redacting, () => {});
  return redacting;
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
