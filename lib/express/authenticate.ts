// Bearer authentication (contract §5): every route runs this first, so no body is read and no upstream is
// called for a request without a valid key. The caller goes into the request's context, never into
// res.locals, where a host's own `caller` key would collide with it; hosts read it with gatewayCaller(res).
import type { Request, RequestHandler } from 'express';
import { GatewayError } from '../errors/gateway-error.js';
import { bearerKeyOfHeader } from '../security/bearer-key.js';
import { redactSecrets } from '../errors/redact.js';
import type { ResolvedOptions } from '../gateway/resolve-options.js';
import type { Caller } from '../types.js';
import { isRepeatedHeader } from './repeated-header.js';
import { type RequestContext, withContext } from './request-context.js';

const HINT = "Send the header 'Authorization: Bearer <API_KEY>'.";
// Longer "keys" are not keys; refusing them early keeps hashing and host lookups bounded.
const MAX_KEY_LENGTH = 1024;
type Next = (error?: unknown) => void;

export function createAuthenticate(options: ResolvedOptions): RequestHandler {
  return withContext('authenticate', (context, next) => {
    const { req } = context;
    // Node keeps the first of repeated headers; two credentials are refused, never half-read
    if (isRepeatedHeader(req, 'authorization')) {
      next(GatewayError.authentication(`Send exactly one Authorization header. ${HINT}`));
      return;
    }
    const header = req.headers.authorization;
    if (header === undefined || header.trim() === '') {
      next(GatewayError.authentication(`Missing API key. ${HINT}`));
      return;
    }
    const match = /^(\S+)(?:\s+(.*))?$/.exec(header.trim());
    if (!match || match[1]!.toLowerCase() !== 'bearer') {
      next(GatewayError.authentication(`The Authorization header must use the Bearer scheme. ${HINT}`));
      return;
    }
    const key = (match[2] ?? '').trim();
    if (key === '') {
      next(GatewayError.authentication(`The API key is empty. ${HINT}`));
      return;
    }
    if (key.length > MAX_KEY_LENGTH || /\s/.test(key)) {
      next(invalidKey());
      return;
    }
    let verdict: ReturnType<ResolvedOptions['verifyKey']>;
    try {
      verdict = options.verifyKey(key, req);
    } catch (error) {
      verifierFailed(options, context, error, key, next);
      return;
    }
    if (verdict && typeof (verdict as Promise<unknown>).then === 'function') {
      (verdict as Promise<Caller | null | undefined>).then(
        (caller) => accept(caller, context, next),
        (error: unknown) => verifierFailed(options, context, error, key, next),
      );
    } else {
      accept(verdict as Caller | null | undefined, context, next);
    }
  });
}

function accept(caller: Caller | null | undefined, context: RequestContext, next: Next): void {
  if (!caller || typeof caller.id !== 'string' || caller.id === '') {
    next(invalidKey());
    return;
  }
  context.caller = caller;
  next();
}

function invalidKey(): GatewayError {
  // contract §7: the message says what to check; the key itself is never echoed
  return GatewayError.authentication('Invalid API key. Check the key, that it is still active, and the header form (Authorization: Bearer <API_KEY>).');
}

function verifierFailed(options: ResolvedOptions, context: RequestContext, error: unknown, key: string, next: Next): void {
  // a host's error may quote the key it was looking up: the logger never gets a full key
  const message = redactSecrets(error instanceof Error ? error.message : String(error), [key]);
  options.logger.error({ requestId: context.requestId, error: message }, 'verifyKey threw; answering 500');
  next(GatewayError.internal());
}

/** The bearer key of an authenticated request (to refuse it inside callback URLs); never stored. */
export function bearerKeyOf(req: Request): string {
  return bearerKeyOfHeader(req.headers.authorization);
}

/** The caller of an authenticated request. Routes run after createAuthenticate, so it is always there. */
export function callerOf(context: RequestContext): Caller {
  const caller = context.caller;
  if (!caller) throw new Error('callerOf: the route runs before createAuthenticate');
  return caller;
}
