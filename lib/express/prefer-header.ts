// The `Prefer` request header (RFC 7240) as the image routes read it (docs/image-tasks.md):
// `respond-async` asks for a task instead of a held request; `wait=<seconds>` for how long the client
// is willing to wait for the ordinary answer first. Several headers, and comma-separated lists, are one
// list; names are case-insensitive; anything else is ignored, as the RFC asks.
import type { IncomingHttpHeaders } from 'node:http';

export interface AsyncPreference {
  respondAsync: boolean;
  /** `wait=<seconds>`, when given as a whole number. */
  waitSeconds?: number;
}

const NONE: AsyncPreference = { respondAsync: false };

export function preferenceOf(headers: IncomingHttpHeaders): AsyncPreference {
  const header = headers.prefer;
  // most requests carry none: nothing is parsed for them
  if (header === undefined) return NONE;
  const text = Array.isArray(header) ? header.join(',') : header;
  let respondAsync = false;
  let waitSeconds: number | undefined;
  for (const part of text.split(',')) {
    // a preference's own parameters follow a ';' (RFC 7240 §2): only its name and value matter here
    const [token = ''] = part.split(';');
    const [rawName = '', rawValue] = token.split('=');
    const name = rawName.trim().toLowerCase();
    const value = rawValue?.trim().replace(/^"(.*)"$/, '$1');
    if (name === 'respond-async') respondAsync = true;
    else if (name === 'wait' && value !== undefined && /^\d{1,6}$/.test(value)) waitSeconds = Number(value);
  }
  return waitSeconds === undefined ? { respondAsync } : { respondAsync, waitSeconds };
}
