// The `express-image-gateway/redis` entry: the pieces the `redis` option builds on one Redis (task
// store, Idempotency-Key store, BullMQ scheduler), for a host that gives one concern a store of its own,
// and the client shapes they take. Re-exports only. ioredis and bullmq are optional peers: nothing here
// loads them until a factory is called.
export { redisTaskStore, type RedisTaskStoreClient, type RedisTaskStoreOptions } from './stores/tasks/redis-task-store.js';
export { redisIdempotencyStore, type RedisIdempotencyClient, type RedisIdempotencyStoreOptions } from './stores/idempotency/idempotency-store.js';
export { bullmqScheduler, type BullmqConnection, type BullmqSchedulerOptions } from './stores/scheduling/bullmq-scheduler.js';
// the client of the `tenancy.quotas` option's shared counters (`tenancy.quotas.redis`)
export type { QuotaRedisClient } from './options/quota-options.js';
