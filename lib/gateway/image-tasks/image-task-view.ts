// An image task as its caller reads it (docs/image-tasks.md): the view a query, a cancel and a callback
// answer, and what a terminal state keeps of the run's answer. The task store never holds image
// bytes, so a kept answer carries URLs only.
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ImageGenerationResponse } from '../../images/image-generation-response.js';
import { isObject, parseJsonBody } from '../../json/json-values.js';
import type { ImageTaskRecord } from '../../stores/tasks/task-store.js';
import type { WholeAnswer } from '../image-pipeline/image-pipeline.js';

/** The task as a query answers it (docs/image-tasks.md): `result` once succeeded, `error` once failed. */
export interface ImageTaskView {
  id: string;
  object: 'image.task';
  status: string;
  created: number;
  model: string;
  result?: Record<string, unknown>;
  error?: Record<string, unknown>;
}

/** The task's fields every answer has, with its status and, when terminal, its result or error. */
export function viewOf(record: ImageTaskRecord, status: string, extra: { result?: Record<string, unknown>; error?: Record<string, unknown> } = {}): ImageTaskView {
  return { id: record.id, object: 'image.task', status, created: Math.floor(record.createdAt / 1000), model: record.model, ...extra };
}

/**
 * The terminal view of a run's answer: `succeeded` with the answer as kept, or `failed` with the error
 * (also when the answer cannot be kept); `error` is the failure the task ends with, if any.
 */
export function terminalViewOf(record: ImageTaskRecord, answer: { ok: true; answer: WholeAnswer } | { ok: false; error: unknown }, provider: string): { view: ImageTaskView; error: unknown } {
  if (!answer.ok) return { view: viewOf(record, 'failed', { error: errorObjectOf(answer.error) }), error: answer.error };
  try {
    return { view: viewOf(record, 'succeeded', { result: keptResultOf(answer.answer, provider) }), error: undefined };
  } catch (thrown) {
    return { view: viewOf(record, 'failed', { error: errorObjectOf(thrown) }), error: thrown };
  }
}

/**
 * The answer as a task keeps it: the contract §2.4 body with every `b64_json` left out (no image
 * bytes in the task store). Each image must then have a URL: durable with `storage`, the upstream's
 * own without it. An upstream that answered bytes only (no URL) cannot be kept without storage.
 */
function keptResultOf(answer: WholeAnswer, provider: string): Record<string, unknown> {
  const body: unknown = answer.kind === 'passthrough' ? parseJsonBody(answer.response.body) : answer.response;
  if (!isObject(body) || !Array.isArray(body.data)) throw GatewayError.badUpstreamResponse(provider, 'the image answer is not JSON with a data list');
  const data = (body.data as unknown[]).map((entry) => {
    if (!isObject(entry)) return entry;
    const { b64_json: bytes, ...rest } = entry;
    if (typeof rest.url !== 'string' && bytes !== undefined) {
      throw new GatewayError({
        status: 502,
        code: ERROR_CODES.resultNotKept,
        message: 'The upstream answered image bytes without a URL, which an asynchronous task keeps only with the `storage` option (the task store holds no image bytes).',
      });
    }
    return rest;
  });
  return { ...(body as ImageGenerationResponse & Record<string, unknown>), data };
}

/** The error object a failed task carries: the gateway's own, or the generic 500 one. */
function errorObjectOf(error: unknown): Record<string, unknown> {
  const known = GatewayError.is(error) ? error : GatewayError.internal();
  return { ...known.toJSON().error };
}
