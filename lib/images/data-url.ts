// Data URL image values (spec §2.2: "a public URL or a Data URL"). Checked without decoding: the
// decoded size follows from the base64 length, and the alphabet check is one linear regex pass.

export type DataUrlCheck =
  | { ok: true; mime: string; bytes: number; base64Start: number }
  | { ok: false; reason: 'not_image' | 'not_base64' | 'bad_base64' | 'empty' | 'too_large'; bytes?: number };

const HEADER = /^data:(image\/[a-z0-9.+-]+)(?:;[a-z0-9-]+=[^;,]*)*;base64,/i;
const BASE64_BODY = /^[A-Za-z0-9+/]*={0,2}$/;

export function checkImageDataUrl(value: string, maxBytes: number): DataUrlCheck {
  const head = value.slice(0, 256);
  const header = HEADER.exec(head);
  if (!header) {
    return /^data:image\/[a-z0-9.+-]+[;,]/i.test(head) ? { ok: false, reason: 'not_base64' } : { ok: false, reason: 'not_image' };
  }
  const start = header[0].length;
  const length = value.length - start;
  if (length === 0) return { ok: false, reason: 'empty' };
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  const bytes = Math.floor((length * 3) / 4) - padding;
  // size first: a 100 MB string is refused before the alphabet pass reads it
  if (bytes > maxBytes) return { ok: false, reason: 'too_large', bytes };
  if (length % 4 !== 0 || !BASE64_BODY.test(start === 0 ? value : value.slice(start))) {
    return { ok: false, reason: 'bad_base64' };
  }
  return { ok: true, mime: header[1]!.toLowerCase(), bytes, base64Start: start };
}
