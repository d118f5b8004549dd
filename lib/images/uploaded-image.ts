// An uploaded image (multipart edits) kept as raw bytes until it is sent: the upstream wants a Data
// URL, but building that string (and the JSON around it) would hold each upload three times over.
// encodeJsonWithUploads writes the JSON with each upload encoded on the way out.
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

export type EncodedJson = { body: string; length: number } | { body: Readable; length: number };

/** JSON.stringify, with every UploadedImage in `value` sent as a `data:<mime>;base64,…` string. */
export function encodeJsonWithUploads(value: unknown): EncodedJson {
  const uploads: UploadedImage[] = [];
  // a per-call nonce: caller text can never spell a placeholder
  const nonce = randomBytes(8).toString('hex');
  const text = JSON.stringify(value, (_key, item: unknown) => (item instanceof UploadedImage ? `\u0000${nonce}:${uploads.push(item) - 1}\u0000` : item));
  if (uploads.length === 0) return { body: text, length: Buffer.byteLength(text) };
  // JSON.stringify writes the NUL as the six characters \u0000
  const parts = text.split(new RegExp(`\\\\u0000${nonce}:(\\d+)\\\\u0000`));
  let length = 0;
  parts.forEach((part, index) => {
    if (index % 2 === 0) length += Buffer.byteLength(part);
    else {
      const upload = uploads[Number(part)]!;
      length += `data:${upload.mime};base64,`.length + 4 * Math.ceil(upload.bytes.length / 3);
    }
  });
  function* pieces(): Generator<Buffer> {
    for (let index = 0; index < parts.length; index += 1) {
      if (index % 2 === 0) {
        yield Buffer.from(parts[index]!);
        continue;
      }
      const upload = uploads[Number(parts[index])]!;
      yield Buffer.from(`data:${upload.mime};base64,`);
      for (let start = 0; start < upload.bytes.length; start += SLICE) {
        yield Buffer.from(upload.bytes.toString('base64', start, Math.min(start + SLICE, upload.bytes.length)), 'latin1');
      }
    }
  }
  return { body: Readable.from(pieces(), { objectMode: false }), length };
}
