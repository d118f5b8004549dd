// A tenant's own delivery log over HTTP (docs/routes.md "Deliveries"): GET /v1/deliveries (OpenAI's list
// shape, newest first), GET /v1/deliveries/{id} (the body sent and every attempt), POST
// /v1/deliveries/{id}/replay, POST /v1/deliveries/replay (all of its own in one state) and POST
// /v1/deliveries/endpoints/enable (its own disabled endpoint). Each reads and replays the caller's
// deliveries only: another tenant's id is a 404, as if it did not exist. Without a log (the operator
// turned it off, or the task store keeps none) there is nothing to find: every one of them is a 404.
import type { RequestHandler } from 'express';
import { DELIVERY_STATES, type DeliveryLog } from '../../gateway/deliveries/delivery-log.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { jsonObjectBody } from '../body/json-body.js';
import type { DeliveryState } from '../../stores/tasks/delivery-records.js';
import { callerOf } from '../authenticate.js';
import type { RequestContext } from '../request-context.js';
import { routeHandler } from '../route-handler.js';
import { sendJson } from '../answers/send-body.js';

const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;
/** Longer than any webhook-id the gateway makes: such an id names nothing. */
const MAX_ID_LENGTH = 200;

export function listDeliveriesHandler(log: DeliveryLog): RequestHandler {
  return routeHandler('listDeliveries', async (context) => {
    ownLog(log);
    const query = context.req.query;
    const limitText = single(query.limit, 'limit');
    const limit = limitText === undefined ? DEFAULT_PAGE : Number(limitText);
    if (!/^\d+$/.test(limitText ?? '1') || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      throw GatewayError.invalidRequest(`limit must be a whole number from 1 to ${MAX_PAGE}`, 'limit');
    }
    const state = single(query.state, 'state');
    if (state !== undefined) checkState(state);
    const taskId = single(query.task_id, 'task_id');
    const after = single(query.after, 'after');
    const page = await log.listOwn(callerOf(context).id, {
      limit,
      ...(taskId !== undefined ? { taskId } : {}),
      ...(state !== undefined ? { state } : {}),
      ...(after !== undefined ? { after } : {}),
    });
    send(context, 200, { object: 'list', data: page.data, first_id: page.data[0]?.id ?? null, last_id: page.data.at(-1)?.id ?? null, has_more: page.hasMore });
  });
}

export function retrieveDeliveryHandler(log: DeliveryLog): RequestHandler {
  return routeHandler('retrieveDelivery', async (context) => {
    ownLog(log);
    const id = String(context.req.params.id);
    const delivery = id.length <= MAX_ID_LENGTH ? await log.get(id, callerOf(context).id) : undefined;
    if (!delivery) throw notFound();
    send(context, 200, delivery);
  });
}

export function replayDeliveryHandler(log: DeliveryLog): RequestHandler {
  return routeHandler('replayDelivery', async (context) => {
    ownLog(log);
    const id = String(context.req.params.id);
    const delivery = id.length <= MAX_ID_LENGTH ? await log.replay(id, callerOf(context).id) : undefined;
    if (!delivery) throw notFound();
    send(context, 202, delivery);
  });
}

export function replayDeliveriesHandler(log: DeliveryLog): RequestHandler {
  return routeHandler('replayDeliveries', async (context) => {
    ownLog(log);
    const { state, since, until } = jsonObjectBody(context.req.body);
    if (state === undefined) throw GatewayError.invalidRequest('state is required', 'state');
    checkState(state);
    // a tenant's paused deliveries go out by enabling their endpoint: in order, one after another
    if (state === 'paused') throw GatewayError.invalidRequest('paused deliveries are sent by enabling their endpoint: POST /v1/deliveries/endpoints/enable', 'state');
    const { queued } = await log.replayAll({ tenant: callerOf(context).id, state, ...unixMs(since, 'since'), ...unixMs(until, 'until') });
    send(context, 202, { object: 'delivery.replay', state, queued });
  });
}

export function enableEndpointHandler(log: DeliveryLog): RequestHandler {
  return routeHandler('enableDeliveryEndpoint', async (context) => {
    ownLog(log);
    const { url } = jsonObjectBody(context.req.body);
    if (url === undefined) throw GatewayError.invalidRequest('url is required: the callback URL whose endpoint to enable', 'url');
    const enabled = await log.enable(typeof url === 'string' ? url : '', { tenant: callerOf(context).id });
    send(context, 200, { object: 'delivery.endpoint', url: enabled.url, state: 'enabled', was_disabled: enabled.enabled > 0, queued: enabled.queued });
  });
}

/** A 404 when there is no log to read: the caller can do nothing about it, and nothing of its own is there. */
function ownLog(log: DeliveryLog): void {
  if (!log.enabled) throw GatewayError.notFound('This gateway keeps no delivery log: the operator turned it off');
}

function send(context: RequestContext, status: number, value: unknown): void {
  // a tenant's own log, fresh on every read
  context.res.setHeader('cache-control', 'no-store');
  sendJson(context, status, value);
}

function notFound(): GatewayError {
  return GatewayError.notFound('No such delivery');
}

/** One query value: a repeated parameter is a 400 naming it. */
function single(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw GatewayError.invalidRequest(`${name} must be given once`, name);
  return value;
}

function checkState(state: unknown): asserts state is DeliveryState {
  if (typeof state !== 'string' || !DELIVERY_STATES.includes(state as DeliveryState)) {
    throw GatewayError.invalidRequest(`state must be one of ${DELIVERY_STATES.join(', ')}`, 'state');
  }
}

/** `since` or `until` in Unix seconds, as ms since the epoch. */
function unixMs(value: unknown, name: 'since' | 'until'): { since?: number } | { until?: number } {
  if (value === undefined) return {};
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw GatewayError.invalidRequest(`${name} must be a time in Unix seconds`, name);
  return { [name]: value * 1000 };
}
