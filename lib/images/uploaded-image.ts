// An uploaded image (multipart edits) kept as raw bytes until it is sent: the upstream wants a Data
// URL, but building that string (and the JSON around it) would hold each upload three times over.
// The bytes are the chunks the upload arrived in (express/body/upload-chunks.ts), never joined.
// encodeJsonWithUploads writes the JSON with each upload encoded on the way out, and sends long
// plain strings (Data URLs sent as JSON) the same way: slice by slice, never one whole JSON string
// plus its Buffer copy (docs/architecture.md "Security boundaries": peak memory per request within ~2x its body). A Data URL the JSON
// parser kept in the body's bytes (DataUrlText) is sent as views of those bytes: no copy at all.
// An API that takes bare base64 beside a MIME type (Gemini's inlineData, docs/providers/gemini.md) gets the
// same bytes wrapped in InlineBase64: no `data:` header, still never one whole string.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { DataUrlText } from '../json/data-url-text.js';

export class UploadedImage {
  constructor(
    readonly mime: string,
    /** The image's bytes, in order, as the chunks they arrived in. */
    readonly chunks: readonly Buffer[],
    /** Their total length. */
    readonly size: number,
  ) {}
}

/** An upload's (or a Data URL view's) bytes sent as bare base64, without the `data:<mime>;base64,` header. */
export class InlineBase64 {
  constructor(readonly image: UploadedImage | DataUrlText) {}

  get mime(): string {
    return this.image.mime;
  }
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
  const streamed: Array<UploadedImage | DataUrlText | InlineBase64 | string> = [];
  // a per-call nonce: caller text can never spell a placeholder. Drawn when the first placeholder is
  // needed: most bodies have none, and a randomBytes call per request was ~30 µs of every DashScope
  // image request's CPU in the benchmark's profile (docs/architecture.md "Performance")
  let nonce: string | undefined;
  const placeholder = (item: UploadedImage | DataUrlText | InlineBase64 | string): string => `\u0000${(nonce ??= randomBytes(8).toString('hex'))}:${streamed.push(item) - 1}\u0000`;
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (item instanceof UploadedImage || item instanceof InlineBase64) return placeholder(item);
    if (typeof item === 'string' && item.length >= LONG_STRING && isPlainAscii(item)) return placeholder(item);
    // JSON.stringify calls a value's toJSON before the replacer sees it: a DataUrlText is swapped
    // for its placeholder while its parent is visited, so its string copy is never made
    if (typeof item === 'object' && item !== null) return withViewPlaceholders(item, placeholder);
    return item;
  });
  if (streamed.length === 0) return { body: text, length: Buffer.byteLength(text) };
  // JSON.stringify writes the NUL as the six characters \u0000
  const parts = text.split(new RegExp(`\\\\u0000${nonce!}:(\\d+)\\\\u0000`));
  let length = 0;
  parts.forEach((part, index) => {
    if (index % 2 === 0) length += Buffer.byteLength(part);
    else {
      const item = streamed[Number(part)]!;
      if (typeof item === 'string') length += item.length;
      else if (item instanceof DataUrlText) length += item.text.length;
      else if (item instanceof InlineBase64) length += inlineLength(item);
      else length += `data:${item.mime};base64,`.length + 4 * Math.ceil(item.size / 3);
    }
  });
  function* pieces(): Generator<Buffer | string> {
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
      if (item instanceof InlineBase64) {
        const { image } = item;
        if (image instanceof UploadedImage) yield* base64Of(image.chunks);
        else for (let start = image.text.indexOf(0x2c) + 1; start < image.text.length; start += SLICE) yield image.text.subarray(start, Math.min(start + SLICE, image.text.length));
        continue;
      }
      if (item instanceof DataUrlText) {
        // checked ASCII already: views of the body's own bytes go out as they are
        for (let start = 0; start < item.text.length; start += SLICE) yield item.text.subarray(start, start + SLICE);
        continue;
      }
      yield Buffer.from(`data:${item.mime};base64,`);
      yield* base64Of(item.chunks);
    }
  }
  return { body: Readable.from(pieces(), { objectMode: true, highWaterMark: 1 }), length };
}

/** The bytes of an InlineBase64 as sent: the base64 of an upload, or a Data URL view after its comma. */
function inlineLength(item: InlineBase64): number {
  const { image } = item;
  return image instanceof UploadedImage ? 4 * Math.ceil(image.size / 3) : image.text.length - (image.text.indexOf(0x2c) + 1);
}

/**
 * The base64 of the chunks' bytes, one string per chunk or slice (a socket's read at most), with
 * the 0-2 bytes that end a chunk outside a 3-byte group carried into the next one, so no padding
 * falls in the middle. Strings, not Buffers: the socket copies a string as it writes it, where a
 * Buffer.from copy per slice would be garbage outside the heap that the GC frees late.
 */
function* base64Of(chunks: readonly Buffer[]): Generator<string> {
  let carry: Buffer = Buffer.alloc(0);
  for (const chunk of chunks) {
    let from = 0;
    if (carry.length > 0) {
      from = Math.min(3 - carry.length, chunk.length);
      carry = Buffer.concat([carry, chunk.subarray(0, from)]);
      if (carry.length < 3) continue;
      yield carry.toString('base64');
      carry = Buffer.alloc(0);
    }
    const whole = from + Math.floor((chunk.length - from) / 3) * 3;
    for (let start = from; start < whole; start += SLICE) yield chunk.toString('base64', start, Math.min(start + SLICE, whole));
    if (whole < chunk.length) carry = Buffer.from(chunk.subarray(whole));
  }
  if (carry.length > 0) yield carry.toString('base64');
}

/** `item` with each DataUrlText member replaced by its placeholder (a shallow copy, only when it has one). */
function withViewPlaceholders(item: object, placeholder: (view: DataUrlText) => string): object {
  if (item instanceof DataUrlText) return item;
  let copy: Record<string, unknown> | unknown[] | undefined;
  // for-in, not Object.entries: this runs for every object of every encoded body (no array per object)
  for (const key in item) {
    const member = (item as Record<string, unknown>)[key];
    if (!(member instanceof DataUrlText)) continue;
    copy ??= Array.isArray(item) ? [...(item as unknown[])] : { ...(item as Record<string, unknown>) };
    (copy as Record<string, unknown>)[key] = placeholder(member);
  }
  return copy ?? item;
}

function isPlainAscii(text: string): boolean {
  PLAIN_ASCII_RUN.lastIndex = 0;
  PLAIN_ASCII_RUN.exec(text);
  return PLAIN_ASCII_RUN.lastIndex === text.length;
}
