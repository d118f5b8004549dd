// The one image pipeline behind POST /v1/images/generations and POST /v1/images/edits: validate for the
// model's family before anything else, resolve the upstream, charge, generate with a provider's native
// image capability or forward to its OpenAI-compatible API, download for b64_json, store for durable
// URLs. Bad input never reaches resolveUpstream. It takes plain data (the JSON body, or the edit form)
// and returns what it did (use-case.ts); the inbound side writes the answer. A `stream: true` request
// goes the same way and is answered as events (image-streams.ts, docs/routes.md "Streamed images").
import type { ImageGenerationResponse } from '../images/image-generation-response.js';
import { type ImageGenerationRequest, readImageGenerationRequest } from '../images/image-request.js';
import { GENERIC_IMAGE_FAMILY } from '../images/model-families.js';
import { UploadedImage } from '../images/uploaded-image.js';
import { readImageCount } from '../images/image-count.js';
import { type CallContext, timeoutOf } from '../providers/call-context.js';
import { AnswerDeadline } from './answer-deadline.js';
import type { ImageStreamRules, OpenedStream, PassthroughCapability, PassthroughResponse, UpstreamImageTasks } from '../providers/provider.js';
import type { AttemptRecord } from './ledger/vendor-work.js';
import { asStartedWork, awaitUpstreamImage, capabilityOf, nativeImageGroups, requireCapability } from '../providers/registry.js';
import { checkForwardedUrls } from '../security/forwarded-urls.js';
import type { Upstream } from '../types.js';
import type { ImageModelFamily } from '../options/request-limits.js';
import { requestIdOf } from '../errors/request-id.js';
import { withFallback } from './fallback.js';
import { checkRefusedFields, checkSize, familyOf } from '../models/model-rules.js';
import type { ModelEntry } from '../options/model-catalogue.js';
import { isObject } from '../json/json-values.js';
import type { AttemptInfo } from '../telemetry/telemetry.js';
import { GatewayError } from '../errors/gateway-error.js';
import { parseJsonBody } from '../json/json-values.js';
import type { GatewayDeps } from './gateway-deps.js';
import { type EditForm, editAsGenerationBody, rebuildForm } from './image-edit-form.js';
import type { FormBody } from '../transport/form-body.js';
import { resolveUpstreams } from './resolve-upstreams.js';
import { downloadImages } from './result-images.js';
import { rehostImageAnswer, rehostPassthrough } from './rehost-images.js';
import { settleBooks, withCharge } from './tenancy/with-charge.js';
import type { PriceAsk } from './ledger/pricing.js';
import type { QuotaCharge, QuotaCost } from './tenancy/quotas.js';
import type { Quoted } from './tenancy/quote.js';
import type { ImageStreamAsk } from '../images/image-stream-ask.js';
import {
  type ImageStreamEvent,
  type RelayedImages,
  type RequestedSettings,
  type StreamedImage,
  eventsOf,
  groupEvents,
  imagesOfAnswer,
  imagesOfPassthrough,
  relayedImages,
  requestedSettings,
} from './image-streams.js';
import { usageOf } from '../json/usage-fields.js';
import { type Outcome, type Usage, type UseCaseRequest, attempting, usageFor } from './use-case.js';

/** The caller's image request as it arrived: a JSON body (generations) or the edit form (edits). */
export type ImageInput = { kind: 'json'; body: Record<string, unknown> } | { kind: 'form'; form: EditForm };

export interface ImageCall {
  route: 'images.generations' | 'images.edits';
  model: string;
  input: ImageInput;
  /**
   * The inbound side keeps late work for the client's retry: an upstream that misses its `timeoutMs`
   * is answered 504 but not cut (answer-deadline.ts). Without it, the deadline ends the call.
   */
  keepsLateWork?: boolean;
  /** `stream: true` (validated by images/image-stream-ask.ts): answered as image events. */
  stream?: ImageStreamAsk;
}

export type ImageAnswer =
  /** The OpenAI-compatible upstream's answer, relayed as it came (`data` cut to the `n` asked for). */
  | { kind: 'passthrough'; response: PassthroughResponse }
  /** The contract §2.4 answer; `images` are the downloaded bytes when b64_json was asked for. */
  | { kind: 'image'; response: ImageGenerationResponse; images?: Array<Buffer | undefined> }
  /** A stream: an upstream's own OpenAI image events to relay, its charge settled when its body closed. */
  | { kind: 'relay'; relayed: RelayedImages }
  /** A stream: the events the gateway writes (its charge settled once the last was taken or it stopped). */
  | { kind: 'events'; events: AsyncGenerator<ImageStreamEvent> }
  /** A dry run: what the request would cost and reserve; nothing was sent or charged. */
  | Quoted;

/** An answer in one piece: the only kinds a request without `stream` gets. */
export type WholeAnswer = Extract<ImageAnswer, { kind: 'passthrough' | 'image' }>;

export function runImageRequest(deps: GatewayDeps, from: UseCaseRequest, call: ImageCall): Promise<Outcome<ImageAnswer>> {
  const usage = usageFor(call.model);
  from.track?.(usage);
  const deadline = call.keepsLateWork ? new AnswerDeadline() : undefined;
  const request: ImageRequest = { from, route: call.route, model: call.model, input: call.stream ? unstreamed(call.input) : call.input, deadline };
  if (call.stream) request.stream = { input: call.input, settings: settingsOf(call.input) };
  const work = runPrepared(deps, request, usage);
  return deadline ? deadline.race(work, usage) : work;
}

function runPrepared(deps: GatewayDeps, request: ImageRequest, usage: Usage): Promise<Outcome<ImageAnswer>> {
  const { from } = request;
  return prepare(deps, request).then(
    (prepared) => {
      usage.imagesAsked = prepared.asked;
      const priced = pricedAsk(request, prepared, usage);
      // quotas after validation and the resolver, before any upstream call; the images come back when it fails
      const cost = { requests: 1, images: prepared.asked, priced };
      return withCharge(
        deps.quotas,
        from.caller,
        cost,
        usage,
        (charge) =>
          // one frame waits for the upstream: callUpstreams and the attempts are promise chains
          callUpstreams(deps, usage, request, prepared).then((attempted) =>
            request.stream || attempted.kind === 'stream' ? streamAnswer(deps, usage, request, prepared, attempted, { charge, cost }) : completeAnswer(deps, usage, request, prepared, attempted),
          ),
        // a stream settles its charge by the images it delivered, when it ends (image-streams.ts)
        request.stream ? 'by-work' : 'at-answer',
        // a dry run stops here, answered the quote of this charge
        from.dryRun,
      );
    },
    (error: unknown): Outcome<ImageAnswer> => ({ ok: false, error, usage }),
  );
}

/**
 * An image call validated and resolved, neither charged nor sent: image tasks (image-tasks/) prepare
 * at submit, charge there, and run it later from a job with `runPreparedImage`.
 */
export interface PreparedImage {
  readonly request: ImageRequest;
  readonly prepared: Prepared;
}

/** Validation and the resolver of `call`, as runImageRequest does them first; throws the 4xx of bad input. */
export function prepareImage(deps: GatewayDeps, from: UseCaseRequest, call: ImageCall): Promise<PreparedImage> {
  const request: ImageRequest = { from, route: call.route, model: call.model, input: call.input, deadline: undefined };
  return prepare(deps, request).then((prepared) => ({ request, prepared }));
}

/**
 * The prepared call made for `from` (a task's own caller, cancellation and result base), holding
 * nothing of the request that submitted it: a queued task keeps no request or socket alive.
 */
export function rebasePrepared(ready: PreparedImage, from: UseCaseRequest): PreparedImage {
  return { request: { ...ready.request, from }, prepared: { ...ready.prepared, call: { ...ready.prepared.call, signal: from.cancel.clientGone } } };
}

/** Runs a prepared call: the upstream calls under the fallback rule and the answer completed (cap, downloads, storage). Charges nothing. */
export function runPreparedImage(deps: GatewayDeps, usage: Usage, ready: PreparedImage): Promise<WholeAnswer> {
  const { request, prepared } = ready;
  usage.imagesAsked = prepared.asked;
  return callUpstreams(deps, usage, request, prepared).then((attempted) => {
    // a prepared call never asks for a stream (a task has no open response to stream into)
    if (attempted.kind === 'stream') throw new Error('a prepared image call got a stream answer');
    return completeAnswer(deps, usage, request, prepared, attempted);
  });
}

/**
 * The one upstream of a prepared call and the request as its native image API takes it, when the
 * resolver named exactly one upstream and the model has an image family: what an upstream task
 * (image-tasks/) is submitted with. Undefined otherwise (a fallback list stays in the queue's run).
 */
export function singleNativeCall(ready: PreparedImage): { upstream: Upstream; request: ImageGenerationRequest; call: CallContext } | undefined {
  const { upstreams, request, call } = ready.prepared;
  const [upstream] = upstreams;
  return upstreams.length === 1 && upstream && request ? { upstream, request, call } : undefined;
}

/**
 * What a money budget reserves for the call: the most its images may cost (docs/tenancy-and-billing.md
 * "Cost in money"); the quality asked is recorded in the usage, for the price of what was made.
 */
function pricedAsk(request: ImageRequest, prepared: Prepared, usage: Usage): PriceAsk {
  const quality = qualityOf(request.input);
  if (quality !== undefined) usage.imageQuality = quality;
  const size = prepared.request?.parameters.size ?? sizeAsked(request.input);
  if (typeof size === 'string' && /^\d+[x*]\d+$/.test(size)) usage.sizeAsked = size.replace('*', 'x');
  return { model: request.model, images: prepared.asked, ...(typeof size === 'string' ? { size } : {}), ...(quality !== undefined ? { quality } : {}) };
}

/** What a budget reserves for a prepared call (an image task charged at submit). */
export function pricedAskOf(ready: PreparedImage, usage: Usage): PriceAsk {
  return pricedAsk(ready.request, ready.prepared, usage);
}

/** The images a prepared call is charged for: the most it may be answered with. */
export function imagesAskedOf(ready: PreparedImage): number {
  return ready.prepared.asked;
}

/** The first upstream the resolver named, for the task record (the one that serves it may be a later one). */
export function firstUpstreamOf(ready: PreparedImage): Upstream | undefined {
  return ready.prepared.upstreams[0];
}

/**
 * The longest a prepared call may take: every upstream's deadline in turn (the fallback rule), the
 * downloads and the storage of results, and some room to spare. A task running longer than this has
 * lost the instance that ran it (docs/image-tasks.md "Restarts").
 */
export function runBudgetOf(deps: GatewayDeps, ready: PreparedImage): number {
  const { limits, storage } = deps.options;
  const upstreams = ready.prepared.upstreams.reduce((sum, upstream) => sum + timeoutOf(upstream, limits), 0);
  const work = upstreams + limits.downloadTimeoutMs + (storage?.timeoutMs ?? 0);
  // room for a slow store write and a busy event loop: a tenth of the work, between 5 s and a minute
  return work + Math.min(60_000, Math.max(5_000, Math.round(work / 10)));
}

/** The call with the request it came from. */
interface ImageRequest extends Omit<ImageCall, 'stream'> {
  from: UseCaseRequest;
  deadline: AnswerDeadline | undefined;
  /** A streamed request: `input` is then the request as it is answered whole (no stream, b64_json). */
  stream?: { input: ImageInput; settings: RequestedSettings };
}

interface Prepared {
  family: ImageModelFamily | undefined;
  request: ImageGenerationRequest | undefined;
  upstreams: readonly Upstream[];
  call: CallContext;
  /** The images charged: the most the request may be answered with. */
  asked: number;
  /** The catalogue says the model is passed through on this endpoint: never translated, whatever the provider can do. */
  passthrough: boolean;
}

/** Validation for the model's catalogue entry, then the resolver: nothing is charged or called before both passed. */
async function prepare(deps: GatewayDeps, request: ImageRequest): Promise<Prepared> {
  const entry = deps.options.models.find(request.model);
  // the catalogue's rules where the gateway translates (docs/models.md); a passthrough entry is the upstream's to judge
  // an edit of a model that lists no edit endpoint (text-to-image only) gets its generation rules: a 400 that says so
  const serving = entry && (entry.endpoints[request.route === 'images.generations' ? '/v1/images/generations' : '/v1/images/edits'] ?? entry.endpoints['/v1/images/generations']);
  const translated = serving === 'translated' ? entry : undefined;
  const family = translated ? familyOf(translated) : undefined;
  // image-family models are validated before the resolver runs: bad input costs the host nothing
  const read = family ? readRequest(deps, request, family) : undefined;
  if (translated && read) checkEntryRules(translated, request, read);
  // what an OpenAI-compatible upstream is sent is checked before the resolver too
  if (!family) forwardedCount(request.input);
  const upstreams = await resolveUpstreams(deps.options, { model: request.model, route: request.route, caller: request.from.caller, req: request.from.hostRequest });
  const call: CallContext = { http: deps.http, signal: request.from.cancel.clientGone, limits: deps.options.limits };
  const asked = family && read ? allowedImages(read, family) : forwardedCount(request.input);
  return { family, request: read, upstreams, call, asked, passthrough: serving === 'passthrough' };
}

/** The caller's request as the normalized multimodal request, for the model's family. */
function readRequest(deps: GatewayDeps, request: ImageRequest, family: ImageModelFamily): ImageGenerationRequest {
  const { input } = request;
  if (input.kind === 'json') return readImageGenerationRequest(input.body, family, deps.imageRules);
  const { form } = input;
  // the DashScope multimodal call has no mask input: say so rather than drop it silently
  if (form.mask) throw GatewayError.invalidRequest(`mask is not supported by model '${request.model}': describe the region to change in the prompt`, 'mask');
  // uploads stay raw bytes: upload://<i> in the body, UploadedImage in the request
  const uploads = form.images.map(({ file, mime }) => new UploadedImage(mime, file.chunks, file.size));
  return readImageGenerationRequest(editAsGenerationBody(request.model, form), family, deps.imageRules, uploads);
}

/** The entry's refused fields and sizes (model-rules.ts), against the request as read. */
function checkEntryRules(entry: ModelEntry, request: ImageRequest, read: ImageGenerationRequest): void {
  checkRefusedFields(entry, request.model, { ...read.extra, parameters: read.parameters });
  const { input } = request;
  const inParameters = input.kind === 'json' && isObject(input.body.parameters) && input.body.parameters.size !== undefined;
  // the size as the caller spelled it: a top-level `WxH` was read into `W*H`
  const asSent = inParameters ? read.parameters.size : input.kind === 'json' ? input.body.size : input.form.fields.size;
  checkSize(entry, request.model, asSent, inParameters ? 'parameters.size' : 'size');
}

/** Sends the caller's request, model renamed, to an OpenAI-compatible API. */
function forward(deps: GatewayDeps, request: ImageRequest, api: PassthroughCapability, call: CallContext, upstream: Upstream): Promise<PassthroughResponse> {
  const { input } = request;
  if (input.kind === 'form') return api.forwardMultipart(call, '/images/edits', rebuildForm(input.form, upstream.model ?? request.model), upstream);
  // an OpenAI-compatible upstream gets the body as is: its `image` URLs get the one URL check
  return api.forwardJson(call, '/images/generations', checkForwardedUrls('images.generations', input.body, { allowPrivate: deps.options.allowPrivateImageUrls }), upstream);
}

/** The `quality` the request asked for (gpt-image), a JSON value or a form field; it prices the images. */
function qualityOf(input: ImageInput): string | undefined {
  const quality = input.kind === 'json' ? input.body.quality : input.form.fields.quality;
  return typeof quality === 'string' ? quality : undefined;
}

/** The `size` the request asked for at its top level (OpenAI shape, or the edit form). */
function sizeAsked(input: ImageInput): unknown {
  return input.kind === 'json' ? input.body.size : input.form.fields.size;
}

/** What the caller sent as `n` and `response_format` on the OpenAI-compatible path (a JSON value, or a form field). */
function requestedImagesOf(input: ImageInput): unknown {
  return input.kind === 'json' ? input.body.n : input.form.fields.n;
}

function requestedFormatOf(input: ImageInput): unknown {
  return input.kind === 'json' ? input.body.response_format : input.form.fields.response_format;
}

/** What the upstream that answered gave back, with the request it was sent (read for the generic family when the model has none). */
type Attempted =
  | { kind: 'image'; provider: Upstream['provider']; request: ImageGenerationRequest; response: ImageGenerationResponse }
  | { kind: 'passthrough'; response: PassthroughResponse }
  /** An upstream stream opened for a streamed request. */
  | { kind: 'stream'; rules: ImageStreamRules; stream: OpenedStream };

/** What an upstream answered whole. */
type WholeAttempt = Exclude<Attempted, { kind: 'stream' }>;

/**
 * The upstream calls under the fallback rule. Not async: each attempt hands back its call's own
 * promise, so no suspended frames wait beside a slow upstream (docs/architecture.md "Performance":
 * memory per held request). A synchronous throw (a request that cannot be read) becomes the
 * attempt's failure.
 */
function callUpstreams(deps: GatewayDeps, usage: Usage, request: ImageRequest, prepared: Prepared): Promise<Attempted> {
  const { upstreams } = prepared;
  let read = prepared.request;
  const attempt: AttemptInfo = {
    route: request.route,
    model: request.model,
    choices: prepared.asked,
    tenant: request.from.caller.id,
    requestId: request.from.hostRequest && requestIdOf(request.from.hostRequest),
    prompt: () => promptOf(read, request.input),
  };
  const { deadline } = request;
  return withFallback(upstreams, deps.options, attempt, (chosen): Promise<Attempted> => {
    // a provider that fans out records each of its vendor calls in the attempt (ledger/vendor-work.ts)
    const record = attempting(usage, chosen.provider);
    const call = { ...prepared.call, vendorCalls: (record.calls = []) };
    // only the last upstream's call outlives its deadline: before it, a call that times out without a
    // connection must still fail as not started, so the next upstream is tried (fallback.ts)
    const last = upstreams.indexOf(chosen) === upstreams.length - 1;
    const upstream = deadline && last ? lateWorkUpstream(deps, chosen, deadline) : chosen;
    // the catalogue decides how the endpoint is served (docs/models.md): a passthrough entry reaches the
    // provider's OpenAI-compatible API; so does a stream to a provider whose image API streams events
    // of its own (docs/routes.md "Streamed images")
    const rules = request.stream ? capabilityOf(upstream, 'imageStreams') : undefined;
    const images = prepared.passthrough || rules ? undefined : capabilityOf(upstream, 'images');
    let attempted: Promise<Attempted>;
    // an Idempotency-Key request that another instance could finish from an upstream task id (its
    // tracker says so) runs on the upstream's own task API when it has one for this request
    const tasks = images && usage.onUpstreamTask && !request.stream && upstreams.length === 1 && prepared.request ? capabilityOf(upstream, 'imageTasks') : undefined;
    if (images && tasks?.offers(upstream.model ?? request.model, prepared.request!)) {
      const sent = prepared.request!;
      attempted = onUpstreamTask(deps, usage, record, request, { call, upstream, tasks, sent }).then((response) => ({ kind: 'image', provider: upstream.provider, request: sent, response }));
    } else if (images) {
      const sent = (read ??= readRequest(deps, request, GENERIC_IMAGE_FAMILY));
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

/**
 * A request run on the upstream's own task API (an Idempotency-Key request: docs/tenancy-and-billing.md
 * "Retries"): submitted (paid from here), its id recorded in the key's lease before anything else, then
 * read until it ends within the upstream's deadline. Any error after the submit is one of work that
 * started. The attempt carries the task id, and settles as `made` with what the task made, or `failed`.
 */
async function onUpstreamTask(
  deps: GatewayDeps,
  usage: Usage,
  record: AttemptRecord,
  request: ImageRequest,
  run: { call: CallContext; upstream: Upstream; tasks: UpstreamImageTasks; sent: ImageGenerationRequest },
): Promise<ImageGenerationResponse> {
  const { call, upstream, tasks, sent } = run;
  const startedAt = Date.now();
  const id = await tasks.submit(call, sent, upstream);
  record.id = id;
  try {
    await usage.onUpstreamTask!({
      provider: upstream.provider,
      baseURL: upstream.baseURL,
      id,
      ...(sent.responseFormat === 'b64_json' ? { base64: true } : {}),
      ...(deps.options.storage ? { resultBase: request.from.resultBase } : {}),
    });
  } catch (error) {
    throw asStartedWork(error);
  }
  const state = await awaitUpstreamImage(call, upstream, tasks, id, { startedAt, longestReadMs: deps.options.imageTasks.pollMs });
  if (state.status === 'failed') {
    // the vendors bill what their task made: a failed task made nothing
    record.outcome = 'failed';
    record.images = 0;
    throw asStartedWork(state.error);
  }
  record.outcome = 'made';
  record.images = state.response.data.length;
  return state.response;
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

/** The answer once the upstream answered: the image cap, b64_json downloads, durable storage. */
async function completeAnswer(deps: GatewayDeps, usage: Usage, request: ImageRequest, prepared: Prepared, answer: WholeAttempt): Promise<WholeAnswer> {
  const { family, call } = prepared;
  if (answer.kind === 'passthrough') {
    usage.upstreamRequestId = answer.response.requestId;
    // the same rule as below: the upstream does not decide how many images the caller gets (and is billed)
    const capped = capPassthroughImages(answer.response.body, usage.provider ?? 'upstream', prepared.asked, answer.response.requestId);
    usage.upstreamImages = capped.upstreamImages;
    usage.images = capped.images;
    if (capped.sizes) usage.imageSizes = capped.sizes;
    if (capped.usage) usage.upstreamUsage = capped.usage;
    // a stream carries the bytes themselves: nothing is stored for it
    if (request.stream) return { kind: 'passthrough', response: { ...answer.response, body: capped.body } };
    const response = await rehostPassthrough(deps, usage, request.from, { ...answer.response, body: capped.body }, requestedFormatOf(request.input));
    return { kind: 'passthrough', response };
  }
  const { response } = answer;
  usage.upstreamRequestId = response.extra.request_id || undefined;
  // the upstream does not decide how much the gateway downloads and answers: at most what the
  // request allowed, the rest dropped (and reported in the usage event)
  usage.upstreamImages = response.data.length;
  response.data = response.data.slice(0, allowedImages(answer.request, family ?? GENERIC_IMAGE_FAMILY));
  usage.images = response.data.length;
  if (response.sizes) usage.imageSizes = response.sizes.slice(0, usage.images);
  if (response.usage) usage.upstreamUsage = response.usage;
  // for the usage event only: the caller's answer is the contract §2.4 body
  delete response.sizes;
  delete response.usage;
  let images: Array<Buffer | undefined> | undefined;
  if (answer.request.responseFormat === 'b64_json') {
    const policy = { allowPrivate: deps.options.allowPrivateResultUrls };
    images = await downloadImages(response, call, answer.provider, policy);
  }
  // with storage, each image is stored (from the b64_json buffer when there is one) and url is durable
  if (!request.stream) {
    await rehostImageAnswer(deps, usage, request.from, response, images);
    // an upstream that answers bytes only (Gemini): once stored, a caller who asked for `url` gets the
    // URL alone; one who did not ask keeps the bytes the model answers by default beside it, since
    // clients such as the Vercel AI SDK's edit read b64_json without asking (docs/routes.md "The answer")
    if (requestedFormatOf(request.input) === 'url') for (const item of response.data) if (item.url !== '' && item.b64_json !== '') item.b64_json = '';
  }
  return images ? { kind: 'image', response, images } : { kind: 'image', response };
}

/** A streamed request as it is answered whole: no `stream` or `partial_images`, and the images as bytes. */
function unstreamed(input: ImageInput): ImageInput {
  if (input.kind === 'json') {
    const { stream: _stream, partial_images: _partials, ...body } = input.body;
    return { kind: 'json', body: { ...body, response_format: 'b64_json' } };
  }
  const { stream: _stream, partial_images: _partials, ...fields } = input.form.fields;
  return { kind: 'form', form: { ...input.form, fields: { ...fields, response_format: 'b64_json' } } };
}

function settingsOf(input: ImageInput): RequestedSettings {
  if (input.kind === 'form') return requestedSettings(input.form.fields);
  const parameters = input.body.parameters;
  return requestedSettings(input.body, typeof parameters === 'object' && parameters !== null ? (parameters as Record<string, unknown>) : undefined);
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
    for await (const chunk of stream.body) {
      length += (chunk as Buffer).length;
      if (length > maxBytes) throw GatewayError.badUpstreamResponse(provider, `the answer is larger than ${maxBytes} bytes`);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    stream.body.destroy();
    throw GatewayError.is(error) ? error : stream.failure(error);
  }
  const requestId = stream.headers['x-request-id'];
  return { status: stream.status, contentType: stream.headers['content-type'] ?? 'application/json', body: Buffer.concat(chunks), ...(requestId ? { requestId } : {}) };
}

/**
 * The answer of a streamed request: the upstream's stream relayed or translated, or the whole answer
 * (cut, downloaded for its bytes) as one completed event per image. The charge is settled here for
 * a whole answer, by the stream for the others (image-streams.ts).
 */
async function streamAnswer(deps: GatewayDeps, usage: Usage, request: ImageRequest, prepared: Prepared, attempted: Attempted, charged: { charge: QuotaCharge; cost: QuotaCost }): Promise<ImageAnswer> {
  const { settings } = request.stream!;
  const { charge, cost } = charged;
  const provider = usage.provider ?? 'upstream';
  const policy = { allowPrivate: deps.options.allowPrivateResultUrls };
  if (attempted.kind === 'stream') {
    const { rules, stream } = attempted;
    if (rules.kind === 'relay') {
      const clientGone = (): boolean => request.from.cancel.clientGone.aborted;
      return { kind: 'relay', relayed: relayedImages(usage, stream, { quotas: deps.quotas, charge, cost, clientGone }, prepared.asked) };
    }
    const group = { rules, stream, provider, call: prepared.call, policy, settings, asked: prepared.asked, quotas: deps.quotas, charge, cost };
    return { kind: 'events', events: groupEvents(usage, group) };
  }
  const answer = await completeAnswer(deps, usage, request, prepared, attempted);
  let images: StreamedImage[] = [];
  if (answer.kind === 'passthrough') images = await imagesOfPassthrough(answer.response.body, prepared.call, provider, policy);
  else if (answer.kind === 'image') images = imagesOfAnswer(answer.response, answer.images);
  // a stream with no image event would end as if nothing were asked: the caller is told instead
  if (images.length === 0) throw GatewayError.noImage(provider, '', usage.upstreamRequestId);
  await settleBooks(deps.quotas, charge, cost, usage, {});
  return { kind: 'events', events: eventsOf(images, settings) };
}

/** The prompt text for an opted-in span: the text items, or the caller's `prompt`; never an image. */
function promptOf(read: ImageGenerationRequest | undefined, input: ImageInput): string | undefined {
  if (read) return read.content.flatMap((item) => ('text' in item ? [item.text] : [])).join('\n') || undefined;
  const prompt = input.kind === 'json' ? input.body.prompt : input.form.prompt;
  return typeof prompt === 'string' ? prompt : undefined;
}

/** contract §2.3 `n` (default 1), never more than the family allows (readRequest refused larger ones). */
function allowedImages(request: ImageGenerationRequest, family: ImageModelFamily): number {
  const n = request.parameters.n;
  const asked = typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : 1;
  return Math.min(asked, family.maxN);
}

// OpenAI's own ceiling for `n` on its image routes: a larger ask is refused, never forwarded as sent
const MAX_PASSTHROUGH_N = 10;

/**
 * The most images an OpenAI-compatible upstream may answer: `n` as it is sent (one whole number up to
 * OpenAI's ceiling, 1 when absent), or an image group the JSON body asks for (Ark's
 * `sequential_image_generation`, the same rule as the native route: docs/tenancy-and-billing.md), whichever
 * is larger: an upstream honours one or the other.
 */
function forwardedCount(input: ImageInput): number {
  const n = readImageCount(requestedImagesOf(input), 'n', MAX_PASSTHROUGH_N, input.kind) ?? 1;
  if (input.kind === 'form') return n;
  const groups = nativeImageGroups();
  return groups ? Math.max(n, groups.asked(input.body)) : n;
}

/**
 * An OpenAI-compatible image answer with at most `allowed` entries in `data`; the body is
 * re-serialized only when the upstream returned more (otherwise it goes out byte for byte, as a
 * passthrough). An image route's 2xx answer is JSON with a `data` list (upstreams §4.1): anything
 * else is refused (502) rather than relayed, whatever its Content-Type says, so no answer escapes
 * the cap or the count the caller is billed by.
 */
function capPassthroughImages(body: Buffer, provider: string, allowed: number, requestId: string | undefined): CappedImages {
  const parsed = parseJsonBody(body);
  const data = typeof parsed === 'object' && parsed !== null ? (parsed as { data?: unknown }).data : undefined;
  if (!Array.isArray(data)) throw GatewayError.badUpstreamResponse(provider, 'the image answer is not JSON with a data list', requestId);
  const billed = { ...imageSizesOf(parsed as Record<string, unknown>, data.slice(0, allowed)), ...usageOf(parsed) };
  if (data.length <= allowed) return { body, images: data.length, upstreamImages: data.length, ...billed };
  const trimmed = { ...(parsed as Record<string, unknown>), data: data.slice(0, allowed) };
  return { body: Buffer.from(JSON.stringify(trimmed)), images: allowed, upstreamImages: data.length, ...billed };
}

interface CappedImages {
  body: Buffer;
  images: number;
  upstreamImages: number;
  sizes?: string[];
  usage?: Record<string, number>;
}

/** `WxH` of each returned image, when the answer says (Ark: `data[].size`; OpenAI gpt-image: top-level `size`). */
function imageSizesOf(parsed: Record<string, unknown>, data: unknown[]): { sizes?: string[] } {
  const sizes = data.map((item) => {
    const size = typeof item === 'object' && item !== null ? (item as { size?: unknown }).size : undefined;
    return typeof size === 'string' ? size : parsed.size;
  });
  return sizes.length > 0 && sizes.every((size): size is string => typeof size === 'string' && /^\d+x\d+$/.test(size)) ? { sizes } : {};
}
