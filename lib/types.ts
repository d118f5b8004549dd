// Public types shared by the options, the routes and the adapters (docs/architecture.md, "Public contract"):
// who calls, which route, which upstream, the usage event and the quote of a dry run. The option types are in lib/options/.

/** Who is calling. `id` names the tenant: tasks and assets belong to it. Hosts may add fields. */
export interface Caller {
  id: string;
  [extra: string]: unknown;
}

/** The endpoint a request is for: a closed union, so resolvers can switch on it exhaustively. */
export type RouteName = 'images.generations' | 'images.edits' | 'chat.completions' | 'responses' | 'video.tasks' | 'assets' | 'images.native';

/**
 * The providers of the registry, by the name `Upstream.provider` gives: one per provider folder, each the
 * key of its line in the registry (lib/providers/registry.ts), which the compiler holds to this list.
 */
export type ProviderName = 'dashscope' | 'ark' | 'openai' | 'azure' | 'gemini' | 'vertex' | 'fal' | 'replicate';

/**
 * Where one request goes. Keys are used for the call only: never stored, never logged. The fields a
 * host reads from its environment (the keys, the Volcengine region, the Vertex AI project and
 * location) take `undefined` as absent, so `apiKey: process.env.DASHSCOPE_API_KEY` compiles under
 * `exactOptionalPropertyTypes` too.
 */
export interface Upstream {
  provider: ProviderName;
  /**
   * Each vendor SDK's own base, the adapter appends its paths:
   * dashscope `https://dashscope-intl.aliyuncs.com/api/v1`, ark `https://ark.cn-beijing.volces.com/api/v3`,
   * openai `https://api.openai.com/v1`, azure the resource endpoint `https://{resource}.openai.azure.com`,
   * gemini `https://generativelanguage.googleapis.com/v1beta`, vertex `https://us-central1-aiplatform.googleapis.com/v1`,
   * fal the queue origin `https://queue.fal.run`,
   * replicate `https://api.replicate.com/v1`.
   */
  baseURL: string;
  /** Key sent upstream: as a bearer token, or in the vendor's own header (azure: `api-key`; gemini: `x-goog-api-key`; fal: `Authorization: Key`). */
  apiKey?: string | undefined;
  /** Upstream model name when it differs from the caller-facing one. */
  model?: string;
  /** Share of requests for the `'weighted'` routing strategy (docs/routing-and-health.md). Default 1; 0 is tried only as a fallback. */
  weight?: number;
  /** Whole-request deadline in ms. Default: `limits.upstreamTimeoutMs` (image jobs are slow). */
  timeoutMs?: number;
  /** Extra headers sent upstream (for example `X-DashScope-DataInspection`). */
  headers?: Record<string, string>;
  /** Volcengine OpenAPI credentials (route `assets` only: AK/SK-signed, not Bearer). */
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  region?: string | undefined;
  /** Azure OpenAI: the deployment named in the deployment URL form (`apiVersion` given). Default: `model`. */
  deployment?: string;
  /** Azure OpenAI: the `api-version` of the deployment URL form; without it, the v1 form `/openai/v1/...`. */
  apiVersion?: string;
  /**
   * Azure OpenAI: a Microsoft Entra ID access token, asked for each upstream call and sent as
   * `Authorization: Bearer` (instead of `apiKey`). The host owns its credentials and their cache
   * (e.g. `getBearerTokenProvider` of `@azure/identity`); the token is never stored or logged.
   */
  token?: () => string | Promise<string>;
  /** Vertex AI: the Google Cloud project id (docs/providers/gemini.md "Vertex AI"). */
  project?: string | undefined;
  /** Vertex AI: the location, as in `us-central1`. Default `global`. */
  location?: string | undefined;
  /**
   * Vertex AI: the host's function for an OAuth2 access token (for example google-auth-library's
   * `auth.getAccessToken()`), asked once per request; the token is sent as a bearer, never stored or logged.
   */
  getAccessToken?: () => string | null | undefined | Promise<string | null | undefined>;
}

/**
 * How a vendor call ended, for the vendor's bill: it made its work (`made`), may have made it
 * (`unknown`: a 5xx, a timeout or a reset after the request was written, a crash), refused before any
 * (`refused`), or its own task ended failed, which the vendor does not bill (`failed`).
 */
export type VendorOutcome = 'made' | 'unknown' | 'refused' | 'failed';

/** One upstream call of paid work (docs/tenancy-and-billing.md "The books"). */
export interface VendorAttempt {
  provider: ProviderName;
  /** Upstream text: the vendor's request, task or prediction id, to join events with the vendor's usage export. */
  id?: string;
  /** Images the vendor may bill for this call: what it answered (`made`), the most it could have made (`unknown`), 0 (`refused`). */
  images: number;
  /** Video seconds the vendor may bill for this call. */
  seconds?: number;
  outcome: VendorOutcome;
}

/** What the vendors may bill the operator for one event's work: the sum of its attempts. */
export interface VendorWork {
  images: number;
  seconds?: number;
  attempts: VendorAttempt[];
}

/**
 * Why vendor work did not reach the caller: the tenant's own acts (`client_left`, `stream_cut`,
 * `cancelled`), charged to the tenant; the vendor's or the gateway's failures (`upstream`, `gateway`),
 * the operator's cost unless `tenancy.chargeFailedWork`.
 */
export type LostBy = 'client_left' | 'stream_cut' | 'cancelled' | 'upstream' | 'gateway' | 'flagged';

/**
 * One billable outcome, for metering and billing (docs/tenancy-and-billing.md, the billing contract): one
 * per authenticated request to a named route when its answer ends, and one more per video or image task
 * when it reaches a terminal state and per kept work when it is settled. Fields report what the
 * upstream returned, not what was asked. An Idempotency-Key replay and a `Prefer: dry-run` quote emit
 * no event.
 */
export interface UsageEvent {
  /** What `verifyKey` returned: the host's own values. */
  caller: Caller;
  route: RouteName;
  /**
   * Caller text: the model name exactly as the caller sent it, any characters (a newline included).
   * Escape it (e.g. `JSON.stringify`) before writing it into a line-based log, a CSV or HTML.
   */
  model: string;
  provider?: ProviderName;
  /**
   * The model the upstream was called with, when the host's resolver named one other than `model` (a
   * host's own name for a vendor model): the price a name the `tenancy.pricing` table lacks follows.
   * @example upstreamModel: 'gpt-image-1'
   */
  upstreamModel?: string;
  /** Images returned to the caller (image routes), 0 otherwise. */
  images: number;
  /**
   * Images the upstream answered with, on image routes the gateway translates (DashScope). More than
   * `images` when the upstream returned more than the request allowed (`parameters.n`, at most the
   * family's `maxN`): the extra ones were dropped, neither downloaded nor returned.
   */
  upstreamImages?: number;
  /** HTTP status sent to the caller. */
  status: number;
  latencyMs: number;
  /** Upstream text: the upstream's request id, when it gave one. */
  upstreamRequestId?: string;
  /**
   * The `error.code` the caller got (contract §2.5), when the request was answered with an error. On
   * a task's terminal event: Ark's `error.code` of a failed task.
   */
  errorCode?: string;
  /** Bytes written to result storage for this request (`storage` option, durable results); absent when nothing was stored. */
  storedBytes?: number;
  /** Upstream text: `WxH` of each returned image, in order, when the upstream said (Ark `data[].size`, OpenAI gpt-image `size`, DashScope `usage.width`/`height`). */
  imageSizes?: string[];
  /** The upstream's own usage counters, numbers only, as it gave them (`total_tokens`, `generated_images`, ...). */
  upstreamUsage?: Record<string, number>;
  /**
   * Tokens as the upstream reported them (chat completions and responses, streamed ones from their
   * last event): `input`, `output`, and `cached` and `reasoning` where it said.
   */
  tokens?: { input: number; output: number; cached?: number; reasoning?: number };
  /**
   * Images of paid upstream work the caller did not receive: the request reached an upstream that may
   * have started generating, then failed, was cut at its deadline or lost its client. The images the
   * upstream answered when that is known, else the number asked (the most it could have made); `images`
   * is then 0, so `images + undeliveredImages` counts every image the upstream may have billed once. Bill
   * or absorb them; a retry that received kept work has no event of its own.
   */
  undeliveredImages?: number;
  /** With the `provenance` option: each answered image's C2PA status, in the order of `data` (docs/provenance.md). */
  provenance?: Array<'valid' | 'invalid' | 'absent'>;
  /** Images the vendor made that the moderation policy's output stage withheld (docs/content-safety.md); paid as `undeliveredImages` with lostBy 'flagged'. */
  flaggedImages?: number;
  /**
   * Only on the one event of a task's terminal state (video: `succeeded`, `failed`, `expired`, ...;
   * image tasks: `succeeded`, `failed`, `cancelled`), emitted once whichever instance saw it. `latencyMs`
   * is then the time since the task was created. Bill tasks on these events, not on the create request's.
   */
  task?: { id: string; /** Upstream text (the set of states is open, contract §3). */ status: string };
  /**
   * What the vendors may bill the operator for this event's work, call by call: on every event of a
   * request that reached an upstream, and on a task's terminal event. Kept apart from what the tenant
   * is charged (`images`, `undeliveredImages`, `cost`): the difference is `absorbedImages`, and work
   * kept for a retry (`keptImages`). Sum it to reconcile with the vendors' invoices.
   */
  vendorWork?: VendorWork;
  /** The size (`WxH`) of each undelivered image, as asked (else as the vendor reported it): what `cost` priced them at. */
  undeliveredSizes?: string[];
  /**
   * Images the vendor may bill that the tenant is not charged for: lost by the vendor or the gateway (a
   * 5xx after the request was written, an unknown outcome, a failed download or store, a crash), and
   * images beyond what the request asked for. The operator's cost (`tenancy.chargeFailedWork` charges
   * the lost ones to the tenant instead).
   */
  absorbedImages?: number;
  /** Why some of this event's vendor work did not reach the caller. */
  lostBy?: LostBy;
  /**
   * Images this request's vendor work made and kept for the client's retry (its client left, or was
   * answered 504 while the work went on). Not charged here: the event that delivers them to a retry
   * charges them (`images`, with `kept`), or, when nobody takes them in time, their expiry's event.
   */
  keptImages?: number;
  /** On an event that settles kept work (its delivery to a retry, or its expiry): the images that came from an earlier request's vendor work. */
  kept?: { images: number };
  /** On a succeeded task's terminal event: what Ark reports it generated. */
  video?: { seconds?: number; resolution?: string };
  /** The `quality` an image request asked for (gpt-image `low`…`max`), when it named one: prices may depend on it. */
  imageQuality?: string;
  /**
   * What this event's work cost in money, by the `tenancy.pricing` option (docs/tenancy-and-billing.md "Cost in
   * money"): images by count, size and quality, tokens the upstream reported, video seconds by
   * resolution, plus a price per request. Present on every event of a priced model, the failures that
   * cost nothing included (amount 0); absent when no pricing is set or the model has no price.
   * @example cost: { amount: 0.08, currency: 'USD' }
   */
  cost?: { amount: number; currency: string };
}

/**
 * The answer to a create sent with `Prefer: dry-run` (docs/tenancy-and-billing.md "Quotes before work"):
 * what the request would cost and take from the caller's quotas, checked as the real request would be,
 * with nothing run and nothing charged.
 * @example { object: 'quote', model: 'x-image-2.0', cost: { amount: 0.08, currency: 'USD' }, reserved: { requests: 1, images: 2, budget: { amount: 0.08, currency: 'USD' } }, budget_remaining: { amount: 24.92, currency: 'USD' } }
 */
export interface Quote {
  object: 'quote';
  /** Caller text: the model as the caller named it. */
  model: string;
  /** The most the request may cost by the `tenancy.pricing` option (what a money budget reserves); null when the model has no price. */
  cost: { amount: number; currency: string } | null;
  /** What the request would take from each of the caller's quotas that counts it; `{}` without quotas. */
  reserved: {
    requests?: number;
    images?: number;
    video_seconds?: number;
    video_tasks?: number;
    budget?: { amount: number; currency: string };
  };
  /** The money left in the caller's budget window once the request reserved its most; null when the caller has no budget. */
  budget_remaining: { amount: number; currency: string } | null;
}

/**
 * Where the gateway logs (`logger` option): pino's calling convention (`logger.warn(fields, message)`),
 * so a pino (or bunyan-style) logger is passed as it is and the fields arrive as structured fields.
 * `child`, when present, is called once with `{ component: 'express-image-gateway' }`. Never given a
 * key or image bytes. Default: `warn` and `error` as JSON lines on stderr; `false` is silent (a
 * missing level of a given logger is silent too).
 * @example logger: pino()
 */
export interface Logger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  child?(bindings: Record<string, unknown>): Logger;
}

/** What the answer reports of one image or video (docs/provenance.md "The report"). */
export interface ProvenanceReport {
  c2pa: 'valid' | 'invalid' | 'absent';
  /** The signing certificate's subject organization, else its common name. */
  signer?: string;
  claim_generator?: string;
  /** The `digitalSourceType` of the active manifest's `c2pa.created` action. */
  digital_source_type?: string;
  /** The active manifest's action names, in order. */
  actions?: string[];
  /** With trust anchors: whether the signer chains to one. */
  trusted?: boolean;
  /** On `invalid`: the C2PA validation status codes that failed. */
  codes?: string[];
}
