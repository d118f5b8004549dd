// resolveOptions(): the only place that knows defaults and shorthands (ky's Options vs
// NormalizedOptions). It checks the public options (lib/options/) once, with a GatewayConfigError that
// shows the fix, and everything else in lib/ reads the resolved, frozen options.
import type { SafetyIdentifiers } from '../security/safety-identifier.js';
import { resolveSafetyIdentifier } from './options/safety-identifier-option.js';
import { GatewayConfigError } from '../errors/config-error.js';
import { DEFAULT_IMAGE_MODELS, type ImageModelTable } from '../images/model-families.js';
import { type JobScheduler, memoryScheduler } from '../stores/scheduling/job-scheduler.js';
import { memoryTaskStore } from '../stores/tasks/memory-task-store.js';
import { redisTaskStore } from '../stores/tasks/redis-task-store.js';
import type { TaskStore } from '../stores/tasks/task-store.js';
import type { ResultStorage } from '../stores/results/result-storage.js';
import type { ResolvedStorage } from './results/durable-results.js';
import { Telemetry } from '../telemetry/telemetry.js';
import { GENAI_PROVIDER_NAMES, PROVIDER_NAMES, defaultModelRows, isVendorRow } from '../providers/registry.js';
import { type ResolvedCallbacks, resolveCallbacks } from './options/callback-options.js';
import { redisScheduler, resolveRedis } from './options/redis-option.js';
import { resolveCompressedBodies, resolveImageModels, resolveLimits } from './options/limit-options.js';
import { type ResolvedIdempotency, type ResolvedQuotas, resolveIdempotency, resolveQuotas } from './tenancy/resolve-tenancy.js';
import type { UsageEvent } from '../types.js';
import { stderrLogger } from './stderr-logger.js';
import type { AllowOptions, GatewayOptions, ModelOptions, StorageOptions, TelemetryOptions, TenancyOptions } from '../options/gateway-options.js';
import { type ResolvedImageTasks, resolveImageTasks } from './image-tasks/image-task-options.js';
import type { CompressedBodiesOptions, GatewayLimits } from '../options/request-limits.js';
import type { AuthenticatedMiddleware, ListModels, Logger, ResolveUpstream, VerifyKey } from '../options/host-hooks.js';
import { type ModelCatalogue, resolveModelCatalogue } from '../models/model-catalogue.js';
import { Pricing } from './ledger/pricing.js';
import type { LedgerPolicy } from './ledger/reckoning.js';
import { WorkBooks } from './ledger/work-books.js';
import type { UpstreamHealth } from './routing/upstream-health.js';
import { resolveRouting } from './routing/resolve-routing.js';
import { Moderation } from './moderation/moderation.js';
import { Provenance } from '../provenance/provenance-policy.js';
import { DeliveryLog } from './deliveries/delivery-log.js';
import { resolveDeliveries } from './options/delivery-options.js';
import { type ResolvedVendorWebhooks, resolveVendorWebhooks } from './options/vendor-webhook-option.js';

/**
 * The options as the code reads them: checked, defaults filled, flat. A field read from a group says
 * its public place (`allow.privateImageUrls`); docs/configuration.md "Old names" maps the old ones.
 */
export interface ResolvedOptions {
  readonly verifyKey: VerifyKey;
  readonly resolveUpstream: ResolveUpstream;
  readonly limits: Readonly<GatewayLimits>;
  /** `limits.compressedBodies`; false: compressed request bodies are refused (415). */
  readonly compressedBodies: Readonly<Required<CompressedBodiesOptions>> | false;
  readonly imageModels: ImageModelTable;
  /** The model catalogue (`models.catalogue` over the defaults, `imageModels` as its contract families): docs/models.md. */
  readonly models: ModelCatalogue;
  /** `allow.privateImageUrls` */
  readonly allowPrivateImageUrls: boolean;
  /** `allow.privateResultUrls` */
  readonly allowPrivateResultUrls: boolean;
  readonly onUsage?: (event: UsageEvent) => void;
  readonly logger: Logger;
  /** `tenancy.afterAuthentication`: the host's middleware after authentication, in order (none: empty). */
  readonly afterAuthentication: readonly AuthenticatedMiddleware[];
  /** `store`, else a Redis task store on `redis`, else in memory. */
  readonly store: TaskStore;
  /** `callbacks.scheduler`, else BullMQ on `redis`, else in memory. */
  readonly scheduler: JobScheduler;
  readonly callbacks: ResolvedCallbacks;
  /** The delivery log (`deliveries`): records every callback delivery, reads and replays them (deliveries/delivery-log.ts). */
  readonly deliveries: DeliveryLog;
  /** `vendorWebhooks`: the vendors' own calls when a task ends (vendor-webhooks/); undefined when off. */
  readonly vendorWebhooks?: ResolvedVendorWebhooks;
  /** `allow.operatorAssets` */
  readonly allowOperatorAssets: boolean;
  /** `models.list` */
  readonly listModels?: ListModels;
  /** `allow.fallthrough` */
  readonly fallthrough: boolean;
  readonly storage?: ResolvedStorage;
  readonly telemetry: Telemetry;
  /** `tenancy.quotas` */
  readonly quotas?: ResolvedQuotas;
  /** `tenancy.pricing`: costs of usage events, the reservations of money budgets. */
  readonly pricing?: Pricing;
  /** The one ledger rule's policy (ledger/reckoning.ts): who pays for lost work (`tenancy.chargeFailedWork`), and the price table. */
  readonly ledger: LedgerPolicy;
  /** The books that end paid work: a request's cost header, settlement and usage event, kept work, lapsed keys (ledger/work-books.ts). */
  readonly books: WorkBooks;
  readonly idempotency?: ResolvedIdempotency;
  /** `limits.imageTasks` */
  readonly imageTasks: ResolvedImageTasks;
  /** `tenancy.safetyIdentifier`: the tenant identifiers sent to vendors (safety-identifier-option.ts); undefined when off. */
  readonly safetyIdentifier?: SafetyIdentifiers;
  /** The upstreams' health and the routing strategy (`routing`, `onUpstreamHealth`): docs/routing-and-health.md. */
  readonly routing: UpstreamHealth;
  /** The `moderation` option at work (with `onModeration` and `onStrikeLimit`); undefined without it (docs/content-safety.md). */
  readonly moderation?: Moderation;
  /** The `provenance` option at work: per caller, what is read, trusted and signed; undefined without it (docs/provenance.md). */
  readonly provenance?: Provenance;
}

/**
 * Every option name, once: tsc fails when GatewayOptions gains an option that is missing here (or
 * this names one it does not have), so the check for unknown options cannot forget one.
 */
const OPTION_NAMES = {
  verifyKey: true,
  resolveUpstream: true,
  limits: true,
  imageModels: true,
  models: true,
  allow: true,
  onUsage: true,
  tenancy: true,
  redis: true,
  idempotency: true,
  store: true,
  callbacks: true,
  deliveries: true,
  onEndpointDisabled: true,
  vendorWebhooks: true,
  storage: true,
  routing: true,
  onUpstreamHealth: true,
  moderation: true,
  onModeration: true,
  onStrikeLimit: true,
  provenance: true,
  logger: true,
  telemetry: true,
} as const satisfies Record<keyof GatewayOptions, true>;
const KNOWN_OPTIONS = new Set(Object.keys(OPTION_NAMES));

/**
 * The options that moved when they were grouped by concern (docs/configuration.md "Old names"): an old
 * name is refused with its new place and the new form, never read.
 */
const MOVED_OPTIONS: Readonly<Record<string, { readonly to: string; readonly fix: string }>> = {
  compressedBodies: { to: 'limits.compressedBodies', fix: 'limits: { compressedBodies: true }' },
  imageTasks: { to: 'limits.imageTasks', fix: 'limits: { imageTasks: { concurrency: 16 } }' },
  listModels: { to: 'models.list', fix: "models: { list: (caller) => ['x-image-2.0'] }" },
  allowPrivateImageUrls: { to: 'allow.privateImageUrls', fix: 'allow: { privateImageUrls: true }' },
  allowPrivateResultUrls: { to: 'allow.privateResultUrls', fix: 'allow: { privateResultUrls: true }' },
  allowOperatorAssets: { to: 'allow.operatorAssets', fix: 'allow: { operatorAssets: true }' },
  fallthrough: { to: 'allow.fallthrough', fix: 'allow: { fallthrough: true }' },
  pricing: { to: 'tenancy.pricing', fix: "tenancy: { pricing: { currency: 'USD', models: { 'x-image-2.0*': { image: 0.035 } } } }" },
  quotas: { to: 'tenancy.quotas', fix: 'tenancy: { quotas: { limits: { requestsPerMinute: 60 } } }' },
  billing: { to: 'tenancy.chargeFailedWork', fix: 'tenancy: { chargeFailedWork: true }' },
  safetyIdentifier: { to: 'tenancy.safetyIdentifier', fix: 'tenancy: { safetyIdentifier: { secret: process.env.SAFETY_IDENTIFIER_SECRET } }' },
  scheduler: { to: 'callbacks.scheduler', fix: 'callbacks: { scheduler: bullmqScheduler({ connection: new Redis(process.env.REDIS_URL) }) }' },
  afterAuthentication: { to: 'tenancy.afterAuthentication', fix: 'tenancy: { afterAuthentication: [rateLimit({ keyGenerator: (req, res) => gatewayCaller(res)!.id })] }' },
};

const silent = (): void => {};

// a resolver's answer, with every provider of the registry (the fix of a missing options object or resolver)
const UPSTREAM_EXAMPLE = `({ model }) => ({ provider: ${PROVIDER_NAMES.map((name) => `'${name}'`).join(' | ')}, baseURL: 'https://…', apiKey: process.env.UPSTREAM_API_KEY })`;

export function resolveOptions(options: GatewayOptions | undefined): ResolvedOptions {
  if (options === null || typeof options !== 'object') {
    throw new GatewayConfigError(
      'options_missing',
      'createGatewayRouter needs an options object.',
      `createGatewayRouter({ verifyKey: staticKeys({ 'sk-...': { id: 'tenant-a' } }), resolveUpstream: ${UPSTREAM_EXAMPLE} })`,
    );
  }
  for (const key of Object.keys(options)) {
    const moved = Object.hasOwn(MOVED_OPTIONS, key) ? MOVED_OPTIONS[key] : undefined;
    if (moved) throw new GatewayConfigError('option_moved', `Option '${key}' is now ${moved.to}.`, moved.fix);
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
      `resolveUpstream: ${UPSTREAM_EXAMPLE}`,
    );
  }
  for (const name of ['onUsage', 'onModeration', 'onStrikeLimit', 'onEndpointDisabled'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new GatewayConfigError('option_type', `options.${name} must be a function.`, `${name}: (event) => meter.record(event)`);
    }
  }
  const models = checkGroup<ModelOptions>(options.models, 'models', MODEL_OPTION_NAMES, "models: { catalogue: [{ ...modelEntry('doubao-seedream-4-0-250828')!, id: 'x-seedream' }] }");
  if (models.list !== undefined && typeof models.list !== 'function') {
    throw new GatewayConfigError('option_type', 'options.models.list must be a function (caller) => names.', "models: { list: (caller) => ['x-image-2.0', 'x-image-edit'] }");
  }
  const allow = checkGroup<AllowOptions>(options.allow, 'allow', ALLOW_OPTION_NAMES, 'allow: { privateImageUrls: true }');
  for (const name of Object.keys(ALLOW_OPTION_NAMES) as (keyof AllowOptions)[]) {
    if (allow[name] !== undefined && typeof allow[name] !== 'boolean') {
      throw new GatewayConfigError('option_type', `options.allow.${name} must be a boolean.`, `allow: { ${name}: true }`);
    }
  }
  const tenancy = checkGroup<TenancyOptions>(options.tenancy, 'tenancy', TENANCY_OPTION_NAMES, 'tenancy: { chargeFailedWork: true }');
  if (tenancy.chargeFailedWork !== undefined && typeof tenancy.chargeFailedWork !== 'boolean') {
    throw new GatewayConfigError('option_type', 'options.tenancy.chargeFailedWork must be true or false.', 'tenancy: { chargeFailedWork: true }');
  }
  const scheduler = options.callbacks?.scheduler;
  // without a scheduler of its own, `redis` runs one on BullMQ: checked now that bullmq can be loaded
  const redis = resolveRedis(options.redis, scheduler === undefined);
  checkInterface(options.store, 'store', ['createTask', 'getTask', 'updateTask', 'putAsset', 'getAsset'], 'store: redisTaskStore({ client: new Redis(process.env.REDIS_URL) })');
  checkInterface(
    scheduler,
    'callbacks.scheduler',
    ['start', 'schedulePoll', 'scheduleDelivery', 'close'],
    'callbacks: { scheduler: bullmqScheduler({ connection: new Redis(process.env.REDIS_URL) }) }',
  );
  const limits = resolveLimits(options.limits);
  const logger = resolveLogger(options.logger);
  const imageModels = resolveImageModels(options.imageModels);
  const telemetry = resolveTelemetry(options.telemetry, logger);
  // the operator's model names label metrics as they are (telemetry/metrics.ts): a family's name
  // without its trailing `*`, and every exact name
  telemetry.reserveModelLabels((options.imageModels ?? DEFAULT_IMAGE_MODELS).map((family) => family.pattern.replace(/\*$/, '')).filter((name) => name !== ''));
  // a money budget is counted by the price table: without one it would silently count nothing
  if (tenancy.pricing === undefined && tenancy.quotas?.limits && typeof tenancy.quotas.limits === 'object' && tenancy.quotas.limits.budget !== undefined) {
    throw new GatewayConfigError(
      'quotas_budget',
      'tenancy.quotas.limits.budget needs tenancy.pricing: the budget reserves what the price table says a request may cost.',
      "tenancy: { pricing: { currency: 'USD', models: { 'x-image-2.0*': { image: 0.035 } } }, quotas: { limits: { budget: 25 } } }",
    );
  }
  const store = options.store ?? (redis ? redisTaskStore({ client: redis.client, prefix: redis.prefix }) : memoryTaskStore());
  const deliveries = resolveDeliveries(options.deliveries);
  const pricing = Pricing.resolve(tenancy.pricing);
  const ledger: LedgerPolicy = { pricing, chargeFailedWork: tenancy.chargeFailedWork ?? false };
  const resolved = {
    verifyKey: options.verifyKey,
    resolveUpstream: options.resolveUpstream,
    limits,
    compressedBodies: resolveCompressedBodies(options.limits?.compressedBodies),
    imageModels,
    // after imageModels: its families were checked there
    models: resolveModelCatalogue(models.catalogue, defaultModelRows(options.imageModels), isVendorRow),
    allowPrivateImageUrls: allow.privateImageUrls ?? false,
    allowPrivateResultUrls: allow.privateResultUrls ?? false,
    onUsage: options.onUsage,
    logger,
    afterAuthentication: resolveAfterAuthentication(tenancy.afterAuthentication),
    store,
    callbacks: resolveCallbacks(options.callbacks),
    vendorWebhooks: resolveVendorWebhooks(options.vendorWebhooks),
    allowOperatorAssets: allow.operatorAssets ?? false,
    listModels: models.list,
    fallthrough: allow.fallthrough ?? false,
    storage: resolveStorage(options.storage),
    telemetry,
    quotas: resolveQuotas(tenancy.quotas, redis),
    pricing,
    ledger,
    books: new WorkBooks(ledger, options.onUsage, logger),
    idempotency: resolveIdempotency(options.idempotency, limits, redis),
    imageTasks: resolveImageTasks(options.limits?.imageTasks),
    safetyIdentifier: resolveSafetyIdentifier(tenancy.safetyIdentifier),
    ...(options.moderation !== undefined && options.moderation !== null ? { moderation: new Moderation(options.moderation, options.onModeration, logger, options.onStrikeLimit, redis) } : {}),
    ...(options.provenance !== undefined && options.provenance !== null ? { provenance: new Provenance(options.provenance, options.storage !== undefined) } : {}),
  };
  // last: these open connections (health's subscription, BullMQ's duplicates), so an option that
  // fails its check above leaves nothing open
  const routing = resolveRouting(options.routing, options.onUpstreamHealth, logger, telemetry, redis);
  const jobs = scheduler ?? (redis ? redisScheduler(redis) : memoryScheduler());
  return Object.freeze({ ...resolved, routing, scheduler: jobs, deliveries: new DeliveryLog(deliveries, store, jobs, logger, options.onEndpointDisabled) });
}

/** The names of each group, checked against its type by tsc as OPTION_NAMES is. */
const MODEL_OPTION_NAMES = { catalogue: true, list: true } as const satisfies Record<keyof ModelOptions, true>;
const ALLOW_OPTION_NAMES = { privateImageUrls: true, privateResultUrls: true, operatorAssets: true, fallthrough: true } as const satisfies Record<keyof AllowOptions, true>;
const TENANCY_OPTION_NAMES = { pricing: true, quotas: true, chargeFailedWork: true, safetyIdentifier: true, afterAuthentication: true } as const satisfies Record<keyof TenancyOptions, true>;
/** A group option: absent is `{}`; anything but an object, or a name it lacks, is a configuration error. */
function checkGroup<T extends object>(value: T | undefined, name: string, names: Readonly<Record<keyof T, true>>, example: string): Partial<T> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const catalogue = name === 'models' && (Array.isArray(value) || typeof value === 'function');
    throw new GatewayConfigError(
      catalogue ? 'option_moved' : 'option_type',
      catalogue ? 'options.models is now { catalogue, list }: the catalogue entries (or the function of the defaults) are models.catalogue.' : `options.${name} must be an object.`,
      example,
    );
  }
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(names, key)) throw new GatewayConfigError('option_unknown', `Unknown ${name} option '${key}'.`, `use only: ${Object.keys(names).join(', ')}.`);
  }
  return value;
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
    throw new GatewayConfigError(`${name.split('.').pop()!}_type`, `options.${name} lacks ${missing.join(', ')}.`, example);
  }
}

/** One middleware or a list, as a frozen list; anything but functions is a configuration error. */
function resolveAfterAuthentication(given: TenancyOptions['afterAuthentication']): readonly AuthenticatedMiddleware[] {
  if (given === undefined) return Object.freeze([]);
  const list = typeof given === 'function' ? [given] : given;
  if (!Array.isArray(list) || list.some((middleware) => typeof middleware !== 'function')) {
    throw new GatewayConfigError(
      'option_type',
      'options.tenancy.afterAuthentication must be a middleware (req, res, next) or a list of them.',
      'tenancy: { afterAuthentication: [rateLimit({ keyGenerator: (req, res) => gatewayCaller(res)!.id })] }',
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
