// Answers an image request the gateway's image pipeline served (gateway/image-pipeline.ts): the
// upstream's own answer relayed, the contract §2.4 JSON, or the §2.4 answer with b64_json written as the
// images are encoded; a quote for `Prefer: dry-run` (docs/tenancy-and-billing.md "Quotes before work").
import { type ImageCall, type WholeAnswer, runImageRequest } from '../../gateway/image-pipeline/image-pipeline.js';
import type { ImageStreamAsk } from '../../images/image-stream-ask.js';
import { serveImageStream } from './serve-image-stream.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayDeps } from '../../gateway/gateway-deps.js';
import { UseCaseView } from '../request-base.js';
import type { GatewayTasks } from '../../gateway/task-kinds.js';
import { preferenceOf } from '../prefer-header.js';
import { serveImageTask } from './image-tasks.js';
import type { KeptAnswer, RequestContext } from '../request-context.js';
import { sendBody, sendJson } from '../answers/send-body.js';
import { sendQuote } from '../answers/send-quote.js';
import { encodeImageResponse, writeImageResponse } from '../answers/write-image-response.js';

/**
 * Not async: the pipeline's promise is chained, so only the pipeline's own frame waits for the
 * upstream (docs/architecture.md "Performance": memory per held request).
 */
export function serveImageRequest(deps: GatewayDeps, context: RequestContext, call: Omit<ImageCall, 'keepsLateWork' | 'stream'>, how: ServeHow = {}): Promise<void> {
  const { stream, tasks } = how;
  // an asynchronous image task: asked by the route (the `/async` aliases) or by `Prefer: respond-async`
  const preference = tasks ? preferenceOf(context.req.headers) : undefined;
  if (tasks && preference && (tasks.always || preference.respondAsync)) {
    // a task answers later, by query or callback: there is no open response to stream into
    if (stream) return Promise.reject(GatewayError.invalidRequest('stream: true cannot be used with an asynchronous image task: send stream: false, or no Prefer: respond-async', 'stream'));
    const waitMs = Math.min((preference.waitSeconds ?? 0) * 1000, deps.options.imageTasks.maxWaitMs);
    return serveImageTask(tasks.service, context, call, waitMs, writeAnswer);
  }
  // a quote is one JSON answer, streamed or not
  if (stream && !context.dryRun) return serveImageStream(deps, context, call, stream);
  const { keepLate } = context;
  // the quote of a stream is what the stream would be charged: it is quoted as streamed
  const whole: ImageCall = stream ? { ...call, stream } : { ...call, keepsLateWork: keepLate !== undefined };
  return runImageRequest(deps, new UseCaseView(context), whole).then((outcome) => {
    context.recordUsage(outcome.usage);
    if (!outcome.ok) {
      // the deadline passed but the work goes on: its answer is kept for the client's retry
      if (outcome.late && keepLate)
        keepLate(
          outcome.late.then((late) => (late.ok && isWhole(late.answer) ? encodeAnswer(late.answer) : undefined)),
          outcome.answerMs,
        );
      throw outcome.error;
    }
    if (outcome.answer.kind === 'quote') return sendQuote(context, outcome.answer.quote);
    if (!isWhole(outcome.answer)) throw new Error('a request without stream got a stream answer');
    context.announceCost();
    return writeAnswer(context, outcome.answer);
  });
}

/** The task service, for image routes that submit image tasks; `always` on the `/async` aliases. */
export interface ImageTasksRoute {
  service: GatewayTasks;
  always: boolean;
}

/** How an image request is answered besides the ordinary way: as a stream, or as a task. */
export interface ServeHow {
  stream?: ImageStreamAsk;
  tasks?: ImageTasksRoute;
}

function isWhole(answer: { kind: string }): answer is WholeAnswer {
  return answer.kind === 'passthrough' || answer.kind === 'image';
}

/** An answer as writeAnswer would write it, in one buffer. */
function encodeAnswer(answer: WholeAnswer): KeptAnswer {
  if (answer.kind === 'passthrough') return { status: answer.response.status, contentType: answer.response.contentType, body: answer.response.body };
  const body = answer.images ? encodeImageResponse(answer.response, answer.images) : Buffer.from(JSON.stringify(answer.response));
  return { status: 200, contentType: 'application/json; charset=utf-8', body };
}

function writeAnswer(context: RequestContext, answer: WholeAnswer): Promise<void> | undefined {
  if (answer.kind === 'passthrough') {
    sendBody(context, answer.response.status, answer.response.contentType, answer.response.body);
  } else if (answer.images) {
    return writeImageResponse(context, answer.response, answer.images);
  } else {
    sendJson(context, 200, answer.response);
  }
  return undefined;
}
