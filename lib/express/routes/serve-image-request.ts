// Answers an image request the gateway's image pipeline served (gateway/image-pipeline.ts): the
// upstream's own answer relayed, the contract §2.4 JSON, or the §2.4 answer with b64_json written as the
// images are encoded.
import type { Request, Response } from 'express';
import { type ImageAnswer, type ImageRequestInput, runImageRequest } from '../../gateway/image-pipeline.js';
import type { GatewayDeps } from '../../gateway/gateway-deps.js';
import { callerOf } from '../authenticate.js';
import { routeStateOf } from '../route-state.js';
import { sendBody, sendJson } from '../send-body.js';
import { writeImageResponse } from '../write-image-response.js';

export type ImageRouteInput = Omit<ImageRequestInput, 'caller' | 'req'>;

/**
 * Not async: the pipeline's promise is chained, so only the pipeline's own frame waits for the
 * upstream. The input is one literal of a fixed shape, not a spread of the route's object: a spread
 * plus added keys gave each request's object a hidden class of its own once the code was optimized,
 * kept for the whole wait (issue 15, heap diff of held requests).
 */
export function serveImageRequest(deps: GatewayDeps, req: Request, res: Response, input: ImageRouteInput): Promise<void> {
  const request: ImageRequestInput = {
    route: input.route,
    model: input.model,
    caller: callerOf(res),
    req,
    readRequest: input.readRequest,
    forward: input.forward,
    requestedImages: input.requestedImages,
    requestedFormat: input.requestedFormat,
  };
  return runImageRequest(deps, routeStateOf(res), request).then((answer) => writeAnswer(res, answer));
}

function writeAnswer(res: Response, answer: ImageAnswer): Promise<void> | undefined {
  if (answer.kind === 'passthrough') {
    sendBody(res, answer.response.status, answer.response.contentType, answer.response.body);
  } else if (answer.images) {
    return writeImageResponse(res, answer.response, answer.images);
  } else {
    sendJson(res, 200, answer.response);
  }
  return undefined;
}
