// The `Prefer` request header (RFC 7240) as the create routes read it: `respond-async` asks for a task
// instead of a held request and `wait=<seconds>` for how long the client is willing to wait for the
// ordinary answer first (docs/image-tasks.md); `dry-run` asks for a quote instead of the work
// (docs/tenancy-and-billing.md "Quotes before work"). Several headers, and comma-separated lists, are
// one list; names are case-insensitive; anything else is ignored, as the RFC asks.
import type { IncomingHttpHeaders } from 'node:http';

export interface Preference {
  respondAsync: boolean;
  /** `dry-run`: answer what the request would cost and reserve, do nothing. */
  dryRun: boolean;
  /** `wait=<seconds>`, when given as a whole number. */
  waitSeconds?: number;
}

const NONE: Preference = { respondAsync: false, dryRun: false };

export function preferenceOf(headers: IncomingHttpHeaders): Preference {
  const header = headers.prefer;
  // most requests carry none: nothing is parsed for them
  if (header === undefined) return NONE;
  const text = Array.isArray(header) ? header.join(',') : header;
  let respondAsync = false;
  let dryRun = false;
  let waitSeconds: number | undefined;
  for (const part of text.split(',')) {
    // a preference's own parameters follow a ';' (RFC 7240 §2): only its name and value matter here
    const [token = ''] = part.split(';');
    const [rawName = '', rawValue] = token.split('=');
    const name = rawName.trim().toLowerCase();
    const value = rawValue?.trim().replace(/^"(.*)"$/, '$1');
    if (name === 'respond-async') respondAsync = true;
    else if (name === 'dry-run') dryRun = true;
    else if (name === 'wait' && value !== undefined && /^\d{1,6}$/.test(value)) waitSeconds = Number(value);
  }
  return waitSeconds === undefined ? { respondAsync, dryRun } : { respondAsync, dryRun, waitSeconds };
}
