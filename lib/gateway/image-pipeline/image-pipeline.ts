// The one image pipeline behind POST /v1/images/generations and POST /v1/images/edits: validate for the
// model's family before anything else, resolve the upstream, charge, generate with a provider's native
// image capability or forward to its OpenAI-compatible API, download for b64_json, store for durable
// URLs. Bad input never reaches resolveUpstream. It takes plain data (the JSON body, or the edit form)
// and returns what it did (use-case.ts); the inbound side writes the answer. A `stream: true` request
// goes the same way and is answered as events (image-streams.ts, docs/routes.md "Streamed images").
// Its steps live beside it: what is read of the caller's input (image-input.ts), validation and the
// resolver (image-preparation.ts), the upstream calls under the fallback rule (image-upstream-calls.ts),
// and the image cap (images-allowed.ts, passthrough-image-cap.ts); here they are run in order, and the
// answer is completed.
import type { ImageGenerationResponse } from '../../images/image-generation-response.js';
import type { ImageGenerationRequest } from '../../images/image-request.js';
import { GENERIC_IMAGE_FAMILY } from '../../images/model-families.js';
import type { ImageStreamAsk } from '../../images/image-stream-ask.js';
import { type CallContext, timeoutOf } from '../../providers/call-context.js';
import type { PassthroughResponse } from '../../providers/provider.js';
import type { Upstream } from '../../types.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { AnswerDeadline } from '../answer-deadline.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { type ImageInput, type ImageRoute, qualityOf, requestedFormatOf, sizeAsked, streamSettingsOf, unstreamed } from './image-input.js';
import { type ImageRequest, type Prepared, prepareImageRequest } from './image-preparation.js';
import { type Attempted, type WholeAttempt, callUpstreams } from './image-upstream-calls.js';
import { allowedImages } from './images-allowed.js';
import { capPassthroughImages } from './passthrough-image-cap.js';
import { downloadImages } from '../results/result-images.js';
import { rehostImageAnswer, rehostPassthrough } from '../results/rehost-images.js';
import { settleBooks, withCharge } from '../tenancy/with-charge.js';
import { type PriceAsk, upstreamModelsOf } from '../ledger/pricing.js';
import type { QuotaCost } from '../tenancy/quota-cost.js';
import type { QuotaCharge } from '../tenancy/quotas.js';
import type { Quoted } from '../tenancy/quote.js';
import { type ImageStreamEvent, type RelayedImages, type StreamedImage, eventsOf, groupEvents, imagesOfAnswer, imagesOfPassthrough, relayedImages } from './image-streams.js';
import { type Outcome, type Usage, type UseCaseRequest, usageFor } from '../use-case.js';
import { type OutputCheck, checkImageAnswer, checkPassthroughAnswer, subjectOf } from '../moderation/image-moderation.js';

/** An image request as the inbound side hands it over: the route, the model and the caller's input. */
export interface ImageCall {
  route: ImageRoute;
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

/** What an image request is answered: whole, as a stream, or a quote. */
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
  if (call.stream) request.stream = { input: call.input, settings: streamSettingsOf(call.input) };
  const work = runPrepared(deps, request, usage);
  return deadline ? deadline.race(work, usage) : work;
}

function runPrepared(deps: GatewayDeps, request: ImageRequest, usage: Usage): Promise<Outcome<ImageAnswer>> {
  const { from } = request;
  return prepareImageRequest(deps, request).then(
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
  return prepareImageRequest(deps, request).then((prepared) => ({ request, prepared }));
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
  return {
    model: request.model,
    upstreamModels: upstreamModelsOf(prepared.upstreams),
    images: prepared.asked,
    ...(typeof size === 'string' ? { size } : {}),
    ...(quality !== undefined ? { quality } : {}),
  };
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
    // flagged images are dropped before anything is stored, streamed or answered (docs/content-safety.md)
    const output = outputCheckOf(deps, request, call);
    const body = output ? await checkPassthroughAnswer(output, usage, capped.body) : capped.body;
    // a stream carries the bytes themselves: nothing is stored for it
    if (request.stream) return { kind: 'passthrough', response: { ...answer.response, body } };
    const response = await rehostPassthrough(deps, usage, request.from, { ...answer.response, body }, requestedFormatOf(request.input));
    return { kind: 'passthrough', response };
  }
  const { response } = answer;
  usage.upstreamRequestId = response.extra.request_id || undefined;
  // the upstream does not decide how much the gateway downloads and answers: at most what the
  // request allowed, the rest dropped (and reported in the usage event)
  usage.upstreamImages = response.data.length;
  // (a family's: the images charged, an image group the request set itself included)
  response.data = response.data.slice(0, family ? prepared.asked : allowedImages(answer.request, GENERIC_IMAGE_FAMILY));
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
  // flagged images are dropped before anything is stored or answered; the bytes checked are stored as they are
  const output = outputCheckOf(deps, request, call);
  const checked = output ? await checkImageAnswer(output, usage, response, images) : undefined;
  if (images && checked) images = checked;
  // with storage, each image is stored (from the b64_json buffer when there is one) and url is durable
  if (!request.stream) {
    await rehostImageAnswer(deps, usage, request.from, response, checked ?? images);
    // an upstream that answers bytes only (Gemini): once stored, a caller who asked for `url` gets the
    // URL alone; one who did not ask keeps the bytes the model answers by default beside it, since
    // clients such as the Vercel AI SDK's edit read b64_json without asking (docs/routes.md "The answer")
    if (requestedFormatOf(request.input) === 'url') for (const item of response.data) if (item.url !== '' && item.b64_json !== '') item.b64_json = '';
  }
  return images ? { kind: 'image', response, images } : { kind: 'image', response };
}

/** The output stage of the caller's policy, when it has one (docs/content-safety.md). */
function outputCheckOf(deps: GatewayDeps, request: ImageRequest, call: CallContext): OutputCheck | undefined {
  const { moderation } = deps.options;
  const active = request.moderation;
  if (!moderation || !active?.outputImages) return undefined;
  return { moderation, active, subject: subjectOf(request.from, request.route, request.model), call, allowPrivate: deps.options.allowPrivateResultUrls };
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
