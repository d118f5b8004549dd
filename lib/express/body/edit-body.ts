// The body parser of POST /v1/images/edits: a multipart form (the SDKs' uploads) or a JSON body
// (OpenAI's JSON edit shape, as browsers, agents and OpenAI-compatible routers send it), chosen by
// the Content-Type; each read by its own bounded parser (docs/routes.md "Edits as JSON").
import type { RequestHandler } from 'express';
import { GatewayError } from '../../errors/gateway-error.js';

const JSON_TYPES = ['application/json', '+json'];

/** `forms` says what each type carries, for the 415 (the edits' images by default; the videos' reference image). */
export function createEditBody(multipartBody: RequestHandler, jsonBody: RequestHandler, forms = 'multipart/form-data (image files) or application/json (images as URLs)'): RequestHandler {
  return function readEditBody(req, res, next) {
    const type = req.headers['content-type'];
    // a JSON type goes to the JSON parser; a form, a repeated header, a host-read body and the rest to the
    // multipart parser, which answers each of them as before
    if (type === 'application/json' || (type !== undefined && req.is(JSON_TYPES))) return jsonBody(req, res, next);
    if (type === undefined || req.is('multipart/form-data')) return multipartBody(req, res, next);
    next(GatewayError.unsupportedMediaType(`Content-Type must be ${forms}, got '${String(type).slice(0, 100)}'`));
  };
}
