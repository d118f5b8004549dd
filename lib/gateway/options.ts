// The public Options type and resolveOptions(): the only place that knows defaults and shorthands
// (ky's Options vs NormalizedOptions). Everything else in lib/ reads the resolved, frozen options.
import { GatewayConfigError } from '../errors/config-error.js';
import { Webhook } from 'standardwebhooks';
import { DEFAULT_IMAGE_MODELS, compileImageModelTable, type ImageModelTable } from '../images/model-families.js';
import { type JobScheduler, memoryScheduler } from '../stores/scheduling/job-scheduler.js';
import { memoryTaskStore } from '../stores/tasks/memory-task-store.js';
import type { TaskStore } from '../stores/tasks/task-store.js';
import type { ResultStorage } from '../stores/results/result-storage.js';
import type { ResolvedStorage } from './durable-results.js';
import { DEFAULT_LIMITS } from '../default-limits.js';
import { Telemetry } from '../telemetry/telemetry.js';
import { GENAI_PROVIDER_NAMES } from '../providers/registry.js';
import type { TelemetryOptions } from '../telemetry/otel-api.js';
import { type IdempotencyOptions, type ResolvedIdempotency, type ResolvedQuotas, resolveIdempotency, resolveQuotas } from './tenancy/resolve-tenancy.js';
import type { QuotaOptions } from './tenancy/quota-options.js';
import type { CallbackOptions, CompressedBodiesOptions, GatewayLimits, ImageModelFamily, ListModels, Logger, ResolveUpstream, UsageEvent, VerifyKey } from '../types.js';

export interface GatewayOptions {
  /**
   * Required. Checks the bearer key of every request; return the caller or null (401).
   * @example verifyKey: staticKeys({ 'sk-tenant-a': { id: 'tenant-a' } })
   */
  verifyKey: VerifyKey;
  /**
   * Required. Names the upstream for a model; return null for a model the caller may not use (404).
   * @example resolveUpstream: ({ model }) => ({ provider: 'dashscope', baseURL: 'https://dashscope-intl.aliyuncs.com/api/v1', apiKey, model: 'qwen-image-plus' })
   */
  resolveUpstream: ResolveUpstream;
  /** Body, image and upstream limits. Each key is optional; defaults in `DEFAULT_LIMITS`. */
  limits?: Partial<GatewayLimits>;
  /**
   * Accept `Content-Encoding: gzip`, `deflate` (also `x-gzip`) or `br` on JSON routes. Default
   * false: any coding but `identity` is a 415, because the official SDKs never compress request
   * bodies and a 200-byte brotli body can inflate to 48 MB. `true` allows them under
   * `DEFAULT_COMPRESSED_BODIES` (1 MiB decoded, ratio 20). Multipart bodies are never decoded.
   * @example compressedBodies: { maxDecodedBytes: 4 * 1024 * 1024, maxRatio: 20 }
   */
  compressedBodies?: boolean | CompressedBodiesOptions;
  /** The image model families of contract §1. Default: `DEFAULT_IMAGE_MODELS` (the spec's table). */
  imageModels?: readonly ImageModelFamily[];
  /**
   * Accept reference image URLs that name loopback, private or link-local hosts. Default false:
   * such URLs get a 400 (the upstream fetches them from the public internet, contract §4.1).
   */
  allowPrivateImageUrls?: boolean;
  /**
   * Download `b64_json` result images from hosts that name or resolve to loopback, private or
   * link-local addresses. Default false: the upstream names the result URL, so it gets the callback
   * rules (public addresses only, pinned, no redirects). Set true only for a trusted upstream that
   * serves results from a private network, or for local development.
   * @example allowPrivateResultUrls: process.env.NODE_ENV !== 'production'
   */
  allowPrivateResultUrls?: boolean;
  /** Called once per finished request, for metering and billing. Errors it throws are logged, not sent. */
  onUsage?: (event: UsageEvent) => void;
  /**
   * Where the gateway logs, pino-compatible: `info/warn/error(fields, message)`, optional `child()`.
   * Default: silent. Gets every 5xx and every failed upstream attempt; never a key or image bytes.
   * @example logger: pino({ level: 'info' })
   */
  logger?: Partial<Logger>;
  /** Task and asset records (ownership, callback state). Default: `memoryTaskStore()`; `redisTaskStore` for several instances. */
  store?: TaskStore;
  /** Runs task polls and callback deliveries. Default: `memoryScheduler()`; `bullmqScheduler` for several instances. */
  scheduler?: JobScheduler;
  /** Callback delivery (contract §6): signing, retries, the polling schedule. */
  callbacks?: CallbackOptions;
  /**
   * Accept `asset://` references to assets not created through this gateway (the operator's own).
   * Another tenant's asset is refused either way. Default false.
   */
  allowOperatorAssets?: boolean;
  /**
   * The models `GET /v1/models` lists for a caller (OpenAI list shape). Default: the image-family
   * names of `imageModels` that `resolveUpstream` accepts for that caller.
   * @example listModels: (caller) => ['x-image-2.0', 'x-image-edit', { id: 'x-video', owned_by: 'ark' }]
   */
  listModels?: ListModels;
  /**
   * Let requests to paths under `/v1` and `/api/v3` that the gateway does not serve fall through to
   * the host's own routes. Default false: they get the JSON error object with 404 `not_found`, as
   * OpenAI clients expect, never Express's HTML page.
   * @example fallthrough: true // the host serves its own GET /v1/status after the gateway
   */
  fallthrough?: boolean;
  /**
   * Durable results (README "Durable results"): every result image, and a video task's video and
   * last frame, is re-hosted into this store and `url` answers the store's signed URL instead of
   * the upstream's 24-hour link. A store alone, or `{ store, onFailure, timeoutMs, maxVideoBytes }`.
   * Default: none (upstream URLs are answered as they come).
   * @example storage: localResultStorage({ directory: './results', secret: process.env.RESULTS_SECRET })
   * @example storage: { store: s3ResultStorage({ bucket: 'results', region: 'auto', endpoint }), onFailure: 'error' }
   */
  storage?: ResultStorage | StorageOptions;
  /**
   * OpenTelemetry traces and metrics through the host's `@opentelemetry/api` (README "Observability").
   * Default: on when the package is installed (with no SDK registered it records nothing), off
   * otherwise; `false` turns it off. Prompts are recorded only with `capturePrompts: true`.
   * @example telemetry: { capturePrompts: false }
   */
  telemetry?: TelemetryOptions | false;
  /**
   * Per-caller quotas in billing units: requests and images per minute, video-seconds per day,
   * concurrent video tasks, in-flight requests (README "Tenant controls"). Default: none (only
   * `limits.inFlightPerCaller`). A refusal is 429 `rate_limit_exceeded` with `Retry-After` and the
   * IETF `RateLimit-Policy` / `RateLimit` headers.
   * @example quotas: { limits: (caller) => plans[String(caller.plan)], redis: new Redis(process.env.REDIS_URL!) }
   */
  quotas?: QuotaOptions;
  /**
   * `Idempotency-Key` on the paid creates (image generations and edits, video tasks, Ark native
   * images, CreateAsset): a retry with the same key and body gets the stored answer, the upstream is
   * not called again. Default: on, keys in memory for 24 h; `false` ignores the header.
   * @example idempotency: { store: redisIdempotencyStore({ client: redis }) }
   */
  idempotency?: IdempotencyOptions | false;
}

/** `options.storage` in its long form. */
export interface StorageOptions {
  store: ResultStorage;
  /**
   * When the store fails or is slow: `'upstream_url'` (default) answers the upstream's own URL and
   * says so in `extra.storage_error` (tasks: `storage_error`); `'error'` answers 502 `storage_failed`.
   * Either way it is logged, and a video task's re-hosting is retried with backoff.
   */
  onFailure?: 'upstream_url' | 'error';
  /** Longest wait for the store to take one result (and for a video's whole transfer), ms. Default 120 000. */
  timeoutMs?: number;
  /** Largest video re-hosted, bytes (images use `limits.downloadBytes`). Default 1 GiB. */
  maxVideoBytes?: number;
}

export interface ResolvedCallbacks {
  readonly signingSecret?: string;
  readonly maxAttempts: number;
  readonly allowLocal: boolean;
  readonly timeoutMs: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly pollIntervalsMs: readonly number[];
  readonly maxFollowMs: number;
  /** Operator additions to the temporary-proxy host list, normalized (lower case, no trailing dot). */
  readonly blockedHosts: readonly string[];
  /** Hosts exempt from the temporary-proxy list, normalized. */
  readonly allowedHosts: readonly string[];
}

export const DEFAULT_CALLBACKS: Readonly<Omit<ResolvedCallbacks, 'signingSecret'>> = Object.freeze({
  maxAttempts: 8,
  allowLocal: false,
  timeoutMs: 10_000,
  retryBaseMs: 2_000,
  retryMaxMs: 300_000,
  pollIntervalsMs: Object.freeze([60_000, 45_000, 30_000, 20_000, 15_000]),
  maxFollowMs: 48 * 3600_000,
  blockedHosts: Object.freeze([]),
  allowedHosts: Object.freeze([]),
});

/** What `compressedBodies: true` means. */
const DEFAULT_COMPRESSED_BODIES: Readonly<Required<CompressedBodiesOptions>> = Object.freeze({
  maxDecodedBytes: 1024 * 1024,
  maxRatio: 20,
});

export interface ResolvedOptions {
  readonly verifyKey: VerifyKey;
  readonly resolveUpstream: ResolveUpstream;
  readonly limits: Readonly<GatewayLimits>;
  /** false: compressed request bodies are refused (415). */
  readonly compressedBodies: Readonly<Required<CompressedBodiesOptions>> | false;
  readonly imageModels: ImageModelTable;
  readonly allowPrivateImageUrls: boolean;
  readonly allowPrivateResultUrls: boolean;
  readonly onUsage?: (event: UsageEvent) => void;
  readonly logger: Logger;
  readonly store: TaskStore;
  readonly scheduler: JobScheduler;
  readonly callbacks: ResolvedCallbacks;
  readonly allowOperatorAssets: boolean;
  readonly listModels?: ListModels;
  readonly fallthrough: boolean;
  readonly storage?: ResolvedStorage;
  readonly telemetry: Telemetry;
  readonly quotas?: ResolvedQuotas;
  readonly idempotency?: ResolvedIdempotency;
}

const KNOWN_OPTIONS = new Set([
  'verifyKey',
  'resolveUpstream',
  'limits',
  'compressedBodies',
  'imageModels',
  'allowPrivateImageUrls',
  'allowPrivateResultUrls',
  'onUsage',
  'logger',
  'store',
  'scheduler',
  'callbacks',
  'allowOperatorAssets',
  'listModels',
  'fallthrough',
  'storage',
  'telemetry',
  'quotas',
  'idempotency',
]);

const silent = (): void => {};

export function resolveOptions(options: GatewayOptions | undefined): ResolvedOptions {
  if (options === null || typeof options !== 'object') {
    throw new GatewayConfigError(
      'options_missing',
      'createGatewayRouter needs an options object.',
      "createGatewayRouter({ verifyKey: staticKeys({ 'sk-...': { id: 'tenant-a' } }), resolveUpstream: ({ model }) => ({ provider: 'dashscope', baseURL, apiKey }) })",
    );
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) {
      throw new GatewayConfigError('option_unknown', `Unknown option '${key}'.`, `use only: ${[...KNOWN_OPTIONS].join(', ')}.`);
    }
  }
  if (typeof options.verifyKey !== 'function') {
    throw new GatewayConfigError(
      'verify_key_missing',
      'options.verifyKey must be a function (key, req) => Caller | null.',
      "verifyKey: staticKeys({ 'sk-tenant-a': { id: 'tenant-a' } }), or an async function that looks the key up.",
    );
  }
  if (typeof options.resolveUpstream !== 'function') {
    throw new GatewayConfigError(
      'resolve_upstream_missing',
      'options.resolveUpstream must be a function ({ model, route, caller }) => Upstream | Upstream[] | null.',
      "resolveUpstream: ({ model }) => ({ provider: 'dashscope', baseURL: 'https://dashscope-intl.aliyuncs.com/api/v1', apiKey: process.env.DASHSCOPE_API_KEY })",
    );
  }
  for (const name of ['onUsage'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new GatewayConfigError('option_type', `options.${name} must be a function.`, `${name}: (event) => meter.record(event)`);
    }
  }
  if (options.listModels !== undefined && typeof options.listModels !== 'function') {
    throw new GatewayConfigError('option_type', 'options.listModels must be a function (caller) => names.', "listModels: (caller) => ['x-image-2.0', 'x-image-edit']");
  }
  if (options.fallthrough !== undefined && typeof options.fallthrough !== 'boolean') {
    throw new GatewayConfigError('option_type', 'options.fallthrough must be a boolean.', 'fallthrough: true');
  }
  for (const name of ['allowPrivateImageUrls', 'allowPrivateResultUrls', 'allowOperatorAssets'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') {
      throw new GatewayConfigError('option_type', `options.${name} must be a boolean.`, `${name}: true`);
    }
  }
  checkInterface(options.store, 'store', ['createTask', 'getTask', 'updateTask', 'putAsset', 'getAsset'], 'store: redisTaskStore({ client: new Redis(process.env.REDIS_URL) })');
  checkInterface(options.scheduler, 'scheduler', ['start', 'schedulePoll', 'scheduleDelivery', 'close'], 'scheduler: bullmqScheduler({ connection: new Redis(process.env.REDIS_URL) })');
  const limits = resolveLimits(options.limits);
  const logger = resolveLogger(options.logger);
  return Object.freeze({
    verifyKey: options.verifyKey,
    resolveUpstream: options.resolveUpstream,
    limits,
    compressedBodies: resolveCompressedBodies(options.compressedBodies),
    imageModels: resolveImageModels(options.imageModels),
    allowPrivateImageUrls: options.allowPrivateImageUrls ?? false,
    allowPrivateResultUrls: options.allowPrivateResultUrls ?? false,
    onUsage: options.onUsage,
    logger,
    store: options.store ?? memoryTaskStore(),
    scheduler: options.scheduler ?? memoryScheduler(),
    callbacks: resolveCallbacks(options.callbacks),
    allowOperatorAssets: options.allowOperatorAssets ?? false,
    listModels: options.listModels,
    fallthrough: options.fallthrough ?? false,
    storage: resolveStorage(options.storage),
    telemetry: resolveTelemetry(options.telemetry, logger),
    quotas: resolveQuotas(options.quotas),
    idempotency: resolveIdempotency(options.idempotency, limits),
  });
}

function resolveStorage(storage: ResultStorage | StorageOptions | undefined): ResolvedStorage | undefined {
  if (storage === undefined) return undefined;
  const example = "storage: localResultStorage({ directory: './results', secret: process.env.RESULTS_SECRET })";
  const long = storage !== null && typeof storage === 'object' && 'store' in storage ? storage : { store: storage };
  const known = new Set(['store', 'onFailure', 'timeoutMs', 'maxVideoBytes']);
  for (const key of Object.keys(long)) {
    if (!known.has(key)) throw new GatewayConfigError('storage_unknown', `Unknown storage option '${key}'.`, `use only: ${[...known].join(', ')}.`);
  }
  checkInterface(long.store, 'storage', ['put', 'url', 'delete', 'deletePrefix'], example);
  if (long.store === undefined || long.store === null) throw new GatewayConfigError('storage_type', 'options.storage.store must be a ResultStorage.', example);
  if (long.onFailure !== undefined && long.onFailure !== 'upstream_url' && long.onFailure !== 'error') {
    throw new GatewayConfigError('storage_value', "storage.onFailure must be 'upstream_url' or 'error'.", "storage: { store, onFailure: 'error' }");
  }
  for (const key of ['timeoutMs', 'maxVideoBytes'] as const) {
    const value = long[key];
    if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0))
      throw new GatewayConfigError('storage_value', `storage.${key} must be a positive integer.`, 'storage: { store, timeoutMs: 120000 }');
  }
  return Object.freeze({ store: long.store, onFailure: long.onFailure ?? 'upstream_url', timeoutMs: long.timeoutMs ?? 120_000, maxVideoBytes: long.maxVideoBytes ?? 1024 * 1024 * 1024 });
}

function resolveTelemetry(telemetry: TelemetryOptions | false | undefined, logger: Logger): Telemetry {
  const example = "telemetry: { api: await import('@opentelemetry/api'), capturePrompts: false }";
  // the host's pipeline failing (a span processor that throws) is logged once; requests go on
  const report = (error: unknown): void => logger.error({ error: error instanceof Error ? error.message : String(error) }, 'the OpenTelemetry pipeline threw; the gateway ignores it (logged once)');
  if (telemetry === undefined || telemetry === false) return Telemetry.from(telemetry, GENAI_PROVIDER_NAMES, report);
  if (telemetry === null || typeof telemetry !== 'object') throw new GatewayConfigError('telemetry_type', 'options.telemetry must be an object or false.', example);
  for (const key of Object.keys(telemetry)) {
    if (key !== 'api' && key !== 'capturePrompts') throw new GatewayConfigError('telemetry_unknown', `Unknown telemetry option '${key}'.`, 'use only: api, capturePrompts.');
  }
  if (telemetry.capturePrompts !== undefined && typeof telemetry.capturePrompts !== 'boolean') {
    throw new GatewayConfigError('telemetry_value', 'telemetry.capturePrompts must be a boolean.', example);
  }
  const api = telemetry.api as Partial<Record<string, unknown>> | undefined;
  if (
    api !== undefined &&
    (typeof api !== 'object' || api === null || typeof api.trace !== 'object' || typeof api.metrics !== 'object' || typeof api.context !== 'object' || typeof api.propagation !== 'object')
  ) {
    throw new GatewayConfigError('telemetry_api', 'telemetry.api must be the @opentelemetry/api module.', example);
  }
  return Telemetry.from(telemetry, GENAI_PROVIDER_NAMES, report);
}

function checkInterface(value: unknown, name: string, methods: readonly string[], example: string): void {
  if (value === undefined) return;
  const missing = methods.filter((method) => typeof (value as Record<string, unknown> | null)?.[method] !== 'function');
  if (missing.length > 0) {
    throw new GatewayConfigError(`${name}_type`, `options.${name} lacks ${missing.join(', ')}.`, example);
  }
}

function resolveCallbacks(callbacks: CallbackOptions | undefined): ResolvedCallbacks {
  if (callbacks === undefined) return DEFAULT_CALLBACKS;
  const example = "callbacks: { signingSecret: 'whsec_…', maxAttempts: 8, pollIntervalsMs: [60000, 30000, 15000] }";
  if (callbacks === null || typeof callbacks !== 'object') throw new GatewayConfigError('callbacks_type', 'options.callbacks must be an object.', example);
  const known = new Set(['signingSecret', ...Object.keys(DEFAULT_CALLBACKS)]);
  for (const key of Object.keys(callbacks)) {
    if (!known.has(key)) throw new GatewayConfigError('callbacks_unknown', `Unknown callbacks option '${key}'.`, `use only: ${[...known].join(', ')}.`);
  }
  const resolved: { -readonly [K in keyof ResolvedCallbacks]: ResolvedCallbacks[K] } = { ...DEFAULT_CALLBACKS };
  for (const key of ['maxAttempts', 'timeoutMs', 'retryBaseMs', 'retryMaxMs', 'maxFollowMs'] as const) {
    const value = callbacks[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value <= 0) throw new GatewayConfigError('callbacks_value', `callbacks.${key} must be a positive integer.`, example);
    resolved[key] = value;
  }
  if (callbacks.allowLocal !== undefined) {
    if (typeof callbacks.allowLocal !== 'boolean')
      throw new GatewayConfigError('callbacks_value', 'callbacks.allowLocal must be a boolean.', 'callbacks: { allowLocal: true } (development and tests only)');
    resolved.allowLocal = callbacks.allowLocal;
  }
  if (callbacks.pollIntervalsMs !== undefined) {
    const intervals = callbacks.pollIntervalsMs;
    if (!Array.isArray(intervals) || intervals.length === 0 || intervals.some((ms) => !Number.isSafeInteger(ms) || ms <= 0)) {
      throw new GatewayConfigError('callbacks_value', 'callbacks.pollIntervalsMs must be a non-empty list of positive integers (ms).', example);
    }
    resolved.pollIntervalsMs = Object.freeze([...(intervals as readonly number[])]);
  }
  for (const key of ['blockedHosts', 'allowedHosts'] as const) {
    if (callbacks[key] !== undefined) resolved[key] = resolveHostList(callbacks[key], key);
  }
  if (callbacks.signingSecret !== undefined) {
    try {
      // standardwebhooks decodes the secret here; a bad one fails now rather than at the first delivery
      new Webhook(callbacks.signingSecret);
    } catch {
      throw new GatewayConfigError('callbacks_secret', 'callbacks.signingSecret is not a Standard Webhooks secret.', "signingSecret: 'whsec_' + crypto.randomBytes(24).toString('base64')");
    }
    resolved.signingSecret = callbacks.signingSecret;
  }
  return Object.freeze(resolved);
}

/**
 * A list of callback host names (contract §6.3 proxy list additions or exemptions), each matching itself
 * and its subdomains. Bare names only: a scheme, port, path or wildcard would silently match nothing.
 */
function resolveHostList(value: unknown, key: 'blockedHosts' | 'allowedHosts'): readonly string[] {
  const example =
    key === 'blockedHosts'
      ? "callbacks: { blockedHosts: ['hooks.example-tunnel.net'] } (covers its subdomains too)"
      : "callbacks: { allowedHosts: ['acme.ngrok.app'] } (your own reserved tunnel domain)";
  if (!Array.isArray(value)) throw new GatewayConfigError('callbacks_value', `callbacks.${key} must be a list of host names.`, example);
  return Object.freeze(
    value.map((entry: unknown) => {
      let host: string | undefined;
      if (typeof entry === 'string' && /^[^\s/:@?#*\\[\]]+$/.test(entry)) {
        try {
          // WHATWG parsing gives the form a callback URL's host will have (lower case, punycode)
          host = new URL(`https://${entry}/`).hostname.replace(/\.$/, '');
        } catch {
          host = undefined;
        }
      }
      if (!host || !host.includes('.')) {
        throw new GatewayConfigError(
          'callbacks_value',
          `callbacks.${key} entries must be bare host names like 'hooks.example.net' (no scheme, port, path or '*'), got ${JSON.stringify(entry)}.`,
          example,
        );
      }
      return host;
    }),
  );
}

function resolveLimits(limits: Partial<GatewayLimits> | undefined): Readonly<GatewayLimits> {
  if (limits === undefined) return DEFAULT_LIMITS;
  if (limits === null || typeof limits !== 'object') {
    throw new GatewayConfigError('limits_type', 'options.limits must be an object.', 'limits: { jsonBodyBytes: 50 * 1024 * 1024 }');
  }
  const resolved: GatewayLimits = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(limits)) {
    if (!Object.hasOwn(DEFAULT_LIMITS, key)) {
      throw new GatewayConfigError('limit_unknown', `Unknown limit '${key}'.`, `use only: ${Object.keys(DEFAULT_LIMITS).join(', ')}.`);
    }
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
      throw new GatewayConfigError('limit_value', `limits.${key} must be a positive integer, got ${String(value)}.`, `limits: { ${key}: ${DEFAULT_LIMITS[key as keyof GatewayLimits]} }`);
    }
    resolved[key as keyof GatewayLimits] = value;
  }
  return Object.freeze(resolved);
}

function resolveCompressedBodies(value: boolean | CompressedBodiesOptions | undefined): Readonly<Required<CompressedBodiesOptions>> | false {
  if (value === undefined || value === false) return false;
  if (value === true) return DEFAULT_COMPRESSED_BODIES;
  const example = 'compressedBodies: { maxDecodedBytes: 1048576, maxRatio: 20 } (or true for these defaults)';
  if (value === null || typeof value !== 'object') throw new GatewayConfigError('compressed_bodies_type', 'options.compressedBodies must be a boolean or an object.', example);
  const resolved = { ...DEFAULT_COMPRESSED_BODIES };
  for (const [key, item] of Object.entries(value)) {
    if (!Object.hasOwn(DEFAULT_COMPRESSED_BODIES, key)) {
      throw new GatewayConfigError('compressed_bodies_unknown', `Unknown compressedBodies option '${key}'.`, `use only: ${Object.keys(DEFAULT_COMPRESSED_BODIES).join(', ')}.`);
    }
    if (item === undefined) continue;
    if (typeof item !== 'number' || !Number.isSafeInteger(item) || item <= 0) {
      throw new GatewayConfigError('compressed_bodies_value', `compressedBodies.${key} must be a positive integer, got ${String(item)}.`, example);
    }
    resolved[key as keyof CompressedBodiesOptions] = item;
  }
  return Object.freeze(resolved);
}

function resolveImageModels(families: readonly ImageModelFamily[] | undefined): ImageModelTable {
  if (families === undefined) return compileImageModelTable(DEFAULT_IMAGE_MODELS);
  if (!Array.isArray(families)) {
    throw new GatewayConfigError('image_models_type', 'options.imageModels must be an array of families.', "imageModels: [{ pattern: 'x-image-2.0*', minImages: 0, maxImages: 3, maxN: 6 }]");
  }
  families.forEach((family: ImageModelFamily, index: number) => {
    const where = `options.imageModels[${index}]`;
    const example = "{ pattern: 'x-image-edit*', minImages: 1, maxImages: 3, maxN: 6 }";
    if (!family || typeof family.pattern !== 'string' || family.pattern.replace(/\*$/, '') === '') {
      throw new GatewayConfigError('image_models_pattern', `${where}.pattern must be a model name or a prefix ending in '*'.`, example);
    }
    for (const key of ['minImages', 'maxImages', 'maxN'] as const) {
      if (!Number.isSafeInteger(family[key]) || family[key] < 0) {
        throw new GatewayConfigError('image_models_number', `${where}.${key} must be a whole number >= 0.`, example);
      }
    }
    if (family.minImages > family.maxImages || family.maxN < 1) {
      throw new GatewayConfigError('image_models_range', `${where} needs minImages <= maxImages and maxN >= 1.`, example);
    }
  });
  return compileImageModelTable(families);
}

/**
 * The host's logger with every level present (a missing one is silent). Calls are pino's
 * `(fields, message)`; a logger written for the old `(message, fields)` order is not detected (0.1.0
 * was never published: a clean break). A logger with `child` (pino, bunyan) gets one child, so every
 * line says which component wrote it without the gateway repeating it in each call.
 */
function resolveLogger(given: Partial<Logger> | undefined): Logger {
  const logger: Partial<Logger> | undefined = typeof given?.child === 'function' ? given.child({ component: 'express-image-gateway' }) : given;
  return Object.freeze({
    info: typeof logger?.info === 'function' ? logger.info.bind(logger) : silent,
    warn: typeof logger?.warn === 'function' ? logger.warn.bind(logger) : silent,
    error: typeof logger?.error === 'function' ? logger.error.bind(logger) : silent,
  });
}
