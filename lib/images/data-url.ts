// Data URL image values (contract §2.2: "a public URL or a Data URL"). Checked without decoding: the
// decoded size follows from the base64 length, and the alphabet check is one sticky regex run over
// the base64 from where it starts (no slice, no anchors: about half the time on a 14 MB value).

export type DataUrlCheck = { ok: true; mime: string; bytes: number; base64Start: number } | { ok: false; reason: 'not_image' | 'not_base64' | 'bad_base64' | 'empty' | 'too_large'; bytes?: number };

const HEADER = /^data:(image\/[a-z0-9.+-]+)(?:;[a-z0-9-]+=[^;,]*)*;base64,/i;
// sticky: the run starts at lastIndex (after the header) and ends at the first other character
const BASE64_RUN = /[A-Za-z0-9+/]*/y;

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
  if (length % 4 !== 0 || (padding > 0 && length === padding)) return { ok: false, reason: 'bad_base64' };
  // only the padding may lie outside the alphabet
  BASE64_RUN.lastIndex = start;
  BASE64_RUN.exec(value);
  if (BASE64_RUN.lastIndex !== value.length - padding) return { ok: false, reason: 'bad_base64' };
  return { ok: true, mime: header[1]!.toLowerCase(), bytes, base64Start: start };
}
