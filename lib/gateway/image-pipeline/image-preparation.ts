// An image request made ready to run (image-pipeline.ts): validated for the catalogue row it follows
// (the caller-facing entry of its name before the resolver; else the upstream model's row right after
// it) and the resolver names its upstreams, each once (docs/models.md "Which row a request follows").
// Nothing is charged or called here.
import type { ImageGenerationRequest } from '../../images/image-request.js';
import { readImageGenerationRequest } from '../../images/image-request.js';
import { UploadedImage } from '../../images/uploaded-image.js';
import type { CallContext } from '../../providers/call-context.js';
import type { Upstream } from '../../types.js';
import type { CallerProvenance } from '../../provenance/provenance-policy.js';
import type { ImageModelFamily } from '../../options/request-limits.js';
import { checkRefusedFields, checkSize, familyOf } from '../../models/model-rules.js';
import type { ModelEntry, ModelServing } from '../../options/model-catalogue.js';
import { rowFor } from '../routing/catalogue-routing.js';
import { isObject } from '../../json/json-values.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { AnswerDeadline } from '../answer-deadline.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { editAsGenerationBody } from './image-edit-form.js';
import type { ImageInput, ImageRoute } from './image-input.js';
import type { RequestedSettings } from './image-streams.js';
import { allowedImages, forwardedCount } from './image-input.js';
import { resolveUpstreams } from '../routing/resolve-upstreams.js';
import { capabilityOf } from '../../providers/registry.js';
import type { ActivePolicy } from '../moderation/moderation.js';
import type { UseCaseRequest } from '../use-case.js';

/** An image call with the request it came from. */
export interface ImageRequest {
  route: ImageRoute;
  model: string;
  input: ImageInput;
  from: UseCaseRequest;
  deadline: AnswerDeadline | undefined;
  /** A streamed request: `input` is then the request as it is answered whole (no stream, b64_json). */
  stream?: { input: ImageInput; settings: RequestedSettings };
  /** The caller's moderation policy, once its input stages passed: the output stage reads it (docs/content-safety.md). */
  moderation?: ActivePolicy;
  /** The caller's provenance, read by the `call` stage when the router has the option (docs/provenance.md). */
  provenance?: CallerProvenance;
}

/** What the request was read as, for which family, and the upstreams the resolver named for it. */
export interface Prepared {
  family: ImageModelFamily | undefined;
  request: ImageGenerationRequest | undefined;
  upstreams: readonly Upstream[];
  call: CallContext;
  /** The images charged: the most the request may be answered with. */
  asked: number;
  /** The catalogue says the model is passed through on this endpoint: never translated, whatever the provider can do. */
  passthrough: boolean;
}

/**
 * Validation by the row the request follows, and the resolver, each once: nothing is charged or called
 * before both passed. A caller-facing entry of the caller's name (the host's `models` entry, a
 * contract family) is the row whatever the resolver answers, so its rules run first and bad input
 * never reaches the resolver; any other name follows the row of the upstream model the resolver
 * chose, so it is validated right after it (docs/models.md "Which row a request follows").
 */
export async function prepareImageRequest(deps: GatewayDeps, request: ImageRequest): Promise<Prepared> {
  const { models } = deps.options;
  const named = models.named(request.model);
  const early = named ? validated(deps, request, named) : undefined;
  const upstreams = await resolveUpstreams(deps.options, { model: request.model, route: request.route, caller: request.from.caller, req: request.from.hostRequest });
  // the first upstream's row: a fallback is sent the same request (docs/models.md)
  const { family, read, serving } = early ?? validated(deps, request, rowFor(models, request.model, upstreams[0]));
  const call: CallContext = { http: deps.http, signal: request.from.cancel.clientGone, limits: deps.options.limits, safety: deps.options.safetyIdentifier?.tagOf(request.from.caller.id) };
  const asked = family && read ? allowedImages(read, family, upstreams[0] && capabilityOf(upstreams[0], 'imageGroups')) : forwardedCount(request.input);
  return { family, request: read, upstreams, call, asked, passthrough: serving === 'passthrough' };
}

/** The request checked by its row: read for the row's family where the gateway translates, else counted as it is forwarded. */
function validated(
  deps: GatewayDeps,
  request: ImageRequest,
  entry: ModelEntry | undefined,
): { family: ImageModelFamily | undefined; read: ImageGenerationRequest | undefined; serving: ModelServing | undefined } {
  // the catalogue's rules where the gateway translates (docs/models.md); a passthrough entry is the upstream's to judge.
  // An image route the row does not list takes the other one's serving: an edit of a text-to-image
  // model gets its generation rules (a 400 that says so), a generation of an edit-only model (the
  // contract's JSON shape with images) its edit rules
  const endpoints = entry?.endpoints;
  const serving =
    endpoints &&
    (request.route === 'images.generations' ? (endpoints['/v1/images/generations'] ?? endpoints['/v1/images/edits']) : (endpoints['/v1/images/edits'] ?? endpoints['/v1/images/generations']));
  const translated = serving === 'translated' ? entry : undefined;
  const family = translated ? familyOf(translated) : undefined;
  const read = family ? readForFamily(deps, request, family) : undefined;
  if (translated && read) checkEntryRules(translated, request, read);
  // what an OpenAI-compatible upstream is sent is checked here too
  if (!family) {
    forwardedCount(request.input);
    if (serving === 'passthrough' || !isContractShape(request.input)) requireForwardedPrompt(request.input);
  }
  return { family, read, serving };
}

/** A JSON body in the contract's multimodal shape (`input.messages`): read by the generic family, not forwarded as is. */
function isContractShape(input: ImageInput): boolean {
  return input.kind === 'json' && isObject(input.body.input);
}

/**
 * A body sent as is to an OpenAI-compatible upstream must carry OpenAI's required `prompt`: refused
 * here as the translated routes refuse it, before anything is charged or called, not left to the
 * upstream (docs/routes.md). An edit's form is checked by its route.
 */
function requireForwardedPrompt(input: ImageInput): void {
  if (input.kind !== 'json') return;
  const prompt = input.body.prompt;
  if (typeof prompt !== 'string' || prompt.trim() === '') throw GatewayError.invalidRequest('prompt is required: a non-empty string describing the image', 'prompt');
}

/** The caller's request as the normalized multimodal request, for the model's family. */
export function readForFamily(deps: GatewayDeps, request: ImageRequest, family: ImageModelFamily): ImageGenerationRequest {
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
