// Data URL image values (contract §2.2: "a public URL or a Data URL"). Checked without decoding: the
// decoded size follows from the base64 length, and the alphabet check is one sticky regex run over
// the base64 from where it starts (no slice, no anchors: about half the time on a 14 MB value).
// The same check runs over a Data URL still in the request body's bytes (checkImageDataUrlBytes),
// so a large one never has to become a JS string (docs/architecture.md "Performance": memory per request ≤ 2x the body).

export type DataUrlCheck = { ok: true; mime: string; bytes: number; base64Start: number } | { ok: false; reason: 'not_image' | 'not_base64' | 'bad_base64' | 'empty' | 'too_large'; bytes?: number };

const HEADER = /^data:(image\/[a-z0-9.+-]+)(?:;[a-z0-9-]+=[^;,]*)*;base64,/i;
// sticky: the run starts at lastIndex (after the header) and ends at the first other character
const BASE64_RUN = /[A-Za-z0-9+/]*/y;
const EQUALS = 0x3d;
/** Bytes read into one latin1 string at a time by the byte check: young garbage, never a whole copy. */
const RUN_SLICE = 64 * 1024;

/** What a refused Data URL lacks, said after its field path (the size has its own message, with the limit). */
export function dataUrlProblem(reason: Exclude<Extract<DataUrlCheck, { ok: false }>['reason'], 'too_large'>): string {
  return {
    not_image: "must be an image Data URL: 'data:image/<type>;base64,<data>'",
    not_base64: "must be a base64 Data URL: 'data:image/<type>;base64,<data>'",
    bad_base64: 'is not valid base64 after the Data URL header',
    empty: 'is a Data URL with no data',
  }[reason];
}

export function checkImageDataUrl(value: string, maxBytes: number): DataUrlCheck {
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  return judge(value.slice(0, 256), value.length, padding, maxBytes, (start) => {
    BASE64_RUN.lastIndex = start;
    BASE64_RUN.exec(value);
    return BASE64_RUN.lastIndex;
  });
}

/** checkImageDataUrl of the ASCII text in `bytes` [from, to), read in slices, never as one string. */
export function checkImageDataUrlBytes(bytes: Buffer, from: number, to: number, maxBytes: number): DataUrlCheck {
  const length = to - from;
  const padding = length >= 2 && bytes[to - 1] === EQUALS ? (bytes[to - 2] === EQUALS ? 2 : 1) : length >= 1 && bytes[to - 1] === EQUALS ? 1 : 0;
  return judge(bytes.toString('latin1', from, Math.min(to, from + 256)), length, padding, maxBytes, (start) => {
    for (let at = from + start; at < to; at += RUN_SLICE) {
      const slice = bytes.toString('latin1', at, Math.min(to, at + RUN_SLICE));
      BASE64_RUN.lastIndex = 0;
      BASE64_RUN.exec(slice);
      if (BASE64_RUN.lastIndex !== slice.length) return at - from + BASE64_RUN.lastIndex;
    }
    return length;
  });
}

/** The rules, given the first 256 characters, the whole length, the padding and where the base64 run from an index ends. */
function judge(head: string, total: number, padding: number, maxBytes: number, runEnd: (start: number) => number): DataUrlCheck {
  const header = HEADER.exec(head);
  if (!header) {
    return /^data:image\/[a-z0-9.+-]+[;,]/i.test(head) ? { ok: false, reason: 'not_base64' } : { ok: false, reason: 'not_image' };
  }
  const start = header[0].length;
  const length = total - start;
  if (length === 0) return { ok: false, reason: 'empty' };
  const bytes = Math.floor((length * 3) / 4) - padding;
  // size first: a 100 MB string is refused before the alphabet pass reads it
  if (bytes > maxBytes) return { ok: false, reason: 'too_large', bytes };
  if (length % 4 !== 0 || (padding > 0 && length === padding)) return { ok: false, reason: 'bad_base64' };
  // only the padding may lie outside the alphabet
  if (runEnd(start) !== total - padding) return { ok: false, reason: 'bad_base64' };
  return { ok: true, mime: header[1]!.toLowerCase(), bytes, base64Start: start };
}
