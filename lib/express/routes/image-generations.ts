// POST /v1/images/generations (contract §4.1): JSON body, every image variant on one path.
import type { RequestHandler } from 'express';
import { routeHandler } from '../route-handler.js';
import { jsonObjectBody, requireModel } from '../body/json-body.js';
import type { GatewayDeps } from '../../gateway/gateway-deps.js';
import { type ImageTasksRoute, serveImageRequest } from './serve-image-request.js';
import { readImageStreamAsk } from '../../images/image-stream-ask.js';

export function imageGenerationsHandler(deps: GatewayDeps, tasks?: ImageTasksRoute): RequestHandler {
  // not async: the pipeline's promise is returned as it is (routeHandler turns a throw into next(error))
  return routeHandler('imageGenerations', (context) => {
    const body = jsonObjectBody(context.req.body);
    const model = (context.usage.model = requireModel(body.model));
    // `stream` and `partial_images` are read before anything runs: one that cannot be honoured is a 400
    const stream = readImageStreamAsk(body, 'json');
    return serveImageRequest(deps, context, { route: 'images.generations', model, input: { kind: 'json', body } }, { stream, tasks });
  });
}
