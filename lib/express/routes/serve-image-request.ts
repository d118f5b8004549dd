// Answers an image request the gateway's image pipeline served (gateway/image-pipeline.ts): the
// upstream's own answer relayed, the contract §2.4 JSON, or the §2.4 answer with b64_json written as the
// images are encoded.
import type { Request, Response } from 'express';
import { type ImageRequestInput, runImageRequest } from '../../gateway/image-pipeline.js';
import type { GatewayDeps } from '../../gateway/gateway-deps.js';
import { callerOf } from '../authenticate.js';
import { routeStateOf } from '../route-state.js';
import { sendBody, sendJson } from '../send-body.js';
import { writeImageResponse } from '../write-image-response.js';

export type ImageRouteInput = Omit<ImageRequestInput, 'caller' | 'req'>;

export async function serveImageRequest(deps: GatewayDeps, req: Request, res: Response, input: ImageRouteInput): Promise<void> {
  const answer = await runImageRequest(deps, routeStateOf(res), { ...input, caller: callerOf(res), req });
  if (answer.kind === 'passthrough') {
    sendBody(res, answer.response.status, answer.response.contentType, answer.response.body);
  } else if (answer.images) {
    await writeImageResponse(res, answer.response, answer.images);
  } else {
    sendJson(res, 200, answer.response);
  }
}
