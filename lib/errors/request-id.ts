// The id of one request in the gateway's log lines and its error answers (docs/observability.md "Logs"):
// the host's own when it set one (pino-http's `req.id`), so the gateway's lines join the host's,
// else a random UUID made when a line or an error answer first needs it, then kept on the request
// (under a registered symbol, never a name a host uses) so every line of the request has the same.
import { randomUUID } from 'node:crypto';

// an id is written into logs and a response header: short, and nothing that could split a line
const SAFE_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;
const KEPT = Symbol.for('express-image-gateway.requestId');

/** The request's id: the host's `req.id` when it is a safe short string or number, else a new UUID (kept). */
export function requestIdOf(req: object): string {
  const held = req as { id?: unknown; [KEPT]?: string };
  const kept = held[KEPT];
  if (kept !== undefined) return kept;
  const given = held.id;
  const id = typeof given === 'number' && Number.isFinite(given) ? String(given) : typeof given === 'string' && SAFE_ID.test(given) ? given : randomUUID();
  Object.defineProperty(req, KEPT, { value: id, enumerable: false });
  return id;
}
