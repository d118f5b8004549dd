// The seam between the gateway's use cases and the upstream vendors (docs/architecture.md "one adapter per
// provider"). A provider declares what it can do as capabilities; routes and services ask the
// registry (registry.ts) for a capability of the upstream the resolver chose and never name a
// provider. Each capability is a provider's transport details around pure translation functions that
// its module exports beside it (translateImageRequest, normalizeOpenAIError, toCallerTask, ...).
import type { GatewayError } from '../errors/gateway-error.js';
import type { ImageGenerationResponse } from '../images/image-generation-response.js';
import type { ImageGenerationRequest } from '../images/image-request.js';
import type { FormBody } from '../transport/form-body.js';
import type { UpstreamStream } from '../transport/upstream-http.js';
import type { ModelEntry } from '../options/model-catalogue.js';
import type { ImageModelFamily } from '../options/request-limits.js';
import type { ProviderName, Upstream } from '../types.js';
import type { CallContext } from './call-context.js';
import type { ImageGroupRules } from './ark/ark-image-groups.js';
import type { SseEvent } from '../json/sse-events.js';

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
  /** Opens a `stream: true` call (a JSON body, or a multipart form with the model renamed); nothing is relayed before it opened with a 2xx. */
  openStream(call: CallContext, path: string, body: Record<string, unknown> | FormBody, upstream: Upstream): Promise<OpenedStream>;
}

/**
 * An upstream image task as read (docs/image-tasks.md): already in the caller's terms, the contract §2.4
 * answer once it succeeded. `mayHaveRun` marks a failure that says nothing of the work: the vendor
 * no longer knows a task it accepted, which may have run and be billed (docs/tenancy-and-billing.md "The books").
 */
export type UpstreamImageState = { status: 'running' } | { status: 'succeeded'; response: ImageGenerationResponse } | { status: 'failed'; error: GatewayError; mayHaveRun?: true };

/**
 * What a vendor's own task API does for one kind of work, whatever the kind (contract §2.6, §3): the
 * work is submitted and runs at the vendor, and any gateway instance reads it back by the vendor's id
 * (so a restart loses nothing) and may cancel it.
 */
export interface UpstreamTaskApi<Input, State> {
  /** Starts the work upstream (paid from here) with the model as the upstream names it; answers the upstream's task id. */
  submit(call: CallContext, input: Input, upstream: Upstream, upstreamModel: string): Promise<string>;
  /** The task's state now. */
  read(call: CallContext, upstream: Upstream, taskId: string): Promise<State>;
  /**
   * The vendor's cancel of the task, best effort (fire and forget), where the vendor has one (fal,
   * Replicate): sent when the gateway stops following the task before it ended (submitted-work.ts).
   */
  cancel?(call: CallContext, upstream: Upstream, taskId: string): void;
}

/**
 * Image generation on the vendor's own task (DashScope's asynchronous synthesis, fal's queue,
 * Replicate's predictions): an image task handed there is followed by id. What a read answers is
 * already the caller's view (UpstreamImageState).
 */
export interface UpstreamImageTasks extends UpstreamTaskApi<ImageGenerationRequest, UpstreamImageState> {
  /** Whether this model, for this request, runs as an upstream task. */
  offers(upstreamModel: string, request: ImageGenerationRequest): boolean;
  /** How long the upstream keeps a task it was given: following one longer would only read "unknown". */
  readonly lifetimeMs: number;
}

/**
 * Video generation, run by the vendor from the create on (Ark, Veo, fal, Replicate): a read answers the
 * vendor's task object (a task the upstream no longer knows is a 404 GatewayError), and `view` makes it
 * the caller's.
 */
export interface UpstreamVideoTasks extends UpstreamTaskApi<Record<string, unknown>, unknown> {
  /** The task object as the caller sees it: the gateway's id and the caller's model name. */
  view(state: unknown, gatewayId: string, model: string): Record<string, unknown>;
  /**
   * The upstream's result media are not for the caller as they come (they need the operator's
   * credentials, or are bytes): a create needs `storage`, and only the stored copies are answered.
   */
  readonly resultsNeedStorage?: boolean;
  /** Headers (credentials) a result download needs; only for the vendor's own origin, undefined elsewhere. */
  resultHeaders?(upstream: Upstream, url: string): Promise<Record<string, string> | undefined>;
}

/**
 * A vendor's own task API, the one capability for upstream tasks (docs/architecture.md "Providers and
 * the registry"): submit, read, cancel and the caller's view, for each kind of task it runs.
 */
export interface UpstreamTasks {
  readonly image?: UpstreamImageTasks;
  readonly video?: UpstreamVideoTasks;
}

/** The kinds of work an upstream task API may run. */
export type UpstreamTaskKind = keyof UpstreamTasks;

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

/** One event of a streamed image group, as the gateway reads it from the upstream's own format. */
export type GroupStreamEvent =
  /** One finished image of the group: its bytes as base64, or a URL to download them from. */
  | { kind: 'image'; b64?: string; url?: string; size?: string }
  /** One image of the group that failed (the others go on). */
  | { kind: 'failed'; error: GatewayError }
  /** The stream failed as a whole. */
  | { kind: 'error'; error: GatewayError }
  /** The group is done. */
  | { kind: 'done'; usage?: Record<string, number> };

/**
 * How a provider's OpenAI-compatible image route streams (docs/routes.md "Streamed images"). Without
 * it, a streamed request waits for the whole answer and the gateway writes the events.
 */
export type ImageStreamRules =
  /** The upstream streams OpenAI's own image events (upstreams §4.2): relayed as they come. */
  | { kind: 'relay' }
  /** The upstream streams image groups in its own events (Ark, upstreams §2.7), translated one by one. */
  | {
      kind: 'groups';
      /** The JSON request asks for a group the upstream streams; otherwise the gateway waits for the whole answer. */
      streams(body: Record<string, unknown>): boolean;
      /** One event of the upstream's stream; undefined for one that says nothing about images. */
      readEvent(event: SseEvent): GroupStreamEvent | undefined;
      /** The upstream refused `stream` for this model before doing any work (then the gateway waits instead). */
      refusesStream(error: unknown): boolean;
    };

/** A call to the gateway's vendor webhook route as the vendor sent it (docs/video-tasks-and-callbacks.md "Vendor webhooks"). */
export interface VendorWebhookCall {
  /** The request's headers, by lower-case name. */
  headers: Readonly<Record<string, string | undefined>>;
  /** The raw body: a signature covers its exact bytes. */
  body: Buffer;
  /** Unix seconds now: a signature's timestamp is checked against it. */
  nowSeconds: number;
}

/** What the webhook checks keep between calls (the vendors' signing keys), and where fal publishes its public keys. */
export interface VendorWebhookKeys {
  readonly falJwksUrl: string;
  /** The value under `key`, loaded once and kept `ttlMs`; a load that fails is not kept. */
  remember<T>(key: string, ttlMs: number, load: () => Promise<T>): Promise<T>;
}

/**
 * A vendor that calls back when a task it runs ends (Replicate's `webhook`, fal's `fal_webhook`, Ark's
 * `callback_url`): its submit passes on `CallContext.vendorWebhook`, and its calls are checked here.
 */
export interface VendorWebhookCapability {
  /**
   * Whether the call carries the vendor's own valid signature (Replicate's Standard Webhooks headers,
   * fal's ED25519). A vendor with no confirmed signature (Ark) answers true: the route's per-task token
   * alone admits it. Never throws for a bad call: false.
   */
  verify(call: CallContext, upstream: Upstream, delivered: VendorWebhookCall, keys: VendorWebhookKeys): Promise<boolean>;
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
  /** Its own task API, for the kinds of work it runs as tasks (image tasks, video tasks). */
  readonly tasks?: UpstreamTasks;
  readonly assets?: AssetCapability;
  /** It calls back when a task ends, and how such a call is checked (docs/video-tasks-and-callbacks.md "Vendor webhooks"). */
  readonly webhooks?: VendorWebhookCapability;
  /** How many images its native image route may return and did return (Ark's image groups). */
  readonly imageGroups?: ImageGroupRules;
  /** How its image route streams; without it a streamed request is answered from the whole answer. */
  readonly imageStreams?: ImageStreamRules;
  /**
   * A free read that tells whether the upstream serves (docs/routing-and-health.md "The trial"): after
   * a cooldown it is the half-open trial, made by the gateway, so no caller carries it. Resolves on a
   * 2xx; any other answer is thrown normalized, as a paid call's would be.
   */
  readonly healthRead?: (call: CallContext, upstream: Upstream, model: string) => Promise<void>;
  /**
   * Another provider whose catalogue rows describe this one's models too (docs/models.md): Azure OpenAI
   * serves OpenAI's models in OpenAI's format, so `/v1/models` lists the `openai` rows it is routed to.
   */
  readonly catalogueRowsOf?: ProviderName;
  /** Its rows of the default model catalogue (docs/models.md "Model rows"), under the vendor's model names. */
  readonly models?: readonly ModelEntry[];
  /** The row of a contract §1 family (`imageModels`), for the provider whose native image call the contract describes. */
  readonly familyRow?: (family: ImageModelFamily) => ModelEntry;
  /**
   * What is wrong with an upstream the resolver gave for this provider, in its own fields (Vertex AI
   * needs a project and a token function), or undefined: checked before any call, told to the operator.
   */
  checkUpstream?(upstream: Upstream): string | undefined;
}

export type Capability = 'images' | 'passthrough' | 'tasks' | 'assets' | 'webhooks' | 'imageGroups' | 'imageStreams' | 'healthRead';
