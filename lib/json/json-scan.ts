// A byte scan of a JSON body before it is parsed: counts members and array items and measures the
// nesting, outside strings. JSON.parse of millions of tiny members holds the event loop for seconds
// and builds an object graph many times the body's size; this scan refuses such a body after
// reading only as far as the limit, and without allocating. It does not validate: JSON.parse does.

export type JsonScanResult = { ok: true; longStrings?: LongString[] } | { ok: false; reason: 'members' | 'depth' };

/**
 * The content of one long string value: bytes [from, to) between its quotes, with no escapes but
 * `\/` (PHP's json_encode and some others escape every '/', which base64 is full of).
 */
export interface LongString {
  from: number;
  to: number;
  /** True when the content holds `\/` escapes, to be read as '/'. */
  slashEscapes: boolean;
}

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const COLON = 0x3a;
const SLASH = 0x2f;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/**
 * Members and items are counted as commas plus opened containers: each non-empty object or array
 * holds one more entry than it has commas, and an empty one counts as one.
 */
export function scanJsonStructure(bytes: Buffer, start: number, maxMembers: number, maxDepth: number, longStringBytes?: number): JsonScanResult {
  const end = bytes.length;
  // with `longStringBytes`, string VALUES at least that long and free of escapes are listed, so the
  // parser can leave them out of the text it hands JSON.parse (json-body.ts: memory stays ~2x the body)
  const longStrings: LongString[] | undefined = longStringBytes === undefined ? undefined : [];
  // native searches skip long strings (Data URLs) at memchr speed; escapes fall back to a byte loop
  let nextBackslash = bytes.indexOf(BACKSLASH, start);
  if (nextBackslash === -1) nextBackslash = end;
  let depth = 0;
  let members = 0;
  let index = start;
  while (index < end) {
    const byte = bytes[index]!;
    if (byte === QUOTE) {
      if (nextBackslash < index) {
        nextBackslash = bytes.indexOf(BACKSLASH, index);
        if (nextBackslash === -1) nextBackslash = end;
      }
      const from = index + 1;
      const quote = bytes.indexOf(QUOTE, from);
      // no escape before the next quote: that quote closes the string
      if (quote !== -1 && nextBackslash > quote) {
        index = quote + 1;
        if (longStrings && quote - from >= longStringBytes! && !isKey(bytes, index)) longStrings.push({ from, to: quote, slashEscapes: false });
        continue;
      }
      // a long string whose only escapes are '\/': each backslash found at memchr speed
      if (longStrings && quote !== -1 && quote - from >= longStringBytes!) {
        let backslash = nextBackslash;
        while (backslash < quote && bytes[backslash + 1] === SLASH) {
          backslash = bytes.indexOf(BACKSLASH, backslash + 2);
          if (backslash === -1) backslash = end;
        }
        // every backslash before the quote escaped a '/', so none escaped the quote: it closes the string
        if (backslash > quote) {
          index = quote + 1;
          nextBackslash = backslash;
          if (!isKey(bytes, index)) longStrings.push({ from, to: quote, slashEscapes: true });
          continue;
        }
      }
      index = escapedStringEnd(bytes, from);
      continue;
    }
    if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth += 1;
      if (depth > maxDepth) return { ok: false, reason: 'depth' };
      members += 1;
      if (members > maxMembers) return { ok: false, reason: 'members' };
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth -= 1;
    } else if (byte === COMMA) {
      members += 1;
      if (members > maxMembers) return { ok: false, reason: 'members' };
    }
    index += 1;
  }
  return longStrings ? { ok: true, longStrings } : { ok: true };
}

/** True when the string that closed just before `index` is an object key (a ':' follows). */
function isKey(bytes: Buffer, index: number): boolean {
  let next = index;
  while (next < bytes.length && WHITESPACE.has(bytes[next]!)) next += 1;
  return bytes[next] === COLON;
}

/** The index after the closing quote of a string with escapes whose content starts at `from` (or the end). */
function escapedStringEnd(bytes: Buffer, from: number): number {
  for (let index = from; index < bytes.length; index += 1) {
    const byte = bytes[index];
    if (byte === BACKSLASH) index += 1;
    else if (byte === QUOTE) return index + 1;
  }
  return bytes.length;
}
