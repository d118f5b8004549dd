// resolveOptions(): the only place that knows defaults and shorthands (ky's Options vs
// NormalizedOptions). It checks the public options (lib/options/) once, with a GatewayConfigError that
// shows the fix, and everything else in lib/ reads the resolved, frozen options.
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
import { type ResolvedIdempotency, type ResolvedQuotas, resolveIdempotency, resolveQuotas } from './tenancy/resolve-tenancy.js';
import type { UsageEvent } from '../types.js';
import { stderrLogger } from './stderr-logger.js';
import type { CallbackOptions, GatewayOptions, StorageOptions, TelemetryOptions } from '../options/gateway-options.js';
import { type ResolvedImageTasks, resolveImageTasks } from './image-tasks/image-task-options.js';
import type { CompressedBodiesOptions, GatewayLimits, ImageModelFamily } from '../options/request-limits.js';
import type { AuthenticatedMiddleware, ListModels, Logger, ResolveUpstream, VerifyKey } from '../options/host-hooks.js';
import { type ModelCatalogue, resolveModelCatalogue } from '../models/model-catalogue.js';
import { Pricing } from './ledger/pricing.js';
import type { LedgerPolicy } from './ledger/reckoning.js';
import type { BillingOptions } from '../options/pricing.js';

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

const DEFAULT_CALLBACKS: Readonly<Omit<ResolvedCallbacks, 'signingSecret'>> = Object.freeze({
  maxAttempts: 8,
  allowLocal: false,
  timeoutMs: 10_000,
  retryBaseMs: 2_000,
  retryMaxMs: 300_000,
  pollIntervalsMs: Object.freeze([60_000, 45_000, 30_000, 20_000, 15_000]),
  maxFollowMs: 48 * 3600_000,
  blockedHosts: Object.freeze([]),
  allowedHosts: Object.freeze([]),
  // the names of the `callbacks` object (signingSecret aside) come from here: tsc checks them against CallbackOptions
} satisfies Record<Exclude<keyof CallbackOptions, 'signingSecret'>, unknown>);

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
  /** The model catalogue (`models` over the defaults, `imageModels` as its contract families): docs/models.md. */
  readonly models: ModelCatalogue;
  readonly allowPrivateImageUrls: boolean;
  readonly allowPrivateResultUrls: boolean;
  readonly onUsage?: (event: UsageEvent) => void;
  readonly logger: Logger;
  /** The host's middleware after authentication, in order (none: empty). */
  readonly afterAuthentication: readonly AuthenticatedMiddleware[];
  readonly store: TaskStore;
  readonly scheduler: JobScheduler;
  readonly callbacks: ResolvedCallbacks;
  readonly allowOperatorAssets: boolean;
  readonly listModels?: ListModels;
  readonly fallthrough: boolean;
  readonly storage?: ResolvedStorage;
  readonly telemetry: Telemetry;
  readonly quotas?: ResolvedQuotas;
  /** The `pricing` option: costs of usage events, the reservations of money budgets. */
  readonly pricing?: Pricing;
  /** The one ledger rule's policy (ledger/reckoning.ts): who pays for lost work, and the price table. */
  readonly ledger: LedgerPolicy;
  readonly idempotency?: ResolvedIdempotency;
  readonly imageTasks: ResolvedImageTasks;
}

/**
 * Every option name, once: tsc fails when GatewayOptions gains an option that is missing here (or
 * this names one it does not have), so the check for unknown options cannot forget one.
 */
const OPTION_NAMES = {
  verifyKey: true,
  resolveUpstream: true,
  limits: true,
  compressedBodies: true,
  imageModels: true,
  models: true,
  allowPrivateImageUrls: true,
  allowPrivateResultUrls: true,
  onUsage: true,
  logger: true,
  afterAuthentication: true,
  store: true,
  scheduler: true,
  callbacks: true,
  allowOperatorAssets: true,
  listModels: true,
  fallthrough: true,
  storage: true,
  telemetry: true,
  quotas: true,
  pricing: true,
  billing: true,
  idempotency: true,
  imageTasks: true,
} as const satisfies Record<keyof GatewayOptions, true>;
const KNOWN_OPTIONS = new Set(Object.keys(OPTION_NAMES));

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
  const imageModels = resolveImageModels(options.imageModels);
  const telemetry = resolveTelemetry(options.telemetry, logger);
  // the operator's model names label metrics as they are (telemetry/metrics.ts): a family's name
  // without its trailing `*`, and every exact name
  telemetry.reserveModelLabels((options.imageModels ?? DEFAULT_IMAGE_MODELS).map((family) => family.pattern.replace(/\*$/, '')).filter((name) => name !== ''));
  // a money budget is counted by the price table: without one it would silently count nothing
  if (options.pricing === undefined && options.quotas?.limits && typeof options.quotas.limits === 'object' && options.quotas.limits.budget !== undefined) {
    throw new GatewayConfigError(
      'quotas_budget',
      'quotas.limits.budget needs the pricing option: the budget reserves what the price table says a request may cost.',
      "pricing: { currency: 'USD', models: { 'x-image-2.0*': { image: 0.035 } } }",
    );
  }
  const pricing = Pricing.resolve(options.pricing);
  return Object.freeze({
    verifyKey: options.verifyKey,
    resolveUpstream: options.resolveUpstream,
    limits,
    compressedBodies: resolveCompressedBodies(options.compressedBodies),
    imageModels,
    // after imageModels: its families were checked there
    models: resolveModelCatalogue(options.models, options.imageModels),
    allowPrivateImageUrls: options.allowPrivateImageUrls ?? false,
    allowPrivateResultUrls: options.allowPrivateResultUrls ?? false,
    onUsage: options.onUsage,
    logger,
    afterAuthentication: resolveAfterAuthentication(options.afterAuthentication),
    store: options.store ?? memoryTaskStore(),
    scheduler: options.scheduler ?? memoryScheduler(),
    callbacks: resolveCallbacks(options.callbacks),
    allowOperatorAssets: options.allowOperatorAssets ?? false,
    listModels: options.listModels,
    fallthrough: options.fallthrough ?? false,
    storage: resolveStorage(options.storage),
    telemetry,
    quotas: resolveQuotas(options.quotas),
    pricing,
    ledger: { pricing, chargeFailedWork: resolveBilling(options.billing) },
    idempotency: resolveIdempotency(options.idempotency, limits),
    imageTasks: resolveImageTasks(options.imageTasks),
  });
}

/** `billing.chargeFailedWork`, checked. */
function resolveBilling(billing: BillingOptions | undefined): boolean {
  if (billing === undefined) return false;
  if (billing === null || typeof billing !== 'object') throw new GatewayConfigError('billing_type', 'options.billing must be an object.', 'billing: { chargeFailedWork: true }');
  for (const key of Object.keys(billing)) {
    if (key !== 'chargeFailedWork') throw new GatewayConfigError('billing_unknown', `Unknown billing option '${key}'.`, 'use only: chargeFailedWork.');
  }
  if (billing.chargeFailedWork !== undefined && typeof billing.chargeFailedWork !== 'boolean') {
    throw new GatewayConfigError('billing_value', 'billing.chargeFailedWork must be true or false.', 'billing: { chargeFailedWork: true }');
  }
  return billing.chargeFailedWork ?? false;
}

/** The names of the long `storage` form, checked against StorageOptions by tsc as OPTION_NAMES is. */
const STORAGE_OPTION_NAMES = { store: true, onFailure: true, timeoutMs: true, maxVideoBytes: true } as const satisfies Record<keyof StorageOptions, true>;

function resolveStorage(storage: ResultStorage | StorageOptions | undefined): ResolvedStorage | undefined {
  if (storage === undefined) return undefined;
  const example = "storage: localResultStorage({ directory: './results', secret: process.env.RESULTS_SECRET })";
  const long = storage !== null && typeof storage === 'object' && 'store' in storage ? storage : { store: storage };
  const known = new Set(Object.keys(STORAGE_OPTION_NAMES));
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

/** The names of the `telemetry` object, checked against TelemetryOptions by tsc. */
const TELEMETRY_OPTION_NAMES = { api: true, capturePrompts: true } as const satisfies Record<keyof TelemetryOptions, true>;

function resolveTelemetry(telemetry: TelemetryOptions | false | undefined, logger: Logger): Telemetry {
  const example = "telemetry: { api: await import('@opentelemetry/api'), capturePrompts: false }";
  // the host's pipeline failing (a span processor that throws) is logged once; requests go on
  const report = (error: unknown): void => logger.error({ error: error instanceof Error ? error.message : String(error) }, 'the OpenTelemetry pipeline threw; the gateway ignores it (logged once)');
  if (telemetry === undefined || telemetry === false) return Telemetry.from(telemetry, GENAI_PROVIDER_NAMES, report);
  if (telemetry === null || typeof telemetry !== 'object') throw new GatewayConfigError('telemetry_type', 'options.telemetry must be an object or false.', example);
  for (const key of Object.keys(telemetry)) {
    if (!Object.hasOwn(TELEMETRY_OPTION_NAMES, key))
      throw new GatewayConfigError('telemetry_unknown', `Unknown telemetry option '${key}'.`, `use only: ${Object.keys(TELEMETRY_OPTION_NAMES).join(', ')}.`);
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

/** One middleware or a list, as a frozen list; anything but functions is a configuration error. */
function resolveAfterAuthentication(given: GatewayOptions['afterAuthentication']): readonly AuthenticatedMiddleware[] {
  if (given === undefined) return Object.freeze([]);
  const list = typeof given === 'function' ? [given] : given;
  if (!Array.isArray(list) || list.some((middleware) => typeof middleware !== 'function')) {
    throw new GatewayConfigError(
      'option_type',
      'options.afterAuthentication must be a middleware (req, res, next) or a list of them.',
      'afterAuthentication: [rateLimit({ keyGenerator: (req, res) => gatewayCaller(res)!.id })]',
    );
  }
  return Object.freeze([...(list as readonly AuthenticatedMiddleware[])]);
}

/**
 * The host's logger with every level present (a missing one is silent). Calls are pino's
 * `(fields, message)`; a logger written for the old `(message, fields)` order is not detected (0.1.0
 * was never published: a clean break). A logger with `child` (pino, bunyan) gets one child, so every
 * line says which component wrote it without the gateway repeating it in each call.
 */
function resolveLogger(given: Partial<Logger> | false | undefined): Logger {
  // none given: failures still reach stderr (stderr-logger.ts); `false` is the explicit silence
  if (given === undefined) return Object.freeze(stderrLogger());
  if (given === false) return Object.freeze({ info: silent, warn: silent, error: silent });
  if (given === null || typeof given !== 'object') {
    throw new GatewayConfigError('option_type', 'options.logger must be a pino-style logger object or false.', 'logger: pino(), or logger: false to write nothing');
  }
  const logger: Partial<Logger> | undefined = typeof given?.child === 'function' ? given.child({ component: 'express-image-gateway' }) : given;
  return Object.freeze({
    info: typeof logger?.info === 'function' ? logger.info.bind(logger) : silent,
    warn: typeof logger?.warn === 'function' ? logger.warn.bind(logger) : silent,
    error: typeof logger?.error === 'function' ? logger.error.bind(logger) : silent,
  });
}
