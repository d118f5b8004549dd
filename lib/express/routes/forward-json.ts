// The routes whose body goes to an OpenAI-compatible upstream as it is, model renamed: chat
// completions, responses and Ark's native image generation (contract §4.2). Reads and validates, calls
// the forward use case (gateway/forward-request.ts), and writes its answer: the JSON as it came, or the
// stream relayed as server-sent events.
import type { RequestHandler } from 'express';
import { routeHandler } from '../route-handler.js';
import { jsonObjectBody, requireModel } from '../body/json-body.js';
import { sendBody } from '../answers/send-body.js';
import { sendQuote } from '../answers/send-quote.js';
import { type SseErrorFormat, relaySse } from '../answers/sse-relay.js';
import type { ForwardedBody } from '../../schemas/forward-schemas.js';
import type { Validator } from '../../schemas/validator.js';
import { checkForwardedUrls } from '../../security/forwarded-urls.js';
import type { RouteName } from '../../types.js';
import { forwardRequest } from '../../gateway/forward-request.js';
import type { GatewayDeps } from '../../gateway/gateway-deps.js';
import { UseCaseView } from '../request-base.js';

export interface ForwardRoute {
  route: RouteName;
  /** The endpoint path under the provider's OpenAI-compatible base. */
  upstreamPath: string;
  validate: Validator<ForwardedBody>;
  /** How a mid-stream failure is told to the client. */
  streamErrors: SseErrorFormat;
}

export function forwardJsonHandler(deps: GatewayDeps, config: ForwardRoute): RequestHandler {
  return routeHandler('forwardJson', async (context) => {
    const received = jsonObjectBody(context.req.body);
    const model = (context.usage.model = requireModel(received.model));
    config.validate(received);
    // media URLs the upstream will fetch get the one URL check; the checked, normalized body goes on
    const body = checkForwardedUrls(config.route, received, { allowPrivate: deps.options.allowPrivateImageUrls });
    const outcome = await forwardRequest(deps, new UseCaseView(context), { route: config.route, upstreamPath: config.upstreamPath, body, model });
    context.recordUsage(outcome.usage);
    if (!outcome.ok) throw outcome.error;
    const { answer } = outcome;
    // `Prefer: dry-run` on the native image route (the only forwarded route that quotes)
    if (answer.kind === 'quote') return sendQuote(context, answer.quote);
    if (answer.kind === 'json') {
      context.announceCost();
      return sendBody(context, answer.response.status, answer.response.contentType, answer.response.body);
    }
    // the usage event waits for the stream's books: a client that cuts it closes the response first
    context.streaming = true;
    context.awaitBooks(answer.settled);
    const failure = await relaySse(context, answer.stream, config.streamErrors, (error) => (context.errorCode = error.code), answer.observe);
    await answer.settled;
    // already told to the client as an error event; thrown so the error middleware logs it once
    if (failure) throw failure;
  });
}
