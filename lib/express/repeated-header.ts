// Whether a request carries a header more than once (Node keeps the first of a repeated
// Authorization or Content-Type in req.headers, so a second one would be silently ignored).
// Counted in req.rawHeaders: req.headersDistinct builds an array for every header of the request
// on first use, an allocation per request on the hot path (docs/architecture.md "Performance").
import type { IncomingMessage } from 'node:http';

/** `name` in lower case. */
export function isRepeatedHeader(req: IncomingMessage, name: string): boolean {
  const raw = req.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const field = raw[i]!;
    if (field.length === name.length && field.toLowerCase() === name && ++seen > 1) return true;
  }
  return false;
}
