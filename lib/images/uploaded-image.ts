// An uploaded image (multipart edits) kept as raw bytes until it is sent: the upstream wants a Data
// URL, but building that string (and the JSON around it) would hold each upload three times over.
// encodeJsonWithUploads writes the JSON with each upload encoded on the way out, and sends long
// plain strings (Data URLs sent as JSON) the same way: slice by slice, never one whole JSON string
// plus its Buffer copy (issue 9: peak memory per request within ~2x its body).
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

export class UploadedImage {
  constructor(
    readonly mime: string,
    readonly bytes: Buffer,
  ) {}
}

// a multiple of 3: slices encode without padding in the middle of the Data URL
const SLICE = 3 * 64 * 1024;
/** Strings from this length on are streamed when they need no JSON escaping. */
const LONG_STRING = 64 * 1024;
/** A run of ASCII that JSON.stringify leaves as it is (sticky: it ends at the first other character). */
const PLAIN_ASCII_RUN = /[\x20\x21\x23-\x5b\x5d-\x7e]*/y;

export type EncodedJson = { body: string; length: number } | { body: Readable; length: number };

/**
 * JSON.stringify, with every UploadedImage in `value` sent as a `data:<mime>;base64,…` string and
 * every long plain-ASCII string sent in slices; `length` is the exact byte length of the whole.
 */
export function encodeJsonWithUploads(value: unknown): EncodedJson {
  const streamed: Array<UploadedImage | string> = [];
  // a per-call nonce: caller text can never spell a placeholder. Made at the first placeholder, not
  // per call: most bodies stream nothing, and randomBytes is a native call per request (issue 15)
  let nonce = '';
  const placeholder = (item: UploadedImage | string): string => {
    nonce ||= randomBytes(8).toString('hex');
    return `\u0000${nonce}:${streamed.push(item) - 1}\u0000`;
  };
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (item instanceof UploadedImage) return placeholder(item);
    if (typeof item === 'string' && item.length >= LONG_STRING && isPlainAscii(item)) return placeholder(item);
    return item;
  });
  if (streamed.length === 0) return { body: text, length: Buffer.byteLength(text) };
  // JSON.stringify writes the NUL as the six characters \u0000
  const parts = text.split(new RegExp(`\\\\u0000${nonce}:(\\d+)\\\\u0000`));
  let length = 0;
  parts.forEach((part, index) => {
    if (index % 2 === 0) length += Buffer.byteLength(part);
    else {
      const item = streamed[Number(part)]!;
      length += typeof item === 'string' ? item.length : `data:${item.mime};base64,`.length + 4 * Math.ceil(item.bytes.length / 3);
    }
  });
  function* pieces(): Generator<Buffer> {
    for (let index = 0; index < parts.length; index += 1) {
      if (index % 2 === 0) {
        yield Buffer.from(parts[index]!);
        continue;
      }
      const item = streamed[Number(parts[index])]!;
      if (typeof item === 'string') {
        // plain ASCII: latin1 is its UTF-8, and a slice never splits a character
        for (let start = 0; start < item.length; start += SLICE) yield Buffer.from(item.slice(start, start + SLICE), 'latin1');
        continue;
      }
      yield Buffer.from(`data:${item.mime};base64,`);
      for (let start = 0; start < item.bytes.length; start += SLICE) {
        yield Buffer.from(item.bytes.toString('base64', start, Math.min(start + SLICE, item.bytes.length)), 'latin1');
      }
    }
  }
  return { body: Readable.from(pieces(), { objectMode: false }), length };
}

function isPlainAscii(text: string): boolean {
  PLAIN_ASCII_RUN.lastIndex = 0;
  PLAIN_ASCII_RUN.exec(text);
  return PLAIN_ASCII_RUN.lastIndex === text.length;
}
