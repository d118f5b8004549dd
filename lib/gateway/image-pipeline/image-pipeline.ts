// The one image pipeline behind POST /v1/images/generations and POST /v1/images/edits (docs/architecture.md
// "The image pipeline"): the list of stages in image-stages.ts, run on one request's work. Bad input
// never reaches resolveUpstream, nothing is paid before the input checks passed, and nothing is answered
// before the output checks did. It takes plain data (the JSON body, or the edit form) and returns what it
// did (use-case.ts); the inbound side writes the answer. A `stream: true` request runs the same list and is
// answered as events (image-streams.ts, docs/routes.md "Streamed images"). An image task runs the same
// stages in two parts: the checks at submit (`prepareImage`), the call and its results when it runs
// (`runPreparedImage`).
import type { ImageGenerationRequest } from '../../images/image-request.js';
import type { ImageStreamAsk } from '../../images/image-stream-ask.js';
import { type CallContext, timeoutOf } from '../../providers/call-context.js';
import type { Upstream } from '../../types.js';
import { AnswerDeadline } from '../answer-deadline.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { PriceAsk } from '../ledger/pricing.js';
import { type Outcome, type Usage, type UseCaseRequest, usageFor } from '../use-case.js';
import { type ImageInput, type ImageRoute, streamSettingsOf, unstreamed } from './image-input.js';
import type { ImageRequest, Prepared } from './image-preparation.js';
import { runImageStages } from './image-stages.js';
import type { ImageAnswer, ImageWork, WholeAnswer } from './image-work.js';
import { pricedAsk } from './stages/charge.js';

export type { ImageAnswer, WholeAnswer } from './image-work.js';

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

export function runImageRequest(deps: GatewayDeps, from: UseCaseRequest, call: ImageCall): Promise<Outcome<ImageAnswer>> {
  const usage = usageFor(call.model);
  from.track?.(usage);
  const deadline = call.keepsLateWork ? new AnswerDeadline() : undefined;
  const request: ImageRequest = { from, route: call.route, model: call.model, input: call.stream ? unstreamed(call.input) : call.input, deadline };
  if (call.stream) request.stream = { input: call.input, settings: streamSettingsOf(call.input) };
  const work: ImageWork = { deps, usage, request };
  // the charge stage settles the books of every failure after it and sets the outcome; one before it
  // (bad input, the resolver, an input refusal) charged nothing
  const run = runImageStages(work).then(
    (): Outcome<ImageAnswer> => work.outcome ?? { ok: true, answer: work.answer ?? work.whole!, usage },
    (error: unknown): Outcome<ImageAnswer> => ({ ok: false, error, usage }),
  );
  return deadline ? deadline.race(run, usage) : run;
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
  // the task's own usage is made by its service: this one only carries the stages' notes
  const work: ImageWork = { deps, usage: usageFor(call.model), request };
  return runImageStages(work, 'prepare', 'moderate-input').then(() => ({ request, prepared: work.prepared! }));
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
  const work: ImageWork = { deps, usage, request, prepared };
  return runImageStages(work, 'call', 'store').then(() => {
    // a prepared call never asks for a stream (a task has no open response to stream into)
    if (!work.whole) throw new Error('a prepared image call got a stream answer');
    return work.whole;
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
