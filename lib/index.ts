// The root entry, `express-image-gateway`: what a host names to mount, configure and extend the gateway.
// Re-exports only, one screen (docs/architecture.md "Public contract"). Redis-backed pieces, result storages and the playground are
// entries of their own (redis.ts, storage.ts, playground.ts), so a host loads only what it uses.

// mounting
export { createGatewayRouter, type GatewayRouter } from './express/create-gateway-router.js';
export { staticKeys } from './express/static-keys.js';
export { gatewayCaller } from './express/request-context.js';
export { isGatewayPath, skipGatewayRoutes, type GatewayPathOptions } from './express/skip-gateway-routes.js';

// errors
export { GatewayError, type GatewayErrorBody } from './errors/gateway-error.js';
export { GatewayConfigError } from './errors/config-error.js';
export { ERROR_CODES, type ErrorCode } from './errors/error-codes.js';

// options, their defaults, and the functions a host writes
export type {
  AllowOptions,
  CallbackOptions,
  GatewayOptions,
  ImageTaskOptions,
  LimitOptions,
  ModelOptions,
  StorageOptions,
  TaskPollIntervals,
  TelemetryOptions,
  TenancyOptions,
} from './options/gateway-options.js';
export type { QuotaLimits, QuotaOptions } from './options/quota-options.js';
export type { IdempotencyOptions } from './options/idempotency-options.js';
export type { ProvenanceAlgorithm, ProvenanceAssertion, ProvenanceOptions, ProvenanceReport, ProvenanceSetting, ProvenanceSigning, ProvenanceSubject } from './options/provenance-options.js';
export type { SharedRedisClient, SharedRedisOptions } from './options/redis-options.js';
export type { GatewayLimits, ImageModelFamily } from './options/request-limits.js';
export type { AuthenticatedMiddleware, ListedModel, ListModels, Logger, ResolvedUpstreams, ResolveUpstream, ResolveUpstreamInput, VerifyKey } from './options/host-hooks.js';
export type {
  BreakerOptions,
  RoutedUpstreams,
  RoutingHealthClient,
  RoutingHealthSubscriber,
  RoutingOptions,
  RoutingStrategy,
  UpstreamCallerState,
  UpstreamHealthEvent,
  UpstreamHealthReason,
  UpstreamHealthReport,
  UpstreamIdentity,
  UpstreamState,
} from './options/routing-options.js';
export type { Caller, LostBy, ProviderName, Quote, RouteName, Upstream, UsageEvent, VendorAttempt, VendorOutcome, VendorWork } from './types.js';
export { DEFAULT_LIMITS } from './default-limits.js';
export { DEFAULT_IMAGE_MODELS } from './images/model-families.js';
export type { ModelEndpoint, ModelEntry, ModelLimits, ModelRange, ModelServing, ModelCatalogueOption } from './options/model-catalogue.js';
export { DEFAULT_MODEL_CATALOGUE, modelEntry } from './providers/registry.js';
export type { Cost, ModelPrice, PriceBy, PricingOptions } from './options/pricing.js';
export { TEMPORARY_PROXY_HOSTS } from './security/callback-url.js';
export type { SafetyIdentifierOptions } from './options/safety-identifier-options.js';
export { safetyIdentifierOf } from './security/safety-identifier.js';

// what a host may replace, with the records each exchanges, and the in-memory defaults
export {
  AssetCapacityError,
  type AssetRecord,
  type ImageTaskRecord,
  type ImageTaskState,
  type TaskChanges,
  type TaskCharge,
  type TaskKind,
  type TaskPage,
  type TaskRecord,
  type TaskRecordBase,
  type TaskStore,
  type VideoAsked,
  type VideoTaskRecord,
} from './stores/tasks/task-store.js';
export { memoryTaskStore, type MemoryTaskStoreOptions } from './stores/tasks/memory-task-store.js';
export type { DeliveryAttempt, DeliveryLogStore, DeliveryQuery, DeliveryRecord, DeliveryRoom, DeliveryState, DeliveryUpdate } from './stores/tasks/delivery-records.js';
export type { EndpointDisableReason, EndpointHealth, EndpointHealthStore, EndpointOutcome, EndpointRef, EndpointRule } from './stores/tasks/endpoint-records.js';
// the delivery log (docs/video-tasks-and-callbacks.md "Delivery log")
export type { DeliveryOptions, EndpointDisableOptions, EndpointDisabledEvent } from './options/delivery-options.js';
export type { VendorWebhookOptions } from './options/vendor-webhook-options.js';
export type { DeliveriesApi, DeliveryList, DeliveryListQuery, DeliveryReplayFilter } from './gateway/deliveries/delivery-log.js';
export type { EndpointEnabled } from './gateway/deliveries/endpoints.js';
export type { DeliveryAttemptView, DeliveryDetail, DeliverySummary } from './gateway/deliveries/delivery-view.js';
export {
  memoryScheduler,
  DeliveryPostponed,
  type MemorySchedulerOptions,
  type DeliveryJob,
  type JobHandlers,
  type JobScheduler,
  type NextPoll,
  type RetryPolicy,
} from './stores/scheduling/job-scheduler.js';
export {
  memoryIdempotencyStore,
  type IdempotencyRecord,
  type IdempotencyStore,
  type KeptWorkRecord,
  type LeasedWork,
  type RunningLease,
  type UpstreamTaskRef,
  type MemoryIdempotencyStoreOptions,
} from './stores/idempotency/idempotency-store.js';
export type { ResultStorage } from './stores/results/result-storage.js';
// content safety (docs/content-safety.md)
export type {
  ModerationCheckInput,
  ModerationChecker,
  ModerationEvent,
  ModerationImage,
  ModerationOption,
  ModerationPolicy,
  ModerationStage,
  ModerationVerdict,
  StrikeLimitEvent,
  StrikeRedisClient,
} from './options/moderation-options.js';
export { openAIModeration, type OpenAIModerationOptions } from './providers/registry.js';
export { ContentPolicyError, type ContentPolicyStage } from './errors/content-policy-error.js';
