// Asynchronous image tasks on the inbound side (docs/image-tasks.md): the submit of an image route that
// asked for one (`Prefer: respond-async`, or the `/async` aliases) answers 202 with the task, or, with
// `wait`, the ordinary answer when the work ends in time; GET /v1/images/tasks/{id} and
// POST /v1/images/tasks/{id}/cancel answer the caller's task. Each calls the one task service for its
// image tasks (gateway/tasks/task-service.ts); the work itself is the gateway's.
import type { RequestHandler } from 'express';
import type { ImageCall, WholeAnswer } from '../../gateway/image-pipeline/image-pipeline.js';
import { type ImageTaskView, TaskNotRun } from '../../gateway/image-tasks/image-task-executor.js';
import type { GatewayTasks } from '../../gateway/task-kinds.js';
import { isTerminalStatus } from '../../gateway/tasks/task-state-order.js';
import { bearerKeyOf } from '../authenticate.js';
import { UseCaseView } from '../request-base.js';
import type { RequestContext } from '../request-context.js';
import { routeHandler } from '../route-handler.js';
import { sendJson } from '../answers/send-body.js';
import { sendQuote } from '../answers/send-quote.js';
import { isQuoted } from '../../gateway/tenancy/quote.js';

// how soon a client should look again at a task that has not ended
const RETRY_AFTER_SECONDS = 3;
// how often a `Prefer: wait` request looks at a task followed on its upstream's task API
const FOLLOWED_LOOK_MS = 500;

const delay = (ms: number): Promise<undefined> =>
  new Promise((resolve) => {
    setTimeout(() => resolve(undefined), ms).unref();
  });

/**
 * Submits `call` as a task. `waitSeconds` (from `Prefer: wait`) holds the request that long for the
 * ordinary answer; `writeAnswer` writes it as the synchronous route would. With `Prefer: dry-run`,
 * the submit's quote is the answer.
 */
export async function serveImageTask(tasks: GatewayTasks, context: RequestContext, call: ImageCall, waitMs: number, writeAnswer: WriteAnswer): Promise<void> {
  const { callbackUrl, input } = withoutCallback(call);
  const from = new UseCaseView(context);
  const outcome = await tasks.create('image', from, { ...call, input, callbackUrl, callerKey: bearerKeyOf(context.req) });
  context.recordUsage(outcome.usage);
  if (!outcome.ok) throw outcome.error;
  // a dry run: the quote of the submit, no task
  if (isQuoted(outcome.answer)) return sendQuote(context, outcome.answer.quote);
  const { task, finished } = outcome.answer;
  if (waitMs > 0) {
    const until = Date.now() + waitMs;
    const waited = await Promise.race([finished, delay(waitMs)]);
    if (waited?.ok) return writeAnswer(context, waited.answer);
    if (waited) {
      // a task that failed within the wait is answered as the synchronous route would; one that was
      // cancelled (or ended by its watch) is shown as it is now
      let now = await tasks.get('image', from, task.id);
      // a task handed to its upstream's own task API ends on whichever instance follows it: its
      // record is looked at until the wait is over (docs/image-tasks.md "Submitting")
      while (waited.error instanceof TaskNotRun && now.ok && !isTerminalStatus(now.answer.status) && Date.now() + FOLLOWED_LOOK_MS < until) {
        await delay(FOLLOWED_LOOK_MS);
        now = await tasks.get('image', from, task.id);
      }
      if (now.ok && now.answer.status === 'succeeded' && now.answer.result) return sendJson(context, 200, now.answer.result);
      if (now.ok && now.answer.status === 'failed' && !(waited.error instanceof TaskNotRun)) throw waited.error;
      if (now.ok) return accepted(context, now.answer);
    }
  }
  accepted(context, task);
}

/** Writes an image answer as the synchronous route does (serve-image-request.ts). */
export type WriteAnswer = (context: RequestContext, answer: WholeAnswer) => Promise<void> | undefined;

export function queryImageTaskHandler(tasks: GatewayTasks): RequestHandler {
  return routeHandler('queryImageTask', async (context) => {
    const outcome = await tasks.get('image', new UseCaseView(context), String(context.req.params.id));
    if (!outcome.ok) throw outcome.error;
    sendTask(context, 200, outcome.answer);
  });
}

export function cancelImageTaskHandler(tasks: GatewayTasks): RequestHandler {
  return routeHandler('cancelImageTask', async (context) => {
    const outcome = await tasks.cancel('image', new UseCaseView(context), String(context.req.params.id));
    if (!outcome.ok) throw outcome.error;
    sendTask(context, 200, outcome.answer);
  });
}

/** 202 with the task, where to find it and that the preference was applied. */
function accepted(context: RequestContext, task: ImageTaskView): void {
  const { res, req } = context;
  res.setHeader('Location', `${req.baseUrl}/v1/images/tasks/${task.id}`);
  res.setHeader('Preference-Applied', 'respond-async');
  sendTask(context, 202, task);
}

function sendTask(context: RequestContext, status: number, task: ImageTaskView): void {
  const { res } = context;
  res.setHeader('Cache-Control', 'no-store');
  if (!isTerminalStatus(task.status)) res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
  sendJson(context, status, task);
}

/** The call without its `callback_url` (a JSON field, or a form field on edits): the gateway's, never sent upstream. */
function withoutCallback(call: ImageCall): { callbackUrl: unknown; input: ImageCall['input'] } {
  if (call.input.kind === 'json') {
    const { callback_url: callbackUrl, ...body } = call.input.body;
    return { callbackUrl, input: { kind: 'json', body } };
  }
  const { callback_url: callbackUrl, ...fields } = call.input.form.fields;
  return { callbackUrl, input: { kind: 'form', form: { ...call.input.form, fields } } };
}
