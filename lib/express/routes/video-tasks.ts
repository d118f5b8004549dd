// POST /api/v3/contents/generations/tasks and GET …/tasks/{id} (contract §4.2, §2.6, §3): create answers
// `{ id }` with the gateway's own id; query answers the Ark task object with the caller's id and model.
import type { RequestHandler } from 'express';
import { bearerKeyOf, callerOf } from '../authenticate.js';
import { asyncHandler } from '../async-handler.js';
import { jsonObjectBody } from '../body/json-body.js';
import { sendJson } from '../send-body.js';
import type { Validator } from '../../schemas/validator.js';
import type { VideoTaskBody } from '../../schemas/video-task-schema.js';
import type { TaskService } from '../../gateway/tasks/task-service.js';
import { providersWith } from '../../providers/registry.js';
import { requireModel } from './request-fields.js';
import { routeStateOf } from '../route-state.js';

// usage events of task routes name the provider that serves tasks, also when a request fails before
// the resolver answered
const TASK_PROVIDER = providersWith('tasks')[0];

export function createVideoTaskHandler(tasks: TaskService, validate: Validator<VideoTaskBody>): RequestHandler {
  return asyncHandler(async (req, res) => {
    const state = routeStateOf(res);
    const body = jsonObjectBody(req.body);
    state.model = requireModel(body.model);
    validate(body);
    state.provider = TASK_PROVIDER;
    const created = await tasks.create({ caller: callerOf(res), callerKey: bearerKeyOf(req), body, req, signal: state.signal, record: state });
    sendJson(res, 200, created);
  });
}

export function queryVideoTaskHandler(tasks: TaskService): RequestHandler {
  return asyncHandler(async (req, res) => {
    const state = routeStateOf(res);
    const task = await tasks.query(callerOf(res), String(req.params.id), req, state.signal);
    state.model = typeof task.model === 'string' ? task.model : '';
    state.provider = TASK_PROVIDER;
    sendJson(res, 200, task);
  });
}
