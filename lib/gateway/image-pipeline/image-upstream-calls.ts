// The upstream calls of an image request (image-pipeline.ts), under the fallback rule (fallback.ts):
// each upstream is asked through its native image capability, its own task API, its OpenAI-compatible
// API, or, for a streamed request, its event stream (docs/routes.md "Streamed images").
import type { ImageGenerationResponse } from '../../images/image-generation-response.js';
import type { ImageGenerationRequest } from '../../images/image-request.js';
import { GENERIC_IMAGE_FAMILY } from '../../images/model-families.js';
import { type CallContext, timeoutOf } from '../../providers/call-context.js';
import type { ImageStreamRules, OpenedStream, PassthroughCapability, PassthroughResponse } from '../../providers/provider.js';
import { capabilityOf, requireCapability, upstreamTasksOf } from '../../providers/registry.js';
import { checkForwardedUrls } from '../../security/forwarded-urls.js';
import type { Upstream } from '../../types.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { AttemptInfo } from '../../telemetry/telemetry.js';
import type { FormBody } from '../../transport/form-body.js';
import { secretFreeChunks } from '../../transport/secret-free-body.js';
import type { AnswerDeadline } from '../answer-deadline.js';
import { withFallback } from '../routing/fallback.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { rebuildForm } from './image-edit-form.js';
import type { ImageInput } from './image-input.js';
import { type ImageRequest, type Prepared, readForFamily } from './image-preparation.js';
import { onUpstreamTask } from './image-upstream-task.js';
import { type Usage, attempting } from '../use-case.js';

/** What the upstream that answered gave back, with the request it was sent (read for the generic family when the model has none). */
export type Attempted =
  | { kind: 'image'; provider: Upstream['provider']; request: ImageGenerationRequest; response: ImageGenerationResponse }
  | { kind: 'passthrough'; response: PassthroughResponse }
  /** An upstream stream opened for a streamed request. */
  | { kind: 'stream'; rules: ImageStreamRules; stream: OpenedStream };

/** What an upstream answered whole. */
export type WholeAttempt = Exclude<Attempted, { kind: 'stream' }>;

/**
 * The upstream calls under the fallback rule. Not async: each attempt hands back its call's own
 * promise, so no suspended frames wait beside a slow upstream (docs/architecture.md "Performance":
 * memory per held request). A synchronous throw (a request that cannot be read) becomes the
 * attempt's failure.
 */
export function callUpstreams(deps: GatewayDeps, usage: Usage, request: ImageRequest, prepared: Prepared): Promise<Attempted> {
  const { upstreams } = prepared;
  let read = prepared.request;
  const attempt: AttemptInfo = {
    route: request.route,
    model: request.model,
    choices: prepared.asked,
    tenant: request.from.caller.id,
    // the request's id is read (or made) only for a failed attempt's log line, not on every request
    request: request.from.hostRequest,
    prompt: () => promptOf(read, request.input),
  };
  const { deadline } = request;
  return withFallback(upstreams, deps.options, attempt, { usage, idOf: vendorIdOf }, (chosen, last): Promise<Attempted> => {
    // a provider that fans out records each of its vendor calls in the attempt (ledger/vendor-work.ts)
    const record = attempting(usage, chosen.provider, chosen.model);
    const call = { ...prepared.call, vendorCalls: (record.calls = []) };
    // only the last upstream's call outlives its deadline: before it, a call that times out without a
    // connection must still fail as not started, so the next upstream is tried (fallback.ts); the last
    // is the last one routing would still admit (docs/routing-and-health.md)
    const upstream = deadline && last ? lateWorkUpstream(deps, chosen, deadline) : chosen;
    // the catalogue decides how the endpoint is served (docs/models.md): a passthrough entry reaches the
    // provider's OpenAI-compatible API; so does a stream to a provider whose image API streams events
    // of its own (docs/routes.md "Streamed images")
    // with output checks, no partial image may reach the caller unchecked: the whole answer is asked, checked, then streamed
    // so with provenance: no partial image reaches the caller unsigned or unreported (docs/provenance.md)
    const rules = request.stream && !request.moderation?.outputImages && !request.provenance ? capabilityOf(upstream, 'imageStreams') : undefined;
    const images = prepared.passthrough || rules ? undefined : capabilityOf(upstream, 'images');
    let attempted: Promise<Attempted>;
    // an Idempotency-Key request that another instance could finish from an upstream task id (its
    // tracker says so) runs on the upstream's own task API when it has one for this request
    const tasks = images && usage.onUpstreamTask && !request.stream && upstreams.length === 1 && prepared.request ? upstreamTasksOf(upstream, 'image') : undefined;
    if (images && tasks?.offers(upstream.model ?? request.model, prepared.request!)) {
      const sent = prepared.request!;
      attempted = onUpstreamTask(deps, usage, record, request, { call, upstream, tasks, sent }).then((response) => ({ kind: 'image', provider: upstream.provider, request: sent, response }));
    } else if (images) {
      const sent = (read ??= readForFamily(deps, request, GENERIC_IMAGE_FAMILY));
      attempted = images.generate(call, sent, upstream).then((response) => ({ kind: 'image', provider: upstream.provider, request: sent, response }));
    } else {
      const api = requireCapability(upstream, 'passthrough', request.route, deps.options.logger);
      attempted =
        rules && request.stream && streamsUpstream(rules, request.stream.input)
          ? openImageStream(deps, request, request.stream.input, api, rules, call, upstream)
          : forward(deps, request, api, call, upstream).then((response) => ({ kind: 'passthrough', response }));
    }
    return deadline && last ? attempted.finally(() => deadline.disarm()) : attempted;
  });
}

/** The id the vendor answered an image call with: its request id (a task's id is recorded at its submit), in the answer or its headers. */
function vendorIdOf(answered: Attempted): string | undefined {
  if (answered.kind === 'image') return answered.response.extra.request_id || undefined;
  if (answered.kind === 'passthrough') return answered.response.requestId;
  return answered.stream.headers['x-request-id'];
}

/**
 * The upstream as the call is made when late work is kept: the answer deadline is the upstream's own
 * `timeoutMs` (armed here), the call itself may run `idempotency.keptWorkSeconds` longer.
 */
function lateWorkUpstream(deps: GatewayDeps, upstream: Upstream, deadline: AnswerDeadline): Upstream {
  const answerBy = timeoutOf(upstream, deps.options.limits);
  deadline.arm(upstream.provider, answerBy);
  return { ...upstream, timeoutMs: answerBy + (deps.options.idempotency?.keptWorkMs ?? 0) };
}

/** Sends the caller's request, model renamed, to an OpenAI-compatible API. */
function forward(deps: GatewayDeps, request: ImageRequest, api: PassthroughCapability, call: CallContext, upstream: Upstream): Promise<PassthroughResponse> {
  const { input } = request;
  if (input.kind === 'form') return api.forwardMultipart(call, '/images/edits', rebuildForm(input.form, upstream.model ?? request.model), upstream);
  // an OpenAI-compatible upstream gets the body as is: its `image` URLs get the one URL check
  return api.forwardJson(call, '/images/generations', checkForwardedUrls('images.generations', input.body, { allowPrivate: deps.options.allowPrivateImageUrls }), upstream);
}

/** Whether this upstream is asked to stream: one that streams OpenAI's events always; a group streamer for a group. */
function streamsUpstream(rules: ImageStreamRules, input: ImageInput): boolean {
  return rules.kind === 'relay' || (input.kind === 'json' && rules.streams(input.body));
}

/**
 * Opens the upstream's stream. A group streamer gets b64_json (no downloads) and no `partial_images`
 * (not its field); when its model refuses `stream` (before any work), the same upstream is asked for
 * the whole answer instead, which the gateway then streams.
 */
function openImageStream(deps: GatewayDeps, request: ImageRequest, input: ImageInput, api: PassthroughCapability, rules: ImageStreamRules, call: CallContext, upstream: Upstream): Promise<Attempted> {
  const allowPrivate = deps.options.allowPrivateImageUrls;
  const path = input.kind === 'form' ? '/images/edits' : '/images/generations';
  let body: Record<string, unknown> | FormBody;
  if (input.kind === 'form') body = rebuildForm(input.form, upstream.model ?? request.model);
  else if (rules.kind === 'relay') body = checkForwardedUrls('images.generations', input.body, { allowPrivate });
  else {
    const { partial_images: _partials, ...rest } = input.body;
    body = checkForwardedUrls('images.generations', { ...rest, response_format: 'b64_json' }, { allowPrivate });
  }
  const opened = api.openStream(call, path, body, upstream).then((stream): Promise<Attempted> | Attempted =>
    // an upstream that ignored `stream` and answered JSON: its whole answer is streamed by the gateway
    stream.headers['content-type']?.startsWith('text/event-stream') === false
      ? wholeBody(stream, call.limits.upstreamResponseBytes, upstream.provider).then((whole): Attempted => ({ kind: 'passthrough', response: whole }))
      : { kind: 'stream', rules, stream },
  );
  if (rules.kind === 'relay') return opened;
  return opened.catch((error: unknown) => {
    if (!rules.refusesStream(error)) throw error;
    return forward(deps, request, api, call, upstream).then((response): Attempted => ({ kind: 'passthrough', response }));
  });
}

/** The whole body of a stream answer that is not an event stream, bounded as any buffered answer. */
async function wholeBody(stream: OpenedStream, maxBytes: number, provider: string): Promise<PassthroughResponse> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of secretFreeChunks(stream.body, stream.cut)) {
      length += chunk.length;
      if (length > maxBytes) throw GatewayError.badUpstreamResponse(provider, `the answer is larger than ${maxBytes} bytes`);
      chunks.push(chunk);
    }
  } catch (error) {
    stream.body.destroy();
    throw GatewayError.is(error) ? error : stream.failure(error);
  }
  const requestId = stream.headers['x-request-id'];
  return { status: stream.status, contentType: stream.headers['content-type'] ?? 'application/json', body: Buffer.concat(chunks), ...(requestId ? { requestId } : {}) };
}

/** The prompt text for an opted-in span: the text items, or the caller's `prompt`; never an image. */
function promptOf(read: ImageGenerationRequest | undefined, input: ImageInput): string | undefined {
  if (read) return read.content.flatMap((item) => ('text' in item ? [item.text] : [])).join('\n') || undefined;
  const prompt = input.kind === 'json' ? input.body.prompt : input.form.prompt;
  return typeof prompt === 'string' ? prompt : undefined;
}
