// Answers an image request the gateway's image pipeline served (gateway/image-pipeline.ts): the
// upstream's own answer relayed, the contract §2.4 JSON, or the §2.4 answer with b64_json written as the
// images are encoded.
import { type ImageAnswer, type ImageCall, runImageRequest } from '../../gateway/image-pipeline.js';
import type { GatewayDeps } from '../../gateway/gateway-deps.js';
import { UseCaseView } from '../request-base.js';
import type { KeptAnswer, RequestContext } from '../request-context.js';
import { sendBody, sendJson } from '../send-body.js';
import { encodeImageResponse, writeImageResponse } from '../write-image-response.js';

/**
 * Not async: the pipeline's promise is chained, so only the pipeline's own frame waits for the
 * upstream (docs/architecture.md "Performance": memory per held request).
 */
export function serveImageRequest(deps: GatewayDeps, context: RequestContext, call: Omit<ImageCall, 'keepsLateWork'>): Promise<void> {
  const { keepLate } = context;
  return runImageRequest(deps, new UseCaseView(context), { ...call, keepsLateWork: keepLate !== undefined }).then((outcome) => {
    context.recordUsage(outcome.usage);
    if (!outcome.ok) {
      // the deadline passed but the work goes on: its answer is kept for the client's retry
      if (outcome.late && keepLate) keepLate(outcome.late.then((late) => (late.ok ? encodeAnswer(late.answer) : undefined)));
      throw outcome.error;
    }
    context.announceCost();
    return writeAnswer(context, outcome.answer);
  });
}

/** An answer as writeAnswer would write it, in one buffer. */
function encodeAnswer(answer: ImageAnswer): KeptAnswer {
  if (answer.kind === 'passthrough') return { status: answer.response.status, contentType: answer.response.contentType, body: answer.response.body };
  const body = answer.images ? encodeImageResponse(answer.response, answer.images) : Buffer.from(JSON.stringify(answer.response));
  return { status: 200, contentType: 'application/json; charset=utf-8', body };
}

function writeAnswer(context: RequestContext, answer: ImageAnswer): Promise<void> | undefined {
  if (answer.kind === 'passthrough') {
    sendBody(context, answer.response.status, answer.response.contentType, answer.response.body);
  } else if (answer.images) {
    return writeImageResponse(context, answer.response, answer.images);
  } else {
    sendJson(context, 200, answer.response);
  }
  return undefined;
}
