// The `tenancy.quotas` and `idempotency` options checked and defaulted, for resolveOptions() (options.ts):
// config errors are GatewayConfigError with a fix example. Given no Redis of their own, both use the
// `redis` option's client under its prefix (docs/configuration.md "redis").
import { GatewayConfigError } from '../../errors/config-error.js';
import type { GatewayLimits } from '../../options/request-limits.js';
import { type IdempotencyStore, memoryIdempotencyStore, redisIdempotencyStore } from '../../stores/idempotency/idempotency-store.js';
import { DEFAULT_REDIS_PREFIX, REDIS_NAMESPACES, type ResolvedRedis } from '../options/redis-option.js';
import { type LeaseTerms, leaseTerms } from '../leases/lease-terms.js';
import type { IdempotencyOptions } from '../../options/idempotency-options.js';
import type { QuotaLimits, QuotaLimitsFor, QuotaOptions, QuotaRedisClient } from '../../options/quota-options.js';

export interface ResolvedQuotas {
  readonly limits: QuotaLimitsFor;
  readonly redis?: QuotaRedisClient;
  readonly prefix: string;
  readonly whenRedisDown: 'refuse' | 'allow';
  readonly defaultVideoSeconds: number;
  readonly budgetWindowSeconds: number;
}

export interface ResolvedIdempotency {
  readonly store: IdempotencyStore;
  readonly ttlMs: number;
  /** How long a running request holds its key: longer than any request can run, so a crashed instance frees it. */
  readonly runningTtlMs: number;
  readonly maxAnswerBytes: number;
  /** How long an abandoned request's answer is kept for its retry; undefined keeps none. */
  readonly keptAnswerMs?: number;
  /** How long kept work may go on after its client left or its deadline passed. */
  readonly keptWorkMs: number;
  /** The lease a running request holds on its key, with a store that keeps leases (leases/lease-terms.ts). */
  readonly lease: LeaseTerms;
}

const QUOTA_EXAMPLE = 'tenancy: { quotas: { limits: { requestsPerMinute: 60, imagesPerMinute: 20, videoSecondsPerDay: 600, concurrentVideoTasks: 2 } } }';
/** Every quota limit name, once: tsc fails when QuotaLimits gains a limit that is missing here. */
const QUOTA_LIMIT_NAMES = { requestsPerMinute: true, imagesPerMinute: true, videoSecondsPerDay: true, concurrentVideoTasks: true, inFlight: true, budget: true } as const satisfies Record<
  keyof QuotaLimits,
  true
>;
const LIMIT_KEYS = Object.keys(QUOTA_LIMIT_NAMES) as ReadonlyArray<keyof QuotaLimits>;
/** The names of the `tenancy.quotas` and `idempotency` objects, checked against their types by tsc. */
const QUOTA_OPTION_NAMES = { limits: true, redis: true, prefix: true, whenRedisDown: true, defaultVideoSeconds: true, budgetWindowSeconds: true } as const satisfies Record<keyof QuotaOptions, true>;
const IDEMPOTENCY_OPTION_NAMES = { store: true, ttlSeconds: true, maxAnswerBytes: true, keptAnswerSeconds: true, keptWorkSeconds: true, leaseSeconds: true } as const satisfies Record<
  keyof IdempotencyOptions,
  true
>;

/** `shared`: the `redis` option, whose client and prefix the counters use unless `redis` and `prefix` are given here. */
export function resolveQuotas(value: QuotaOptions | undefined, shared?: ResolvedRedis): ResolvedQuotas | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object') throw new GatewayConfigError('quotas_type', 'options.tenancy.quotas must be an object.', QUOTA_EXAMPLE);
  const known = new Set(Object.keys(QUOTA_OPTION_NAMES));
  for (const key of Object.keys(value)) {
    if (!known.has(key)) throw new GatewayConfigError('quotas_unknown', `Unknown tenancy.quotas option '${key}'.`, `use only: ${[...known].join(', ')}.`);
  }
  if (typeof value.limits !== 'function') checkQuotaLimits(value.limits, 'tenancy.quotas.limits');
  if (value.redis !== undefined && (value.redis === null || typeof (value.redis as { eval?: unknown }).eval !== 'function')) {
    throw new GatewayConfigError('quotas_redis', 'tenancy.quotas.redis must be an ioredis client.', 'tenancy: { quotas: { limits, redis: new Redis(process.env.REDIS_URL!) } }');
  }
  if (value.whenRedisDown !== undefined && value.whenRedisDown !== 'refuse' && value.whenRedisDown !== 'allow') {
    throw new GatewayConfigError('quotas_value', "tenancy.quotas.whenRedisDown must be 'refuse' or 'allow'.", "tenancy: { quotas: { limits, redis, whenRedisDown: 'allow' } }");
  }
  if (value.prefix !== undefined && (typeof value.prefix !== 'string' || value.prefix === '')) {
    throw new GatewayConfigError('quotas_value', 'tenancy.quotas.prefix must be a non-empty string.', "tenancy: { quotas: { limits, redis, prefix: 'myapp:quota:' } }");
  }
  const defaultVideoSeconds = value.defaultVideoSeconds ?? 5;
  if (!Number.isSafeInteger(defaultVideoSeconds) || defaultVideoSeconds <= 0) {
    throw new GatewayConfigError('quotas_value', 'tenancy.quotas.defaultVideoSeconds must be a positive integer.', 'tenancy: { quotas: { limits, defaultVideoSeconds: 5 } }');
  }
  const budgetWindowSeconds = value.budgetWindowSeconds ?? 86_400;
  // the memory counters expire by setTimeout, which cannot wait more than 24.8 days (quotas.ts)
  if (!Number.isSafeInteger(budgetWindowSeconds) || budgetWindowSeconds <= 0 || budgetWindowSeconds > 24 * 86_400) {
    throw new GatewayConfigError(
      'quotas_value',
      'tenancy.quotas.budgetWindowSeconds must be a positive integer of at most 24 days (2073600).',
      'tenancy: { quotas: { limits: { budget: 25 }, budgetWindowSeconds: 86400 } }',
    );
  }
  const redis = value.redis ?? shared?.client;
  return Object.freeze({
    budgetWindowSeconds,
    limits: typeof value.limits === 'function' ? value.limits : Object.freeze({ ...value.limits }),
    ...(redis ? { redis } : {}),
    prefix: value.prefix ?? `${shared?.prefix ?? DEFAULT_REDIS_PREFIX}${REDIS_NAMESPACES.quotas}`,
    whenRedisDown: value.whenRedisDown ?? 'refuse',
    defaultVideoSeconds,
  });
}

/** Throws a GatewayConfigError naming a limit that is not one, or not a positive integer (also for what a `limits` function returns). */
export function checkQuotaLimits(limits: unknown, where: string): void {
  if (limits === null || typeof limits !== 'object') throw new GatewayConfigError('quotas_limits', `${where} must be an object or a function (caller) => limits.`, QUOTA_EXAMPLE);
  for (const [key, item] of Object.entries(limits)) {
    if (!LIMIT_KEYS.includes(key as keyof QuotaLimits)) throw new GatewayConfigError('quotas_limits', `Unknown limit '${key}' in ${where}.`, `use only: ${LIMIT_KEYS.join(', ')}.`);
    // a budget is money: any positive amount; every other limit counts whole units
    if (key === 'budget' && item !== undefined && (typeof item !== 'number' || !Number.isFinite(item) || item <= 0)) {
      throw new GatewayConfigError(
        'quotas_limits',
        `${where}.budget must be a positive amount of money, got ${String(item)}.`,
        'tenancy: { quotas: { limits: { budget: 25 } } } (with tenancy.pricing)',
      );
    }
    if (key !== 'budget' && item !== undefined && (typeof item !== 'number' || !Number.isSafeInteger(item) || item <= 0)) {
      throw new GatewayConfigError('quotas_limits', `${where}.${key} must be a positive integer, got ${String(item)}.`, QUOTA_EXAMPLE);
    }
  }
}

/** `shared`: the `redis` option, where the keys live unless `store` is given. */
export function resolveIdempotency(value: IdempotencyOptions | false | undefined, limits: Readonly<GatewayLimits>, shared?: ResolvedRedis): ResolvedIdempotency | undefined {
  if (value === false) return undefined;
  const example = 'idempotency: { store: redisIdempotencyStore({ client: redis }), ttlSeconds: 86400, maxAnswerBytes: 1048576 } (or false)';
  const given = value ?? {};
  if (given === null || typeof given !== 'object') throw new GatewayConfigError('idempotency_type', 'options.idempotency must be an object or false.', example);
  const known = new Set(Object.keys(IDEMPOTENCY_OPTION_NAMES));
  for (const key of Object.keys(given)) {
    if (!known.has(key)) throw new GatewayConfigError('idempotency_unknown', `Unknown idempotency option '${key}'.`, `use only: ${[...known].join(', ')}.`);
  }
  for (const key of ['ttlSeconds', 'maxAnswerBytes', 'keptWorkSeconds', 'leaseSeconds'] as const) {
    const item = given[key];
    if (item !== undefined && (!Number.isSafeInteger(item) || item <= 0)) throw new GatewayConfigError('idempotency_value', `idempotency.${key} must be a positive integer.`, example);
  }
  const kept = given.keptAnswerSeconds;
  if (kept !== undefined && kept !== false && (!Number.isSafeInteger(kept) || kept <= 0)) {
    throw new GatewayConfigError('idempotency_value', 'idempotency.keptAnswerSeconds must be a positive integer or false.', 'idempotency: { keptAnswerSeconds: 600 }');
  }
  const store = given.store ?? (shared ? redisIdempotencyStore({ client: shared.client, prefix: `${shared.prefix}${REDIS_NAMESPACES.idempotency}` }) : memoryIdempotencyStore());
  if (['begin', 'finish', 'release'].some((method) => typeof (store as unknown as Record<string, unknown>)[method] !== 'function')) {
    throw new GatewayConfigError('idempotency_store', 'idempotency.store must have begin, finish and release.', example);
  }
  return Object.freeze({
    store,
    ttlMs: (given.ttlSeconds ?? 86_400) * 1000,
    // body already read; the upstream calls, the result downloads and a minute of slack
    runningTtlMs: limits.upstreamTimeoutMs + limits.downloadTimeoutMs + 60_000,
    maxAnswerBytes: given.maxAnswerBytes ?? 1024 * 1024,
    ...(kept === false ? {} : { keptAnswerMs: (kept ?? 600) * 1000 }),
    keptWorkMs: given.keptWorkSeconds !== undefined ? given.keptWorkSeconds * 1000 : limits.upstreamTimeoutMs + limits.downloadTimeoutMs + 60_000,
    lease: leaseTerms(given.leaseSeconds ?? 30),
  });
}
