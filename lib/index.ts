// The public surface of the package: re-exports only (style.md: one screen).
export { createGatewayRouter, type GatewayRouter } from './express/create-gateway-router.js';
export { createPlayground, type PlaygroundOptions } from './express/playground/create-playground.js';
export { staticKeys } from './express/static-keys.js';
export { gatewayCaller } from './express/authenticate.js';
export { GatewayError, type GatewayErrorBody } from './errors/gateway-error.js';
export { GatewayConfigError } from './errors/config-error.js';
export { ERROR_CODES, type ErrorCode } from './errors/error-codes.js';
export { DEFAULT_LIMITS } from './default-limits.js';
export type { GatewayOptions, StorageOptions } from './options/gateway-options.js';
export type { PutInfo, ReadOutcome, ResultStorage, ServedResult, UrlContext } from './stores/results/result-storage.js';
export { localResultStorage, type LocalResultStorageOptions } from './stores/results/local-result-storage.js';
export { s3ResultStorage, type S3ResultStorageOptions } from './stores/results/s3-result-storage.js';
export type { OtelApi } from './telemetry/otel-api.js';
export type { TelemetryOptions } from './options/gateway-options.js';
export type { TaskTraceContext } from './telemetry/telemetry.js';
export { DEFAULT_IMAGE_MODELS } from './images/model-families.js';
export { TEMPORARY_PROXY_HOSTS } from './security/callback-url.js';
export { memoryScheduler, type JobScheduler, type JobHandlers, type NextPoll, type RetryPolicy } from './stores/scheduling/job-scheduler.js';
export { bullmqScheduler, type BullmqConnection, type BullmqSchedulerOptions } from './stores/scheduling/bullmq-scheduler.js';
export type { DeliveryJob } from './stores/scheduling/job-scheduler.js';
export { memoryTaskStore, type MemoryTaskStoreOptions } from './stores/tasks/memory-task-store.js';
export { redisTaskStore, type RedisTaskStoreClient, type RedisTaskStoreOptions } from './stores/tasks/redis-task-store.js';
export type { AssetRecord, TaskCallbackState, TaskChanges, TaskRecord, TaskStore, TaskStoredResults } from './stores/tasks/task-store.js';
export { AssetCapacityError } from './stores/tasks/task-store.js';
export {
  memoryIdempotencyStore,
  redisIdempotencyStore,
  type IdempotencyRecord,
  type IdempotencyStore,
  type MemoryIdempotencyStoreOptions,
  type RedisIdempotencyClient,
  type RedisIdempotencyStoreOptions,
  type StoredAnswer,
} from './stores/idempotency/idempotency-store.js';
export type { IdempotencyOptions } from './options/gateway-options.js';
export type { QuotaLimits, QuotaLimitsFor, QuotaOptions, QuotaRedisClient, QuotaState } from './options/gateway-options.js';
export type { Caller, ProviderName, RouteName, Upstream, UsageEvent } from './types.js';
export type { CallbackOptions } from './options/gateway-options.js';
export type { GatewayLimits, ImageModelFamily } from './options/request-limits.js';
export type { ListedModel, ListModels, Logger, ResolveUpstream, ResolveUpstreamInput, VerifyKey } from './options/host-hooks.js';
