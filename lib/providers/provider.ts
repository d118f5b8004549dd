// The seam between the gateway's use cases and the upstream vendors (docs/architecture.md "one adapter per
// provider"). A provider declares what it can do as capabilities; routes and services ask the
// registry (registry.ts) for a capability of the upstream the resolver chose and never name a
// provider. Each capability is a provider's transport details around pure translation functions that
// its module exports beside it (translateImageRequest, normalizeOpenAIError, toCallerTask, ...).
import type { ImageGenerationResponse } from '../images/image-generation-response.js';
import type { ImageGenerationRequest } from '../images/image-request.js';
import type { FormBody } from '../transport/form-body.js';
import type { UpstreamStream } from '../transport/upstream-http.js';
import type { ProviderName, Upstream } from '../types.js';
import type { CallContext } from './call-context.js';
import type { ImageGroupRules } from './ark-image-groups.js';

/** A 2xx answer of an OpenAI-compatible upstream, relayed to the caller as it came. */
export interface PassthroughResponse {
  status: number;
  contentType: string;
  body: Buffer;
  requestId?: string;
}

/** A streamed answer that opened with a 2xx status (a failure to open is thrown normalized). */
export type OpenedStream = Extract<UpstreamStream, { ok: true }>;

/** Native image generation answered in the gateway's own contract §2.4 shape (URLs; b64 filled later). */
interface ImageCapability {
  generate(call: CallContext, request: ImageGenerationRequest, upstream: Upstream): Promise<ImageGenerationResponse>;
}

/** An OpenAI-compatible API: the caller's body goes as it is, model renamed; the answer comes back as is. */
export interface PassthroughCapability {
  /** The version prefix added to a bare-origin baseURL (`/v1`, `/api/v3`, ...). */
  readonly prefix: string;
  /** POSTs a JSON body to `{base}{path}`. */
  forwardJson(call: CallContext, path: string, body: Record<string, unknown>, upstream: Upstream): Promise<PassthroughResponse>;
  /** POSTs a multipart form (files intact, model already renamed) to `{base}{path}`. */
  forwardMultipart(call: CallContext, path: string, form: FormBody, upstream: Upstream): Promise<PassthroughResponse>;
  /** Opens a `stream: true` call; nothing is relayed before it opened with a 2xx. */
  openStream(call: CallContext, path: string, body: Record<string, unknown>, upstream: Upstream): Promise<OpenedStream>;
}

/** Asynchronous generation tasks (contract §2.6, §3): create upstream, read one back for the caller. */
interface TaskCapability {
  /** Creates the task upstream and answers the upstream's task id. */
  create(call: CallContext, body: Record<string, unknown>, upstream: Upstream, upstreamModel: string): Promise<string>;
  /** The upstream's task object; a task the upstream no longer knows is a 404 GatewayError. */
  get(call: CallContext, upstream: Upstream, upstreamTaskId: string): Promise<unknown>;
  /** The task object as the caller sees it: the gateway's id and the caller's model name. */
  toCallerTask(body: unknown, gatewayId: string, model: string): Record<string, unknown>;
}

export interface CreatedAsset {
  /** The upstream's asset id, recorded as the caller's. */
  assetId: string;
  /** The upstream envelope, returned to the caller unchanged. */
  envelope: unknown;
  requestId?: string;
}

/** An asset library (contract §2.7): the media a caller may reference later as `asset://<id>`. */
export interface AssetCapability {
  /** The name errors give the asset service, which may differ from the provider's. */
  readonly serviceName: string;
  create(call: CallContext, body: Record<string, unknown>, upstream: Upstream): Promise<CreatedAsset>;
}

export interface Provider {
  readonly name: ProviderName;
  /**
   * `gen_ai.provider.name` on the spans and metrics of calls to this provider (docs/observability.md):
   * the OpenTelemetry GenAI conventions' value where they have one, a documented custom value otherwise.
   */
  readonly genAiName: string;
  /** Without it, the image routes forward to the provider's OpenAI-compatible API. */
  readonly images?: ImageCapability;
  readonly passthrough?: PassthroughCapability;
  readonly tasks?: TaskCapability;
  readonly assets?: AssetCapability;
  /** How many images its native image route may return and did return (Ark's image groups). */
  readonly imageGroups?: ImageGroupRules;
}

export type Capability = 'images' | 'passthrough' | 'tasks' | 'assets' | 'imageGroups';
