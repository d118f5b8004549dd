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
    if (!req.is(JSON_TYPES)) {
      next(GatewayError.unsupportedMediaType(`Content-Type must be application/json, got '${String(req.headers['content-type'] ?? 'none').slice(0, 100)}'`));
      return;
    }
    parse(req, res, next);
  };
}

/** The parsed body as an object, or a 400 that says what the body must be. */
export function jsonObjectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw GatewayError.invalidRequest('The request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}
