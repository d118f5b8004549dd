// Replicate adapter (docs/providers/replicate.md): the image routes and video tasks as predictions of the
// operator's `owner/name` model. An image request creates its prediction with `Prefer: wait` and reads
// it by id until it ends; a model without `num_outputs` makes `n` images as n predictions, charged per
// image delivered (as generateGoogleImages in gemini.ts settles). Replicate answers URLs that it
// deletes after an hour: the gateway's b64_json and result storage apply to them as to any URL.
import { clock } from '../../clock.js';
import { recordCall } from '../../errors/vendor-outcome.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { rejectionOf } from '../../errors/rejection-of.js';
import type { ImageData, ImageGenerationResponse } from '../../images/image-generation-response.js';
import type { ImageGenerationRequest } from '../../images/image-request.js';
import { isObject, parseJsonBody } from '../../json/json-values.js';
import type { Upstream } from '../../types.js';
import { type CallContext, jsonHeaders, timeoutOf, requestUpstream, upstreamUrl } from '../call-context.js';
import type { Provider, UpstreamImageState, UpstreamImageTasks } from '../provider.js';
import { translateImageInput } from './replicate-inputs.js';
import { workGone } from '../submitted-work.js';
import {
  type Prediction,
  awaitPrediction,
  cancelPrediction,
  createPrediction,
  findPrediction,
  normalizeReplicateError,
  outputUrls,
  predictionFailure,
  readPrediction,
  readReplicateModel,
  waitSecondsFor,
} from './replicate-predictions.js';
import { toCallerVideoTask, translateVideoInput } from './replicate-video.js';
import { REPLICATE_MODELS } from './replicate-models.js';
import { replicateWebhooks } from './replicate-webhooks.js';

const PROVIDER = 'replicate';

/** A succeeded prediction's images as contract §2.4 entries (a Data URL output as b64_json); a failed one as its error. */
export function imagesOf(prediction: Prediction): ImageData[] {
  if (prediction.status === 'failed' || prediction.status === 'canceled') throw predictionFailure(prediction);
  const data = outputUrls(prediction.output).map((url): ImageData => {
    const inline = /^data:image\/[\w.+-]+;base64,(.*)$/is.exec(url);
    return inline ? { url: '', b64_json: inline[1]!, revised_prompt: '' } : { url, b64_json: '', revised_prompt: '' };
  });
  if (data.length === 0) throw GatewayError.noImage(PROVIDER, '; the prediction succeeded without an image URL', prediction.id);
  return data;
}

/** One prediction made and followed to its end: its images. */
function onePrediction(call: CallContext, upstream: Upstream, model: string, input: Record<string, unknown>): Promise<{ id: string; data: ImageData[] }> {
  const startedAt = clock().now();
  return rejectionOf(() => createPrediction(call, upstream, model, input, waitSecondsFor(timeoutOf(upstream, call.limits))))
    .then((created) => awaitPrediction(call, upstream, created, startedAt))
    .then((ended) => ({ id: ended.id, data: imagesOf(ended) }));
}

/**
 * The images of a request: one prediction (with `num_outputs` where the model has it), or n
 * concurrent ones. The images that came are answered and charged; a prediction that failed beside
 * ones that succeeded never makes the caller pay again for those. When all failed, the error of one
 * that may have started work wins (the fallback rule then tries no other upstream).
 */
function generateReplicateImages(call: CallContext, request: ImageGenerationRequest, upstream: Upstream): Promise<ImageGenerationResponse> {
  const model = upstream.model ?? request.model;
  // the input is checked once, before any call: a bad request starts no paid work
  return new Promise<ReturnType<typeof translateImageInput>>((resolve) => resolve(translateImageInput(request, model))).then((plan) =>
    Promise.allSettled(Array.from({ length: plan.predictions }, () => onePrediction(call, upstream, model, plan.input))).then((settled): ImageGenerationResponse => {
      if (settled.length > 1) {
        for (const result of settled) recordCall(call.vendorCalls, PROVIDER, result.status === 'fulfilled' ? { images: result.value.data.length, id: result.value.id } : { error: result.reason }, 1);
      }
      const answers = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      const data = answers.flatMap((answer) => answer.data);
      if (data.length === 0) {
        const errors = settled.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
        const cause = errors.find((error) => !GatewayError.is(error) || !error.notStarted) ?? errors[0];
        throw cause instanceof Error ? cause : GatewayError.noImage(PROVIDER, '');
      }
      return { created: Math.floor(Date.now() / 1000), data, extra: { request_id: answers[0]?.id ?? '' } };
    }),
  );
}

/** A prediction read by id as an image task's state. */
export function imageStateOf(prediction: Prediction): UpstreamImageState {
  if (prediction.status === 'starting' || prediction.status === 'processing') return { status: 'running' };
  try {
    const data = imagesOf(prediction);
    return { status: 'succeeded', response: { created: Math.floor(Date.now() / 1000), data, extra: { request_id: prediction.id } } };
  } catch (error) {
    return { status: 'failed', error: GatewayError.is(error) ? error : GatewayError.noImage(PROVIDER, '', prediction.id) };
  }
}

/**
 * Image tasks on Replicate's own prediction (docs/image-tasks.md "Restarts and several instances"): the
 * prediction id is recorded, and any instance reads it until it ends. Offered when the request is one
 * prediction (a fan-out of n predictions has no one id to follow).
 */
const replicateImageTasks: UpstreamImageTasks = {
  // a prediction stays readable by id; a day is the gateway's bound on following one
  lifetimeMs: 24 * 3600_000,
  offers(upstreamModel, request) {
    try {
      return translateImageInput(request, upstreamModel).predictions === 1;
    } catch {
      return false;
    }
  },
  submit(call, request, upstream, model) {
    return new Promise<Record<string, unknown>>((resolve) => resolve(translateImageInput(request, model).input))
      .then((input) => createPrediction(call, upstream, model, input))
      .then((created) => created.id);
  },
  // a prediction Replicate no longer knows ends the task failed at once, as fal's (fal.ts)
  read: (call, upstream, taskId) =>
    findPrediction(call, upstream, taskId).then((prediction) => (prediction ? imageStateOf(prediction) : { status: 'failed', error: workGone(PROVIDER, taskId), mayHaveRun: true })),
  cancel: cancelPrediction,
};

/** Creates a video prediction (no wait: a video takes minutes) and answers its id. */
function createVideoTask(call: CallContext, body: Record<string, unknown>, upstream: Upstream, upstreamModel: string): Promise<string> {
  return new Promise<Record<string, unknown>>((resolve) => resolve(translateVideoInput(body, upstreamModel)))
    .then((input) => createPrediction(call, upstream, upstreamModel, input))
    .then((created) => created.id);
}

/** The prediction object as Replicate sent it (toCallerVideoTask reads its input and times); a 404 is a task gone. */
async function getVideoTask(call: CallContext, upstream: Upstream, id: string): Promise<unknown> {
  const response = await requestUpstream(call, upstream, {
    provider: PROVIDER,
    method: 'GET',
    url: upstreamUrl(upstream.baseURL, '/v1', `/predictions/${encodeURIComponent(id)}`),
    headers: jsonHeaders(upstream),
  });
  const body = parseJsonBody(response.body);
  if (response.status === 404) throw GatewayError.notFound('The task no longer exists upstream (deleted or expired).');
  if (response.status < 200 || response.status >= 300) throw normalizeReplicateError(response.status, body, response.headers);
  readPrediction(body);
  return isObject(body) ? body : {};
}

/** Replicate: images (generations, edits, image tasks) and video tasks, all as predictions. */
export const replicateProvider: Provider = {
  name: 'replicate',
  // a documented custom value: the GenAI conventions name no Replicate provider
  genAiName: 'replicate',
  models: REPLICATE_MODELS,
  images: { generate: generateReplicateImages },
  tasks: { image: replicateImageTasks, video: { submit: createVideoTask, read: getVideoTask, view: toCallerVideoTask } },
  healthRead: readReplicateModel,
  webhooks: replicateWebhooks,
};
