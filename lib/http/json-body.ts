// The router's own JSON body parser, with its own limit (default: room for three 10 MB images as Data
// URLs). When the host already parsed the body (express.json() in front), that body is used as is.
import express, { type RequestHandler } from 'express';
import { GatewayError } from '../errors/gateway-error.js';

const JSON_TYPES = ['application/json', '+json'];

export function createJsonBody(limitBytes: number): RequestHandler {
  // the content type is checked here, so the parser may take any type it is handed
  const parse = express.json({ limit: limitBytes, strict: true, type: () => true });
  return (req, res, next) => {
    if ((req as { _body?: boolean })._body === true) {
      next();
      return;
    }
    const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
    if (!hasBody) {
      next(GatewayError.invalidRequest('The request body is empty: send a JSON object with Content-Type: application/json'));
      return;
    }
    if ((req.headersDistinct['content-type']?.length ?? 0) > 1) {
      next(GatewayError.invalidRequest('Send exactly one Content-Type header'));
      return;
    }
    if (!req.is(JSON_TYPES)) {
      next(GatewayError.unsupportedMediaType(`Content-Type must be application/json, got '${String(req.headers['content-type'] ?? 'none').slice(0, 100)}'`));
      return;
    }
    parse(req, res, (error?: unknown) => {
      if (error) return next(error);
      // JSON.parse takes any depth, but serializing it again (for the upstream) overflows the stack
      if (nestingExceeds(req.body, MAX_DEPTH)) return next(GatewayError.invalidRequest(`The request body nests deeper than ${MAX_DEPTH} levels`));
      next();
    });
  };
}

const MAX_DEPTH = 64;

/** Iterative, so the check itself cannot overflow; strings and numbers are not walked. */
function nestingExceeds(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** The parsed body as an object, or a 400 that says what the body must be. */
export function jsonObjectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw GatewayError.invalidRequest('The request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}
