// The `redis` option resolved (docs/configuration.md "redis"): the one client and the one prefix, checked
// once with a fix, and what each concern builds on them when it is given nothing of its own. Each
// concern keeps its own namespace under the prefix, so the default prefix `gw:` writes the keys the
// per-concern stores always wrote (`gw:task:`, `gw:idem:`, `gw:quota:`, `gw:health:`, `gw:strikes:`).
import { GatewayConfigError } from '../../errors/config-error.js';
import type { SharedRedisClient, SharedRedisOptions } from '../../options/redis-options.js';
import { bullmqScheduler } from '../../stores/scheduling/bullmq-scheduler.js';
import { bullmqInstalled } from '../../stores/scheduling/bullmq-installed.js';
import type { JobScheduler } from '../../stores/scheduling/job-scheduler.js';

/** The `redis` option as the concerns read it. */
export interface ResolvedRedis {
  readonly client: SharedRedisClient;
  /** `redis.prefix`: every key starts with it. */
  readonly prefix: string;
}

export const DEFAULT_REDIS_PREFIX = 'gw:';

/** Each concern's namespace under the one prefix (docs/configuration.md "redis"). */
export const REDIS_NAMESPACES = Object.freeze({ idempotency: 'idem:', quotas: 'quota:', health: 'health:', strikes: 'strikes:', scheduler: 'bull' });

const EXAMPLE = "redis: { client: new Redis(process.env.REDIS_URL!), prefix: 'gw:' }";
const REDIS_OPTION_NAMES = { client: true, prefix: true } as const satisfies Record<keyof SharedRedisOptions, true>;
// what every concern sends: a client without one of these is not an ioredis client
const COMMANDS = ['get', 'set', 'del', 'eval', 'evalsha', 'multi', 'publish', 'hset', 'hgetall', 'hdel', 'duplicate'] as const;

/**
 * The option checked, or undefined when absent. `runsScheduler`: the scheduler will be BullMQ on it
 * (`callbacks.scheduler` names none), so the optional peer `bullmq` must be there: without it, a
 * configuration error now, since an in-process scheduler would silently leave a stopped instance's
 * polls, deliveries and lease watches undone.
 */
export function resolveRedis(value: SharedRedisOptions | undefined, runsScheduler: boolean): ResolvedRedis | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new GatewayConfigError('redis_type', 'options.redis must be an object { client, prefix? }.', EXAMPLE);
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(REDIS_OPTION_NAMES, key)) throw new GatewayConfigError('option_unknown', `Unknown redis option '${key}'.`, `use only: ${Object.keys(REDIS_OPTION_NAMES).join(', ')}.`);
  }
  const client = value.client as unknown as Record<string, unknown> | null | undefined;
  const missing = COMMANDS.filter((command) => typeof client?.[command] !== 'function');
  if (client === null || typeof client !== 'object' || missing.length > 0) {
    throw new GatewayConfigError('redis_client', `options.redis.client must be a connected ioredis client${client && typeof client === 'object' ? ` (it lacks ${missing.join(', ')})` : ''}.`, EXAMPLE);
  }
  if (value.prefix !== undefined && (typeof value.prefix !== 'string' || value.prefix === '')) {
    throw new GatewayConfigError('redis_prefix', 'options.redis.prefix must be a non-empty string.', "redis: { client, prefix: 'images-eu:' }");
  }
  if (runsScheduler && !bullmqInstalled()) {
    throw new GatewayConfigError(
      'redis_scheduler',
      'options.redis runs the task scheduler on BullMQ, and the package bullmq is not installed.',
      'npm install bullmq, or keep polls and deliveries in this process (one instance only): callbacks: { scheduler: memoryScheduler() }',
    );
  }
  return Object.freeze({ client: value.client, prefix: value.prefix ?? DEFAULT_REDIS_PREFIX });
}

/**
 * The task scheduler on the shared Redis: BullMQ under `<prefix>bull`, so polls, deliveries and the
 * lease watches of a stopped instance are taken over by another. It opens its connections (duplicates
 * of the client) at once: made after every option passed its checks.
 */
export function redisScheduler(redis: ResolvedRedis): JobScheduler {
  return bullmqScheduler({ connection: redis.client, prefix: `${redis.prefix}${REDIS_NAMESPACES.scheduler}` });
}
