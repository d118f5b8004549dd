// The `redis` option's types (docs/configuration.md "redis"): the one Redis connection and the one key
// prefix that every concern keeping shared state uses unless it is given its own (docs/deployment.md
// "Several instances"). Types only; gateway/options/redis-option.ts checks and resolves it.
// The client is typed by the commands the concerns send, not by ioredis's class: ioredis is an optional
// peer, and published declarations that import it break hosts without it.
import type { RedisIdempotencyClient } from '../stores/idempotency/idempotency-store.js';
import type { BullmqConnection } from '../stores/scheduling/bullmq-scheduler.js';
import type { RedisTaskStoreClient } from '../stores/tasks/redis-task-store.js';
import type { StrikeRedisClient } from './moderation-options.js';
import type { QuotaRedisClient } from './quota-options.js';
import type { RoutingHealthClient } from './routing-options.js';

/**
 * What the concerns send through the shared client, all of them together: task and asset records,
 * Idempotency-Keys, quota counters, upstream health (with its subscribing duplicate), strikes, and the
 * BullMQ scheduler's duplicates. ioredis's `Redis` fits.
 * @example client: new Redis(process.env.REDIS_URL!)
 */
export type SharedRedisClient = RedisTaskStoreClient & RedisIdempotencyClient & QuotaRedisClient & RoutingHealthClient & StrikeRedisClient & BullmqConnection;

/**
 * The `redis` option: one connected client and one key prefix for every concern that keeps shared
 * state, so several instances share tasks, Idempotency-Keys, quotas, upstream health, strikes and the
 * task scheduler. A concern given its own store or client (`store`, `idempotency.store`,
 * `tenancy.quotas.redis`, `routing.store`, `moderation.redis`, `callbacks.scheduler`) uses that instead.
 * @example redis: { client: new Redis(process.env.REDIS_URL!), prefix: 'gw:' }
 */
export interface SharedRedisOptions {
  /**
   * Required. A connected ioredis client, the host's: the gateway never connects, quits or
   * disconnects it (the scheduler and the health subscription use duplicates of it, which the
   * gateway closes). No default.
   * @example client: new Redis(process.env.REDIS_URL!)
   */
  client: SharedRedisClient;
  /**
   * Starts every key the gateway writes; each concern keeps its own namespace under it: `task:`,
   * `asset:` and `tasks-of:` (task store), `idem:`, `quota:`, `health:`, `strikes:`, and `bull` (the
   * scheduler's BullMQ prefix). Gateways (or apps) that share one Redis give each its own. Default `'gw:'`.
   * @example prefix: 'images-eu:'
   */
  prefix?: string;
}
