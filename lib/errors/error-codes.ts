// Every error code the gateway emits (fastify keeps its codes in one file). Clients branch on
// `error.code`; which status and type each one comes with is status-policy.ts.

export const ERROR_CODES = {
  invalidRequest: 'invalid_request_error',
  invalidApiKey: 'invalid_api_key',
  permissionDenied: 'permission_denied',
  modelNotFound: 'model_not_found',
  notFound: 'not_found',
  requestTooLarge: 'request_too_large',
  unsupportedMediaType: 'unsupported_media_type',
  requestTimeout: 'request_timeout',
  contentPolicyViolation: 'content_policy_violation',
  /** 403: the tenant reached the moderation policy's `maxStrikes` (docs/content-safety.md "Strikes"). */
  tenantSuspended: 'tenant_suspended',
  /** 503: the content checker failed or timed out and the policy's `onCheckerError` is 'refuse'. */
  moderationUnavailable: 'moderation_unavailable',
  rateLimitExceeded: 'rate_limit_exceeded',
  /** 503: the quota counters (Redis) cannot be reached and `quotas.whenRedisDown` is 'refuse'. */
  quotaUnavailable: 'quota_unavailable',
  /** 409: a request with this Idempotency-Key is still running. */
  idempotencyKeyInUse: 'idempotency_key_in_use',
  /** 422: this Idempotency-Key was used with a different request body. */
  idempotencyKeyReused: 'idempotency_key_reused',
  /** 409: the request with this Idempotency-Key succeeded but its answer was too large to keep for replays. */
  idempotencyAnswerNotKept: 'idempotency_answer_not_kept',
  /** 409: the gateway instance running the request with this Idempotency-Key stopped; its outcome is unknown, and the key is free again. */
  idempotencyKeyInterrupted: 'idempotency_key_interrupted',
  /** 503: the idempotency store cannot be reached, so a paid create with a key is not run uncounted. */
  idempotencyUnavailable: 'idempotency_unavailable',
  upstreamError: 'upstream_error',
  upstreamAuthFailed: 'upstream_auth_failed',
  upstreamQuotaExceeded: 'upstream_quota_exceeded',
  upstreamUnreachable: 'upstream_unreachable',
  upstreamTimeout: 'upstream_timeout',
  /** 503: every pooled socket to the upstream is busy and its wait queue is full (limits.upstreamQueue). */
  upstreamBusy: 'upstream_busy',
  /** 503: every upstream of the model's list is open (its circuit breaker keeps it out: docs/routing-and-health.md). */
  upstreamUnavailable: 'upstream_unavailable',
  upstreamBadResponse: 'upstream_bad_response',
  /** 503: the TaskStore holds the most asset records it may (memoryTaskStore maxAssets); assets are never forgotten to make room. */
  assetStoreFull: 'asset_store_full',
  upstreamNoImage: 'upstream_no_image',
  imageDownloadFailed: 'image_download_failed',
  /** 502: the result could not be stored for a durable URL (storage.onFailure: 'error'). */
  storageFailed: 'storage_failed',
  /** 502: the operator's signer failed to sign an image with its Content Credentials; nothing was delivered (docs/provenance.md). */
  provenanceSigningFailed: 'provenance_signing_failed',
  /** 409: the image task has already ended; only a queued or running one can be cancelled. */
  taskNotCancellable: 'task_not_cancellable',
  /** An image task nobody finished: it waited too long for a slot, or the instance running it stopped (docs/image-tasks.md). */
  taskInterrupted: 'task_interrupted',
  /** 429 (the caller's share) or 503 (the process's): too many image tasks are waiting for a slot. */
  taskQueueFull: 'task_queue_full',
  /** 502: an image task's upstream answered bytes without a URL, and no `storage` is configured to keep them. */
  resultNotKept: 'result_not_kept',
  /** 401: a call to the vendor webhook route with a wrong token or a vendor signature that does not hold (docs/video-tasks-and-callbacks.md "Vendor webhooks"). */
  vendorWebhookRefused: 'vendor_webhook_refused',
  /** 503: the vendor's signing keys could not be read, so a vendor webhook could not be checked; the vendor retries, and polls go on. */
  vendorWebhookUnchecked: 'vendor_webhook_unchecked',
  internalError: 'internal_error',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];
