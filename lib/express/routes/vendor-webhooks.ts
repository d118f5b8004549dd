// The vendors' own calls when a task ends (docs/routes.md "Vendor webhooks",
// docs/video-tasks-and-callbacks.md "Vendor webhooks"): `POST /v1/vendor-webhooks/{provider}/{taskId}/{token}`,
// outside verifyKey and afterAuthentication (the vendor has no gateway key: the per-task token in the
// path is its credential). A wrong token is a 401 before the body is read or the store is touched; a
// signature that does not hold is a 401 that changes nothing; an accepted call is answered 202 while
// the task is read from the vendor in the background. The path's token is never logged nor echoed.
import type { RequestHandler } from 'express';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { VendorWebhookCalls } from '../../gateway/vendor-webhooks/vendor-webhook-calls.js';
import type { Logger } from '../../options/host-hooks.js';
import type { GatewayLimits } from '../../options/request-limits.js';
import { sendJson } from '../answers/send-body.js';
import { bodyAlreadyRead, bodyReadElsewhere, contentCodingOf, readBody } from '../body/read-body.js';
import { routeHandler } from '../route-handler.js';

function refused(message: string): GatewayError {
  return new GatewayError({ status: 401, code: ERROR_CODES.vendorWebhookRefused, message });
}

/** `calls` undefined: vendor webhooks are off, and no token is valid. */
export function vendorWebhookHandler(calls: VendorWebhookCalls | undefined, limits: Readonly<GatewayLimits>, logger: Logger): RequestHandler {
  return routeHandler('vendorWebhook', async (context) => {
    const { req } = context;
    const provider = String(req.params.provider);
    const taskId = String(req.params.taskId);
    const token = String(req.params.token);
    // bounded before the HMAC: no path segment of a real URL is longer
    if (!calls || provider.length > 40 || taskId.length > 100 || token.length > 100 || !calls.admits(provider, taskId, token)) {
      throw refused('The vendor webhook URL is not valid: its token does not match the task.');
    }
    // the signature covers the exact bytes: a host parser in front leaves none to check
    if (bodyReadElsewhere(req)) throw bodyAlreadyRead(logger, '/v1/vendor-webhooks');
    const body = await readBody(req, contentCodingOf(req.headers, false), { maxBytes: limits.jsonBodyBytes }).body;
    const headers: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(req.headers)) headers[name] = Array.isArray(value) ? value[0] : value;
    const outcome = await calls.receive(provider, taskId, headers, body);
    if (outcome === 'refused') throw refused("The vendor's signature of this call does not verify.");
    sendJson(context, 202, { received: true });
  });
}
