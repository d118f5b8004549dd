// A multipart/form-data body written from plain data: text fields, and files as the chunks they
// arrived in, sent as views of those chunks (docs/benchmarks.md "Multipart edits"). A web FormData
// copies every file into a Blob, and its encoder copies the Blob again as it streams it: the uploads
// were held twice, a third time in flight. Here only the part headers are new bytes, and the length
// is known before the first byte is sent (a Content-Length, not a chunked body).
// Names, file names and line breaks follow the HTML form encoding, as FormData writes them.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

export type FormPart = { name: string; value: string } | { name: string; fileName: string; type: string; chunks: readonly Buffer[] };

/** An encoded form: re-openable (each upstream attempt reads it from the start). */
export interface FormBody {
  readonly contentType: string;
  /** The exact byte length of the body. */
  readonly length: number;
  /** A fresh stream of the body's bytes. */
  open(): Readable;
  /**
   * The same form without the text fields named in `drop`, then `add` appended: an adapter's own
   * fields (docs/security.md "Tenant identifier sent to vendors"). The files stay the same chunks.
   */
  withTextFields(drop: readonly string[], add: ReadonlyArray<{ name: string; value: string }>): FormBody;
}

const CRLF = Buffer.from('\r\n');

export function encodeFormBody(parts: readonly FormPart[]): FormBody {
  const boundary = `----gateway-form-${randomBytes(12).toString('hex')}`;
  // the pieces of the whole body in order: part headers and text values as new bytes, files as their chunks
  const pieces: Buffer[] = [];
  for (const part of parts) {
    if ('value' in part) {
      pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(normalizeLineBreaks(part.name))}"\r\n\r\n${normalizeLineBreaks(part.value)}\r\n`));
      continue;
    }
    pieces.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(normalizeLineBreaks(part.name))}"; filename="${escapeName(part.fileName)}"\r\nContent-Type: ${/^[^\r\n]+$/.test(part.type) ? part.type : 'application/octet-stream'}\r\n\r\n`,
      ),
    );
    for (const chunk of part.chunks) if (chunk.length > 0) pieces.push(chunk);
    pieces.push(CRLF);
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  const length = pieces.reduce((total, piece) => total + piece.length, 0);
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length,
    // object mode: a byte stream read while paused joins its buffered pieces into one new Buffer
    open: () => Readable.from(pieces, { objectMode: true }),
    withTextFields: (drop, add) => encodeFormBody([...parts.filter((part) => !('value' in part) || !drop.includes(part.name)), ...add]),
  };
}

/** A field or file name in its quoted header parameter: `"`, CR and LF percent-encoded (as FormData does; a field name's line breaks are made CRLF first). */
function escapeName(name: string): string {
  return name.replace(/\n/g, '%0A').replace(/\r/g, '%0D').replace(/"/g, '%22');
}

/** A text value's line breaks as CRLF (as FormData does). */
function normalizeLineBreaks(value: string): string {
  return value.replace(/\r(?!\n)|(?<!\r)\n/g, '\r\n');
}
