// Volcengine Ark adapter for video generation tasks (upstreams §2.2-2.4, errors §2.8): create and
// query, with the caller's ids and model in place of Ark's. Pure translation first, then transport.
import { vendorId } from '../vendor-ids.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Upstream } from '../../types.js';
import { isObject, parseJsonBody, stringOr } from '../../json/json-values.js';
import { type CallContext, jsonHeaders, requestUpstream, upstreamUrl } from '../call-context.js';
import { normalizeOpenAIError, openAICompatibleApi } from '../openai/openai.js';
import type { Provider } from '../provider.js';
import { volcengineAssets } from './volcengine-assets.js';
import { arkImageGroups } from './ark-image-groups.js';
import { arkImageStreams } from './ark-image-stream.js';
import { generateArkImage } from './ark-images.js';
import { ARK_MODELS } from './ark-models.js';
import type { SafetyTag } from '../../security/safety-identifier.js';
import { type TenantField, withTenantField } from '../tenant-field.js';

const ARK_TASKS_PATH = '/contents/generations/tasks';

/**
 * The create body Ark receives: the caller's fields (Ark adds fields; they pass), model renamed, and
 * never the caller's callback_url: the gateway delivers callbacks itself, so Ark must not call the
 * caller with its own task id. With vendor webhooks on, `callback_url` is the gateway's own route
 * (`vendorWebhook`), which Ark calls when the task's status changes (upstreams §2.5).
 */
export function translateCreateTaskRequest(body: Record<string, unknown>, upstreamModel: string, safety?: SafetyTag, vendorWebhook?: string): Record<string, unknown> {
  const { callback_url: _ignored, ...rest } = body;
  // Ark's content-generation tasks document `safety_identifier` (the volcengine SDK's tasks.create)
  return withTenantField({ ...rest, model: upstreamModel, ...(vendorWebhook !== undefined ? { callback_url: vendorWebhook } : {}) }, safety, 'safety_identifier');
}

/**
 * The tenant field of Ark's OpenAI-compatible endpoints, as the volcengine SDK types them: `user` on
 * chat completions; none on images and responses (docs/security.md "Tenant identifier sent to vendors").
 */
export function arkTenantField(path: string): TenantField | undefined {
  return path === '/chat/completions' ? 'user' : undefined;
}

/** upstreams §2.2: `{ "id": "cgt-…" }`. */
export function readCreateTaskResponse(body: unknown): string {
  const id = isObject(body) ? stringOr(body.id) : undefined;
  if (!id) throw GatewayError.badUpstreamResponse('ark', 'the created task has no id');
  return vendorId('ark', id, 'task id');
}

/** The Ark task object as the caller sees it: the gateway's id and the caller's model name. */
export function toCallerTask(body: unknown, gatewayId: string, model: string): Record<string, unknown> {
  if (!isObject(body) || typeof body.status !== 'string') throw GatewayError.badUpstreamResponse('ark', 'the task has no status');
  const task: Record<string, unknown> = { ...body, id: gatewayId, model };
  // a draft's source task is an upstream id too; the caller only ever knows gateway ids
  delete task.draft_task_id;
  // the tenant identifier is the operator's tag for the vendor, not part of the caller's task
  delete task.safety_identifier;
  return task;
}

async function createArkTask(call: CallContext, body: Record<string, unknown>, upstream: Upstream, upstreamModel: string): Promise<string> {
  const response = await requestUpstream(call, upstream, {
    provider: 'ark',
    method: 'POST',
    url: upstreamUrl(upstream.baseURL, '/api/v3', ARK_TASKS_PATH),
    headers: jsonHeaders(upstream),
    body: JSON.stringify(translateCreateTaskRequest(body, upstreamModel, call.safety, call.vendorWebhook)),
  });
  const parsed = parseJsonBody(response.body);
  if (response.status < 200 || response.status >= 300) throw normalizeOpenAIError(response.status, parsed, response.headers['x-request-id'], 'ark');
  return readCreateTaskResponse(parsed);
}

/** GET one task. An Ark 404 means the task is gone (deleted, or past its retention): 404 for the caller. */
async function getArkTask(call: CallContext, upstream: Upstream, upstreamTaskId: string): Promise<unknown> {
  const response = await requestUpstream(call, upstream, {
    provider: 'ark',
    method: 'GET',
    // the id is Ark's own, from the store; encoding it anyway keeps any id from reshaping the URL
    url: upstreamUrl(upstream.baseURL, '/api/v3', `${ARK_TASKS_PATH}/${encodeURIComponent(upstreamTaskId)}`),
    headers: jsonHeaders(upstream),
  });
  const parsed = parseJsonBody(response.body);
  if (response.status === 404) throw GatewayError.notFound('The task no longer exists upstream (deleted or expired).');
  if (response.status < 200 || response.status >= 300) throw normalizeOpenAIError(response.status, parsed, response.headers['x-request-id'], 'ark');
  if (parsed === undefined) throw GatewayError.badUpstreamResponse('ark', 'the body is not JSON');
  return parsed;
}

/**
 * Volcengine Ark: Seedream behind the /v1 image routes (translated, ark-images.ts), video tasks, its
 * OpenAI-compatible `/api/v3` (native images, chat), and the asset library.
 */
export const arkProvider: Provider = {
  name: 'ark',
  // a documented custom value: the GenAI conventions name no Volcengine provider
  genAiName: 'volcengine.ark',
  models: ARK_MODELS,
  images: { generate: generateArkImage },
  passthrough: openAICompatibleApi({ prefix: '/api/v3', tenantField: arkTenantField }),
  tasks: { video: { submit: createArkTask, read: getArkTask, view: toCallerTask } },
  // Ark's callback carries no confirmed signature (upstreams §2.5): the route's per-task token alone admits it
  webhooks: { verify: () => Promise.resolve(true) },
  assets: volcengineAssets,
  imageGroups: arkImageGroups,
  imageStreams: arkImageStreams,
};
