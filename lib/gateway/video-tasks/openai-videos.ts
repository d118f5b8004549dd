// OpenAI's videos API (docs/openai-videos.md) as a second wire shape over the one task service: creates
// and retrieves are the service's video tasks (tasks/task-service.ts: their quotas, money, callbacks,
// ownership and store), the list and delete read the same task store, and the content is the task's own result
// (the stored copy, or the upstream's URL). The shape's translation is openai-video-shape.ts.
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { type VideoTaskRecord, isTaskOfKind } from '../../stores/tasks/task-store.js';
import { isObject } from '../../json/json-values.js';
import { urlOf } from '../results/durable-results.js';
import { checkPublicUrl, describeProblem } from '../../security/public-url.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { type Quoted, isQuoted } from '../tenancy/quote.js';
import { isTerminalStatus } from '../tasks/task-state-order.js';
import { type Outcome, type UseCaseRequest } from '../use-case.js';
import { readVideoCreate, videoObjectOf } from './openai-video-shape.js';
import { VIDEO_TASK_PREFIX } from './video-task-content.js';
import type { GatewayTasks } from '../task-kinds.js';
import { findOwnTask } from '../tasks/task-records.js';

/** OpenAI's `Video` object, as openai-video-shape.ts writes it. */
export type VideoObject = Record<string, unknown>;

/** Where a video's bytes are: a key of the result storage (with a signed URL of it), or a URL to send the caller to. */
export type VideoContent = { stored: true; key: string; url: string } | { stored: false; url: string };

// the `variant`s of `GET /v1/videos/{id}/content` and the task result field each is
const VARIANT_FIELDS: ReadonlyMap<string, string> = new Map([
  ['video', 'video_url'],
  ['thumbnail', 'last_frame_url'],
]);
// a vendor's result URL is not the caller's field: its problems are worded as the upstream's
const RESULT_URL_WORDING = {
  notHttp: (scheme: string | undefined): string => (scheme ? `has the scheme ${scheme.slice(0, 20)}, not http(s)` : 'is not an http(s) URL'),
  notPublic: 'names a loopback, private or link-local host',
};
const MAX_PAGE = 100;
const DEFAULT_PAGE = 20;

export class OpenAiVideos {
  constructor(
    private readonly options: ResolvedOptions,
    private readonly tasks: GatewayTasks,
  ) {}

  /**
   * `POST /v1/videos`: the fields read here; `seconds` and `size` are mapped and checked by the task
   * service with the row the task follows (docs/models.md "Which row a request follows"), before it
   * charges or calls anything.
   */
  async create(request: UseCaseRequest, fields: Record<string, unknown>, callerKey: string): Promise<Outcome<VideoObject | Quoted>> {
    const read = readVideoCreate(fields);
    const { body, asked } = read;
    const outcome = await this.tasks.create('video', request, { body, callerKey, shaped: read });
    if (!outcome.ok) return { ok: false, error: inOpenAiTerms(outcome.error), usage: outcome.usage };
    if (isQuoted(outcome.answer)) return { ...outcome, answer: outcome.answer };
    const created = outcome.answer;
    return { ...outcome, answer: videoObjectOf({ id: created.id, model: body.model, createdAt: created.createdAt, asked: created.asked ?? asked }, { status: 'queued' }) };
  }

  /** `GET /v1/videos/{id}`: the task's query, written as a Video. */
  async retrieve(request: UseCaseRequest, id: string): Promise<Outcome<VideoObject>> {
    const outcome = await this.tasks.get('video', request, id);
    if (!outcome.ok) return failed(outcome);
    return { ...outcome, answer: videoObjectOf(outcome.answer.record, outcome.answer.state) };
  }

  /**
   * `GET /v1/videos`: a page of the caller's own video tasks as their records have them (no upstream
   * call: retrieve a video for its current state), in OpenAI's cursor list.
   */
  async list(request: UseCaseRequest, query: Record<string, unknown>): Promise<Record<string, unknown>> {
    const store = this.options.store;
    if (!store.listTasks) throw unsupported('GET /v1/videos', 'listTasks');
    const order = query.order === undefined ? 'desc' : query.order;
    if (order !== 'asc' && order !== 'desc') throw GatewayError.invalidRequest("order must be 'asc' or 'desc'", 'order');
    const limit = query.limit === undefined ? DEFAULT_PAGE : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw GatewayError.invalidRequest(`limit must be a whole number from 1 to ${MAX_PAGE}`, 'limit');
    const after = query.after;
    if (after !== undefined && typeof after !== 'string') throw GatewayError.invalidRequest('after must be a video id', 'after');
    const page = await store.listTasks(request.caller.id, { limit, order, ...(after ? { after } : {}) });
    const data = page.tasks.filter((record) => isTaskOfKind(record, 'video') && record.owner === request.caller.id).map((record) => videoObjectOf(record, record.result ?? { status: record.status }));
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore };
  }

  /**
   * `DELETE /v1/videos/{id}`: forgets a finished video and its stored copies. One still being made
   * is refused: its record carries what its end must settle (the quota slot, the money, the usage event).
   */
  async remove(request: UseCaseRequest, id: string): Promise<Record<string, unknown>> {
    const store = this.options.store;
    if (!store.deleteTask) throw unsupported('DELETE /v1/videos/{id}', 'deleteTask');
    const record = await this.owned(request, id);
    if (!isTerminalStatus(record.status)) {
      throw GatewayError.invalidRequest(`Video '${id}' is still ${record.status === 'queued' ? 'queued' : 'in progress'}; delete it once it has completed or failed`, 'video_id');
    }
    const storage = this.options.storage;
    if (storage && record.stored) for (const key of Object.values(record.stored.keys)) await storage.store.delete(key);
    await store.deleteTask(record.id);
    return { id: record.id, object: 'video.deleted', deleted: true };
  }

  /**
   * `GET /v1/videos/{id}/content`: where the finished video (or, as `thumbnail`, its last frame) is.
   * The task is queried first, so a video that just finished is stored and reported like any query.
   */
  async content(request: UseCaseRequest, id: string, variant: unknown): Promise<Outcome<VideoContent>> {
    const name = variant === undefined ? 'video' : typeof variant === 'string' ? variant : JSON.stringify(variant);
    const field = VARIANT_FIELDS.get(name);
    if (!field) throw GatewayError.invalidRequest(`variant '${name.slice(0, 40)}' is not offered: use video or thumbnail`, 'variant');
    const outcome = await this.tasks.get('video', request, id);
    if (!outcome.ok) return failed(outcome);
    const { record, state } = outcome.answer;
    if (state.status !== 'succeeded') {
      throw GatewayError.invalidRequest(`Video '${id}' is ${String(videoObjectOf(record, state).status)}: its content is ready once it has completed`, 'video_id');
    }
    const key = record.stored?.keys[field];
    const storage = this.options.storage;
    if (storage && key) return { ...outcome, answer: { stored: true, key, url: await urlOf(storage, key, request.resultBase ?? record.resultBase) } };
    const url = isObject(state.content) ? state.content[field] : undefined;
    if (typeof url !== 'string' || url === '') throw GatewayError.notFound(`Video '${id}' has no ${name}.`);
    return { ...outcome, answer: { stored: false, url: this.redirectable(url, record.upstream.provider, id) } };
  }

  /**
   * The vendor's URL, once it passes the result-URL rules (docs/security.md, as a result download's
   * does): the caller is redirected there, and a server-side client that follows a redirect to a
   * loopback, private or metadata host would be sent into its own network. `allow.privateResultUrls`
   * lets such hosts pass, as it does for downloads. The host is judged as written (the caller resolves
   * it, not the gateway); a URL that fails is the upstream's fault: a 502 (docs/openai-videos.md).
   */
  private redirectable(url: string, provider: string, id: string): string {
    const check = checkPublicUrl(url, { allowPrivate: this.options.allowPrivateResultUrls });
    if (check.ok) return check.url.href;
    throw GatewayError.badUpstreamResponse(provider, `the URL it gave for video '${id.slice(0, 64)}' ${describeProblem(check, RESULT_URL_WORDING)}, so the gateway does not redirect to it`);
  }

  private async owned(request: UseCaseRequest, id: string): Promise<VideoTaskRecord> {
    const record = await findOwnTask(this.options.store, { kind: 'video', idPrefix: VIDEO_TASK_PREFIX }, request.caller.id, id);
    // another tenant's video gets exactly the answer of one that never existed
    if (!record) throw GatewayError.notFound(`Video '${id.slice(0, 64)}' was not found.`);
    return record;
  }
}

// the task body's fields, as the OpenAI create names them (openai-video-shape.ts builds the body)
const OPENAI_PARAMS: ReadonlyArray<[RegExp, string]> = [
  [/^content\[0\]/, 'prompt'],
  [/^content\[1\]/, 'input_reference'],
  [/^duration$/, 'seconds'],
  [/^(?:resolution|ratio)$/, 'size'],
];

/** A 400 of the task service (an upstream's own field check, a reference refused) under the field the caller sent. */
function inOpenAiTerms(error: unknown): unknown {
  if (!(error instanceof GatewayError) || error.status !== 400 || error.param === undefined) return error;
  const param = error.param;
  const renamed = OPENAI_PARAMS.find(([pattern]) => pattern.test(param))?.[1];
  if (!renamed) return error;
  return new GatewayError({ status: 400, code: error.code, message: error.message, param: renamed, type: error.type });
}

/** A failed outcome as one of another answer (video tasks never answer late). */
function failed<A>(outcome: { error: unknown; usage: Outcome<unknown>['usage'] }): Outcome<A> {
  return { ok: false, error: outcome.error, usage: outcome.usage };
}

function unsupported(route: string, method: string): GatewayError {
  return new GatewayError({ status: 500, code: ERROR_CODES.internalError, message: `${route} needs a task store with ${method}(); the configured store has none. Ask the operator.` });
}
