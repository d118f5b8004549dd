// POST /v1/images/generations (contract §4.1): JSON body, every image variant on one path.
import type { RequestHandler } from 'express';
import { asyncHandler } from '../async-handler.js';
import { jsonObjectBody } from '../body/json-body.js';
import { readImageGenerationRequest } from '../../images/image-request.js';
import { checkForwardedUrls } from '../../security/forwarded-urls.js';
import type { GatewayDeps } from '../../gateway/gateway-deps.js';
import { requireModel } from './request-fields.js';
import { serveImageRequest } from './serve-image-request.js';

export function imageGenerationsHandler(deps: GatewayDeps): RequestHandler {
  // not async: the pipeline's promise is returned as it is (asyncHandler turns a throw into next(error))
  return asyncHandler((req, res) => {
    const body = jsonObjectBody(req.body);
    return serveImageRequest(deps, req, res, {
      route: 'images.generations',
      model: requireModel(body.model),
      readRequest: (family) => readImageGenerationRequest(body, family, deps.imageRules),
      // an OpenAI-compatible upstream gets the body as is: its `image` URLs get the one URL check
      requestedImages: body.n,
      requestedFormat: body.response_format,
      forward: (api, call, upstream) => api.forwardJson(call, '/images/generations', checkForwardedUrls('images.generations', body, { allowPrivate: deps.options.allowPrivateImageUrls }), upstream),
    });
  });
}
