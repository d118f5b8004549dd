// POST /api/v3/contents/generations/tasks and GET …/tasks/{id} (contract §4.2, §2.6, §3): create answers
// `{ id }` with the gateway's own id, or with `Prefer: dry-run` the create's quote (docs/tenancy-and-billing.md
// "Quotes before work"); query answers the Ark task object with the caller's id and model. Both call the
// one task service for its video tasks (gateway/tasks/task-service.ts).
import type { RequestHandler } from 'express';
import { bearerKeyOf } from '../authenticate.js';
import { routeHandler } from '../route-handler.js';
import { jsonObjectBody, requireModel } from '../body/json-body.js';
import { sendJson } from '../answers/send-body.js';
import { sendQuote } from '../answers/send-quote.js';
import { isQuoted } from '../../gateway/tenancy/quote.js';
import type { Validator } from '../../schemas/validator.js';
import type { VideoTaskBody } from '../../schemas/video-task-schema.js';
import type { GatewayTasks } from '../../gateway/task-kinds.js';
import { UseCaseView } from '../request-base.js';

export function createVideoTaskHandler(tasks: GatewayTasks, validate: Validator<VideoTaskBody>): RequestHandler {
  return routeHandler('createVideoTask', async (context) => {
    const body = jsonObjectBody(context.req.body);
    context.usage.model = requireModel(body.model);
    validate(body);
    const outcome = await tasks.create('video', new UseCaseView(context), { body, callerKey: bearerKeyOf(context.req) });
    context.recordUsage(outcome.usage);
    if (!outcome.ok) throw outcome.error;
    if (isQuoted(outcome.answer)) return sendQuote(context, outcome.answer.quote);
    sendJson(context, 200, { id: outcome.answer.id });
  });
}

export function queryVideoTaskHandler(tasks: GatewayTasks): RequestHandler {
  return routeHandler('queryVideoTask', async (context) => {
    const outcome = await tasks.get('video', new UseCaseView(context), String(context.req.params.id));
    context.recordUsage(outcome.usage);
    if (!outcome.ok) throw outcome.error;
    sendJson(context, 200, outcome.answer.state);
  });
}
