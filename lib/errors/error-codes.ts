// Every error code the gateway emits, and the one status -> type table (fastify keeps its codes in
// one file; openai-node keys its error classes by status). Clients branch on `error.code`.

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
  rateLimitExceeded: 'rate_limit_exceeded',
  upstreamError: 'upstream_error',
  upstreamAuthFailed: 'upstream_auth_failed',
  upstreamQuotaExceeded: 'upstream_quota_exceeded',
  upstreamUnreachable: 'upstream_unreachable',
  upstreamTimeout: 'upstream_timeout',
  /** 503: every pooled socket to the upstream is busy and its wait queue is full (limits.upstreamQueue). */
  upstreamBusy: 'upstream_busy',
  upstreamBadResponse: 'upstream_bad_response',
  /** 503: the TaskStore holds the most asset records it may (memoryTaskStore maxAssets); assets are never forgotten to make room. */
  assetStoreFull: 'asset_store_full',
  upstreamNoImage: 'upstream_no_image',
  imageDownloadFailed: 'image_download_failed',
  internalError: 'internal_error',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** `error.type` by HTTP status, the OpenAI convention where it has one. */
const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'invalid_request_error',
  408: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  500: 'server_error',
  502: 'upstream_error',
  503: 'upstream_error',
  504: 'upstream_error',
};

export function errorTypeForStatus(status: number): string {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
}
