// The public options of createGatewayRouter (docs/configuration.md): GatewayOptions and the option objects
// it is made of, each with its default and an example, grouped by concern (docs/configuration.md "Old
// names"). Types only; the bounds of a request are in request-limits.ts, the functions a host writes in
// host-hooks.ts, the quotas in quota-options.ts, the Idempotency-Key store in idempotency-options.ts,
// the one Redis in redis-options.ts.
// gateway/resolve-options.ts is the only place that reads them: it checks them, fills the defaults and
// widens the shorthands.
// the telemetry option's type lives with the facade that reads it: telemetry imports no option
import type { TelemetryOptions } from '../telemetry/otel-api.js';

export type { TelemetryOptions };
import type { ResultStorage } from '../stores/results/result-storage.js';
import type { TaskStore } from '../stores/tasks/task-store.js';
import type { UsageEvent } from '../types.js';
import type { AuthenticatedMiddleware, ListModels, Logger, ResolveUpstream, VerifyKey } from './host-hooks.js';
import type { CompressedBodiesOptions, GatewayLimits, ImageModelFamily } from './request-limits.js';
import type { ModelCatalogueOption } from './model-catalogue.js';
import type { PricingOptions } from './pricing.js';
import type { QuotaOptions } from './quota-options.js';
import type { IdempotencyOptions } from './idempotency-options.js';
import type { SafetyIdentifierOptions } from './safety-identifier-options.js';
import type { RoutingOptions, UpstreamHealthEvent } from './routing-options.js';
import type { DeliveryOptions, EndpointDisabledEvent } from './delivery-options.js';
import type { VendorWebhookOptions } from './vendor-webhook-options.js';
import type { ModerationEvent, ModerationOption, StrikeLimitEvent } from './moderation-options.js';
import type { SharedRedisOptions } from './redis-options.js';
import type { CallbackOptions } from './callback-options.js';
import type { ProvenanceSetting } from './provenance-options.js';

export type { CallbackOptions, TaskPollIntervals } from './callback-options.js';
// re-exported for the modules that read them from here
export type { QuotaLimits, QuotaState } from './quota-options.js';

export interface GatewayOptions {
  /**
   * Required. Checks the bearer key of every request; return the caller or null (401). No default.
   * @example verifyKey: staticKeys({ 'sk-tenant-a': { id: 'tenant-a' } })
   */
  verifyKey: VerifyKey;
  /**
   * Required. Names the upstream for a model; return null for a model the caller may not use (404). No default.
   * @example resolveUpstream: ({ model }) => ({ provider: 'dashscope', baseURL: 'https://dashscope-intl.aliyuncs.com/api/v1', apiKey, model: 'qwen-image-plus' })
   */
  resolveUpstream: ResolveUpstream;
  /**
   * What one request may hold and how long it may take, what compressed bodies may decode to, and
   * how many asynchronous image tasks run and wait. Each key is optional; defaults in `DEFAULT_LIMITS`,
   * `limits.compressedBodies` off, `imageTasks` as ImageTaskOptions says.
   * @example limits: { jsonBodyBytes: 64 * 1024 * 1024, compressedBodies: true, imageTasks: { concurrency: 16 } }
   */
  limits?: LimitOptions;
  /**
   * The image model families of contract §1. Default: `DEFAULT_IMAGE_MODELS` (the spec's table).
   * @example imageModels: [...DEFAULT_IMAGE_MODELS, { pattern: 'my-image-*', minImages: 0, maxImages: 2, maxN: 4 }]
   */
  imageModels?: readonly ImageModelFamily[];
  /**
   * The model catalogue and the names `GET /v1/models` lists (docs/models.md). Default: the catalogue
   * `DEFAULT_MODEL_CATALOGUE`, listed as the resolver routes it.
   * @example models: { catalogue: [{ ...modelEntry('doubao-seedream-4-0-250828')!, id: 'x-seedream' }], list: (caller) => ['x-image-2.0', 'x-seedream'] }
   */
  models?: ModelOptions;
  /**
   * What the gateway refuses by default and may let through (docs/security.md): caller image URLs and
   * upstream result URLs on private networks, `asset://` references to the operator's own assets, and
   * requests to paths it does not serve. Every key defaults to false. Callback targets on private
   * networks are `callbacks.allowLocal`.
   * @example allow: { privateImageUrls: process.env.NODE_ENV !== 'production', privateResultUrls: process.env.NODE_ENV !== 'production' }
   */
  allow?: AllowOptions;
  /**
   * The usage events, for metering and billing (docs/tenancy-and-billing.md "Billing contract"): one per
   * authenticated request to a named route when its answer ends (none for an `Idempotency-Key` replay
   * or a `Prefer: dry-run` quote), and one more when a video or image task reaches its terminal state
   * or kept work is settled. Errors it throws are logged, not sent. Default: none.
   * @example onUsage: (event) => meter.record(event.caller.id, event.route, event.images)
   */
  onUsage?: (event: UsageEvent) => void;
  /**
   * What each tenant pays and may use, and how vendors see it (docs/tenancy-and-billing.md): prices,
   * quotas and budgets, who pays for lost work, the tenant identifier sent to vendors. Default: no
   * prices, no quotas, lost work absorbed by the operator, no identifier sent.
   * @example tenancy: { pricing: { currency: 'USD', models: { 'x-image-2.0*': { image: 0.035 } } }, quotas: { limits: { imagesPerMinute: 40, budget: 25 } } }
   */
  tenancy?: TenancyOptions;
  /**
   * One Redis for several instances (docs/deployment.md "Several instances"): one connected ioredis
   * client, never closed by the gateway, and one key prefix, used by every concern that keeps shared
   * state unless it is given its own: task records (`store`), Idempotency-Keys (`idempotency.store`),
   * quota counters (`tenancy.quotas.redis`), upstream health (`routing.store`), strikes
   * (`moderation.redis`) and the task scheduler (`callbacks.scheduler`, BullMQ: install `bullmq`).
   * Default: none, everything in this process's memory.
   * @example redis: { client: new Redis(process.env.REDIS_URL!) }
   */
  redis?: SharedRedisOptions;
  /**
   * `Idempotency-Key` on the paid creates (image generations and edits, video tasks, Ark native
   * images, CreateAsset): a retry with the same key and body gets the stored answer, the upstream is
   * not called again. Default: on, keys for 24 h in `redis` when given, else in memory; `false` ignores the header.
   * @example idempotency: { ttlSeconds: 3600 }
   */
  idempotency?: IdempotencyOptions | false;
  /**
   * Task and asset records (ownership, callback state). Default: `redisTaskStore` on `redis` when given, else `memoryTaskStore()`.
   * @example store: memoryTaskStore({ maxTasks: 50_000 })
   */
  store?: TaskStore;
  /**
   * Callback delivery (contract §6): signing, retries, the polling schedule, and the scheduler that runs
   * polls and deliveries. Default: `DEFAULT_CALLBACKS`, unsigned, BullMQ on `redis` when given, else `memoryScheduler()`.
   * @example callbacks: { signingSecret: process.env.WEBHOOK_SECRET, maxAttempts: 8 }
   */
  callbacks?: CallbackOptions;
  /**
   * The delivery log (docs/video-tasks-and-callbacks.md "Delivery log"): every callback delivery and
   * its attempts, kept `retentionDays` in the task store, read and replayed by the operator
   * (`gateway.deliveries`) and by each tenant for its own (`/v1/deliveries`). Default: on, 7 days,
   * 10,000 deliveries in memory; `false` turns it off.
   * @example deliveries: { retentionDays: 14 }
   */
  deliveries?: DeliveryOptions | false;
  /**
   * Told once when a tenant's callback endpoint is disabled (`deliveries.disableAfter`), whichever
   * instance saw it fail: its URL without the query string, the tenant, why and when
   * (docs/video-tasks-and-callbacks.md "Endpoints that heal"). What it throws or rejects with is
   * logged. Default: none.
   * @example onEndpointDisabled: (event) => support.notify(event.tenant, `callbacks to ${event.url} are paused`)
   */
  onEndpointDisabled?: (event: EndpointDisabledEvent) => void | Promise<void>;
  /**
   * Vendor webhooks (docs/video-tasks-and-callbacks.md "Vendor webhooks"): the vendors that can call
   * back (Replicate, fal, Ark) are asked to call the gateway's own route when a task ends, so its
   * callback goes out without waiting for the next poll; polls go on, slower, as the fallback.
   * Default: none (polling only).
   * @example vendorWebhooks: { publicBaseUrl: 'https://gw.example.com/ai', secret: process.env.VENDOR_WEBHOOK_SECRET! }
   */
  vendorWebhooks?: VendorWebhookOptions;
  /**
   * Durable results (docs/durable-results.md): every result image, and a video task's video and
   * last frame, is re-hosted into this store and `url` answers the store's signed URL instead of
   * the upstream's 24-hour link. A store alone, or `{ store, onFailure, timeoutMs, maxVideoBytes }`.
   * Default: none (upstream URLs are answered as they come).
   * @example storage: localResultStorage({ directory: './results', secret: process.env.RESULTS_SECRET })
   * @example storage: { store: s3ResultStorage({ bucket: 'results', region: 'auto', endpoint }), onFailure: 'error' }
   */
  storage?: ResultStorage | StorageOptions;
  /** Health-aware routing among a resolver's upstreams, and their circuit breaker (docs/routing-and-health.md). Default `{ strategy: 'ordered' }`, breaker on, health shared on `redis` when given. @example routing: { strategy: 'weighted' } */
  routing?: RoutingOptions;
  /** Hears each state change of an upstream on this instance (docs/routing-and-health.md "Operator signals"). Errors it throws are logged. Default: none. @example onUpstreamHealth: (event) => pager.notify(event) */
  onUpstreamHealth?: (event: UpstreamHealthEvent) => void;
  /** Content checks per tenant on every image route (docs/content-safety.md); default none. @example moderation: { check: openAIModeration({ apiKey: process.env.OPENAI_API_KEY! }), outputImages: true } */
  moderation?: ModerationOption;
  /** One audit event per moderation verdict (docs/content-safety.md "Audit"); no prompt or image unless `moderation.auditContent`. @example onModeration: (event) => audit.write(event) */
  onModeration?: (event: ModerationEvent) => void;
  /**
   * Told once when a tenant reaches its moderation policy's `maxStrikes` (docs/content-safety.md
   * "Strikes"); the event's `clear()` lifts the suspension. One hook for every policy. Errors it throws
   * are logged. Default: none.
   * @example onStrikeLimit: (event) => support.openCase(event.caller.id, event.strikes)
   */
  onStrikeLimit?: (event: StrikeLimitEvent) => void | Promise<void>;
  /**
   * C2PA Content Credentials (docs/provenance.md): each image's and video's manifest read, checked and
   * reported (`data[i].provenance`), and, for the callers whose options say `sign`, the images signed
   * with the operator's certificate. A function chooses per caller (`null`: nothing for that caller).
   * Needs the optional peer dependencies `@contentauth/c2pa-wasm` and `cborg`. Default: off.
   * @example provenance: { trustAnchors: readFileSync('c2pa-anchors.pem', 'utf8') }
   */
  provenance?: ProvenanceSetting;
  /**
   * Where the gateway logs, pino-compatible: `info/warn/error(fields, message)`, optional `child()`.
   * Gets every 5xx (with its `requestId`), hooks that throw, failed upstream attempts, polls and
   * callbacks given up; never a key or image bytes. Default: `warn` and `error` as one JSON line each
   * on stderr (`info` quiet); `false` writes nothing.
   * @example logger: pino({ level: 'info' })
   * @example logger: false
   */
  logger?: Partial<Logger> | false;
  /**
   * OpenTelemetry traces and metrics through the host's `@opentelemetry/api` (docs/observability.md).
   * Default: on when the package is installed (with no SDK registered it records nothing), off
   * otherwise; `false` turns it off. Prompts are recorded only with `capturePrompts: true`.
   * @example telemetry: { capturePrompts: false }
   */
  telemetry?: TelemetryOptions | false;
}
/**
 * The `limits` option (docs/configuration.md "limits"): the bounds of one request (each a positive
 * integer over `DEFAULT_LIMITS`), compressed request bodies, and the asynchronous image task queue.
 * @example limits: { jsonBodyBytes: 64 * 1024 * 1024, upstreamTimeoutMs: 600_000, compressedBodies: { maxDecodedBytes: 4 * 1024 * 1024 } }
 */
export interface LimitOptions extends Partial<GatewayLimits> {
  /**
   * Accept `Content-Encoding: gzip`, `deflate` (also `x-gzip`) or `br` on JSON routes. Default
   * false: any coding but `identity` is a 415, because the official SDKs never compress request
   * bodies and a 200-byte brotli body can inflate to 48 MB. `true` allows them under
   * `DEFAULT_COMPRESSED_BODIES` (1 MiB decoded, ratio 20). Multipart bodies are never decoded.
   * @example compressedBodies: { maxDecodedBytes: 4 * 1024 * 1024, maxRatio: 20 }
   */
  compressedBodies?: boolean | CompressedBodiesOptions;
  /**
   * Asynchronous image tasks (`Prefer: respond-async`, `POST /v1/images/generations/async`,
   * docs/image-tasks.md): how long tasks are kept, how many run at once and how many may wait.
   * Default: ImageTaskOptions' defaults (32 at once, kept 24 h).
   * @example imageTasks: { concurrency: 16, keepSeconds: 3600 }
   */
  imageTasks?: ImageTaskOptions;
}
/**
 * The `models` option (docs/models.md): the catalogue validation and `GET /v1/models` read, and the
 * names that route lists per caller. Each key is optional.
 * @example models: { catalogue: (defaults) => defaults.filter((entry) => entry.provider !== 'openai') }
 */
export interface ModelOptions {
  /**
   * The model catalogue: per caller-facing model, its endpoints and how each is served, its
   * parameters, the ones refused, its limits, whether it streams. A list adds entries (same id:
   * replaces a default); a function returns the whole catalogue. Default: `DEFAULT_MODEL_CATALOGUE`
   * (the contract's families, then today's vendor models under their vendor names).
   * @example catalogue: [{ ...modelEntry('doubao-seedream-4-0-250828')!, id: 'x-seedream' }]
   */
  catalogue?: ModelCatalogueOption;
  /**
   * The models `GET /v1/models` lists for a caller (OpenAI list shape), instead of the catalogue's:
   * each described by the row it follows, and a name no row describes listed on the endpoints whose
   * routes `resolveUpstream` sends it to (docs/models.md "GET /v1/models").
   * Default: the catalogue entries `resolveUpstream` routes for that caller.
   * @example list: (caller) => ['x-image-2.0', 'x-image-edit', { id: 'x-video', owned_by: 'ark' }]
   */
  list?: ListModels;
}
/**
 * The `allow` option (docs/security.md): what the gateway refuses by default. Every key is a boolean,
 * default false. Callback targets on loopback or private hosts are `callbacks.allowLocal`.
 * @example allow: { privateImageUrls: true, privateResultUrls: true } // local development
 */
export interface AllowOptions {
  /**
   * Accept image and media URLs from callers that name loopback, private or link-local hosts.
   * Default false: such URLs get a 400 (the upstream fetches them from the public internet, contract §4.1).
   * @example privateImageUrls: process.env.NODE_ENV !== 'production'
   */
  privateImageUrls?: boolean;
  /**
   * Download result images (for `b64_json` and `storage`) from hosts that name or resolve to
   * loopback, private or link-local addresses. Default false: the upstream names the result URL, so
   * it gets the callback rules (public addresses only, pinned, no redirects). Set true only for a
   * trusted upstream that serves results from a private network, or for local development.
   * @example privateResultUrls: process.env.NODE_ENV !== 'production'
   */
  privateResultUrls?: boolean;
  /**
   * Accept `asset://` references to assets not created through this gateway (the operator's own).
   * Another tenant's asset is refused either way. Default false.
   * @example operatorAssets: true
   */
  operatorAssets?: boolean;
  /**
   * Let requests to paths under `/v1` and `/api/v3` that the gateway does not serve fall through to
   * the host's own routes. Default false: they get the JSON error object with 404 `not_found`, as
   * OpenAI clients expect, never Express's HTML page.
   * @example fallthrough: true // the host serves its own GET /v1/status after the gateway
   */
  fallthrough?: boolean;
}
/**
 * The `tenancy` option (docs/tenancy-and-billing.md): what a tenant's work costs, the quotas and
 * budgets it is held to, who pays for work lost on the way, and the identifier vendors see for it.
 * Each key is optional.
 * @example tenancy: { pricing: { currency: 'USD', models: { 'x-image-2.0*': { image: 0.035 } } }, quotas: { limits: { budget: 25 } }, chargeFailedWork: true }
 */
export interface TenancyOptions {
  /**
   * Cost in money (docs/tenancy-and-billing.md "Cost in money"): a price table per model, or a function
   * of the usage event. Every usage event of a priced model carries `cost: { amount, currency }`, and
   * the quota limit `budget` reserves the most a request may cost and settles to what it did.
   * Default: none (no costs).
   * @example pricing: { currency: 'USD', models: { 'x-image-2.0*': { image: 0.035 }, 'x-video': { videoSecond: 0.05 } } }
   */
  pricing?: PricingOptions;
  /**
   * Per-caller quotas in billing units: requests and images per minute, video-seconds per day,
   * concurrent video tasks, in-flight requests, money (docs/tenancy-and-billing.md "Quotas"). Default:
   * none (only `limits.inFlightPerCaller`). A refusal is 429 `rate_limit_exceeded` with `Retry-After`
   * and the IETF `RateLimit-Policy` / `RateLimit` headers.
   * @example quotas: { limits: (caller) => plans[String(caller.plan)], redis: new Redis(process.env.REDIS_URL!) }
   */
  quotas?: QuotaOptions;
  /**
   * Who pays for work lost on the way (docs/tenancy-and-billing.md "The books"). The tenant always pays
   * for what it received and for what it lost by its own act (it left, cut a stream, cancelled running
   * work). Work the vendor or the gateway lost (a 5xx after the request was written, an unknown
   * outcome, a failed download or store, a crash) is the operator's cost by default, reported as
   * `absorbedImages`; `true` charges it to the tenant as `undeliveredImages`. Default false.
   * @example chargeFailedWork: true
   */
  chargeFailedWork?: boolean;
  /**
   * The tenant identifier sent to vendors (docs/security.md "Tenant identifier sent to vendors"): an
   * HMAC of the caller's id under a secret. Default: off.
   * @example safetyIdentifier: { secret: process.env.SAFETY_IDENTIFIER_SECRET! }
   */
  safetyIdentifier?: SafetyIdentifierOptions | false;
  /**
   * The host's own middleware for each tenant's gateway requests, once the caller is known (its rate
   * limiter, an audit log, a plan check): runs on every gateway route after `verifyKey` accepted the
   * key and before the body is read; `gatewayCaller(res)` is the caller. An error it passes to `next`
   * (or throws, or rejects with) is answered in the gateway's error shape: a `GatewayError` as it is,
   * an error with `status` 401, 403, 404 or 429 (http-errors) with that status. Default: none.
   * @example afterAuthentication: [rateLimit({ keyGenerator: (req, res) => gatewayCaller(res)!.id, handler: (req, res, next) => next(GatewayError.rateLimited('Too many requests', 60)) })]
   */
  afterAuthentication?: AuthenticatedMiddleware | readonly AuthenticatedMiddleware[];
}

/**
 * Asynchronous image tasks (docs/image-tasks.md). Every field has a default.
 * @example limits: { imageTasks: { concurrency: 16, perCallerConcurrency: 4, maxQueuedPerCaller: 200 } }
 */
export interface ImageTaskOptions {
  /** Seconds a task is kept after it was created; then its id answers 404. Default 86 400 (24 h). @example keepSeconds: 3600 */
  keepSeconds?: number;
  /** Image tasks calling their upstream at once, in this process. Default 32. @example concurrency: 16 */
  concurrency?: number;
  /** Of those, the most one caller may hold, so one tenant's burst never takes every slot. Default half of `concurrency` (at least 1). @example perCallerConcurrency: 4 */
  perCallerConcurrency?: number;
  /** Tasks waiting for a slot in this process; a submit past it answers 503. Default 10 000. @example maxQueued: 2000 */
  maxQueued?: number;
  /** Tasks one caller may have waiting; a submit past it answers 429. Default 1 000. @example maxQueuedPerCaller: 100 */
  maxQueuedPerCaller?: number;
  /** Seconds a task may wait for a slot; a task still waiting then ends `failed` (task_interrupted), its charge refunded. Default 600. @example maxQueueSeconds: 300 */
  maxQueueSeconds?: number;
  /** The largest `wait` of `Prefer: respond-async, wait=N` honoured, seconds. Default 60. @example maxWaitSeconds: 30 */
  maxWaitSeconds?: number;
  /**
   * Seconds an upstream's own result URL is trusted to live, for tasks without durable `storage`:
   * a succeeded task reads `expired` after it. Default 3 600 (the shortest vendor lifetime: OpenAI's hour).
   * @example upstreamUrlSeconds: 86400
   */
  upstreamUrlSeconds?: number;
  /**
   * Seconds of the lease an instance holds on each task it has queued or is running, renewed every
   * third of it: a task whose instance stopped (a crash, a SIGKILL) is ended by another instance
   * about one lease later, `failed` with `task_interrupted`, instead of at its deadline
   * (docs/image-tasks.md "Restarts and several instances"). Default 30. @example leaseSeconds: 20
   */
  leaseSeconds?: number;
}

/**
 * `options.storage` in its long form (docs/durable-results.md).
 * @example storage: { store: s3ResultStorage({ bucket: 'results', region: 'auto', endpoint }), onFailure: 'error', timeoutMs: 60_000 }
 */
export interface StorageOptions {
  /** Where results are re-hosted. Required in the long form; no default. @example store: localResultStorage({ directory: './results', secret }) */
  store: ResultStorage;
  /**
   * When the store fails or is slow: `'upstream_url'` (default) answers the upstream's own URL and
   * says so in `extra.storage_error` (tasks: `storage_error`); `'error'` answers 502 `storage_failed`.
   * Either way it is logged, and a video task's re-hosting is retried with backoff.
   * @example onFailure: 'error'
   */
  onFailure?: 'upstream_url' | 'error';
  /** Longest wait for the store to take one result (and for a video's whole transfer), ms. Default 120 000. @example timeoutMs: 60_000 */
  timeoutMs?: number;
  /** Largest video re-hosted, bytes (images use `limits.downloadBytes`). Default 1 GiB. @example maxVideoBytes: 2 * 1024 * 1024 * 1024 */
  maxVideoBytes?: number;
}
