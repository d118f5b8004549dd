// The status policy, in one place, in the order a failure travels: an upstream's error code (or, without
// a known code, its HTTP status) -> a kind -> the status, code and retry rules the caller gets -> the
// `error.type` of that status. Read it beside docs/errors.md: every upstream row there is a
// row here. docs/architecture.md: caller-caused 4xx keep their status, rate limits stay 429, and anything that is
// the operator's problem (the upstream refused the operator's key or account, 5xx, 404) is a 502,
// never a 401 to the caller.
import { ERROR_CODES, type ErrorCode } from './error-codes.js';

/** What an upstream failure means, whichever provider reported it. */
export type UpstreamErrorKind = 'invalid' | 'content_policy' | 'rate_limit' | 'auth' | 'quota' | 'server';

// 1. upstream code -> kind (upstreams §1.4, §2.8, §2.6, §4.5). One table, so providers map alike.
const KIND_BY_CODE: Readonly<Record<string, UpstreamErrorKind>> = {
  // DashScope
  DataInspectionFailed: 'content_policy',
  InvalidApiKey: 'auth',
  AccessDenied: 'auth',
  'AccessDenied.Unpurchased': 'auth',
  'Model.AccessDenied': 'auth',
  Arrearage: 'quota',
  InvalidParameter: 'invalid',
  InvalidURL: 'invalid',
  UnsupportedOperation: 'invalid',
  ModelNotFound: 'server',
  // Ark
  MissingParameter: 'invalid',
  SensitiveContentDetected: 'content_policy',
  InputTextSensitiveContentDetected: 'content_policy',
  InputImageSensitiveContentDetected: 'content_policy',
  OutputImageSensitiveContentDetected: 'content_policy',
  OutputVideoSensitiveContentDetected: 'content_policy',
  AuthenticationError: 'auth',
  AccountOverdueError: 'quota',
  // Volcengine OpenAPI gateway (§2.6 asset library; public error codes, volcengine docs 6369/68677).
  // AccessDenied, InvalidParameter, MissingParameter are above; InternalError* by prefix below.
  // Signing and credential failures are the operator's AK/SK or clock, never the caller's.
  SignatureDoesNotMatch: 'auth',
  InvalidAccessKey: 'auth',
  InvalidClientTokenId: 'auth',
  InvalidSecretToken: 'auth',
  InvalidAuthorization: 'auth',
  InvalidCredential: 'auth',
  InvalidTimestamp: 'auth',
  MissingAuthenticationToken: 'auth',
  MissingSignature: 'auth',
  LackPolicy: 'auth',
  LackProjectPolicy: 'auth',
  RequestLimitExceeded: 'rate_limit',
  FlowLimitExceeded: 'rate_limit',
  AccountFlowLimitExceeded: 'rate_limit',
  ServiceUnavailable: 'server',
  ServiceUnavailableTemp: 'server',
  InternalServiceError: 'server',
  InternalServiceTimeout: 'server',
  FailToConnect: 'server',
  // a wrong OpenAPI host, service or action is the operator's configuration, not the caller's request
  ServiceNotFound: 'server',
  InvalidActionOrVersion: 'server',
  // Google's google.rpc.Code names in `error.status` (Gemini API and Vertex AI, docs/providers/gemini.md "Errors");
  // a key Google refuses comes as a 400 whose ErrorInfo reason says so: the operator's, never the caller's
  INVALID_ARGUMENT: 'invalid',
  OUT_OF_RANGE: 'invalid',
  RESOURCE_EXHAUSTED: 'rate_limit',
  UNAUTHENTICATED: 'auth',
  PERMISSION_DENIED: 'auth',
  API_KEY_INVALID: 'auth',
  API_KEY_EXPIRED: 'auth',
  // "enable billing", "not available in your country": the operator's account
  FAILED_PRECONDITION: 'quota',
  NOT_FOUND: 'server',
  INTERNAL: 'server',
  UNAVAILABLE: 'server',
  DEADLINE_EXCEEDED: 'server',
  // Gemini's refusals of the prompt or the image (promptFeedback.blockReason, a candidate's finishReason)
  SAFETY: 'content_policy',
  IMAGE_SAFETY: 'content_policy',
  PROHIBITED_CONTENT: 'content_policy',
  IMAGE_PROHIBITED_CONTENT: 'content_policy',
  BLOCKLIST: 'content_policy',
  SPII: 'content_policy',
  // OpenAI
  content_policy_violation: 'content_policy',
  moderation_blocked: 'content_policy',
  invalid_api_key: 'auth',
  insufficient_quota: 'quota',
  rate_limit_exceeded: 'rate_limit',
  // Azure OpenAI's content filter (its images answer content_policy_violation, above, with this inner code)
  content_filter: 'content_policy',
  ResponsibleAIPolicyViolation: 'content_policy',
};

const KIND_BY_PREFIX: ReadonlyArray<readonly [string, UpstreamErrorKind]> = [
  ['Throttling', 'rate_limit'],
  ['RateLimitExceeded', 'rate_limit'],
  ['BadRequest.', 'invalid'],
  ['InvalidParameter.', 'invalid'],
  ['InternalError', 'server'],
  ['OperationDenied', 'auth'],
];

/** The kind of an upstream error code, or undefined to let the HTTP status decide. */
export function classifyUpstreamCode(code: string | undefined): UpstreamErrorKind | undefined {
  if (!code) return undefined;
  const exact = KIND_BY_CODE[code];
  if (exact) return exact;
  for (const [prefix, kind] of KIND_BY_PREFIX) if (code.startsWith(prefix)) return kind;
  return undefined;
}

// 2. upstream HTTP status -> kind, when no code decided it
export function kindFromStatus(status: number): UpstreamErrorKind {
  if (status === 429) return 'rate_limit';
  if (status === 401 || status === 403) return 'auth';
  if (status === 402) return 'quota';
  // An upstream 404 means the operator mapped a model or path wrong: nothing the caller can fix.
  if (status === 404 || status >= 500 || status < 400) return 'server';
  return 'invalid';
}

// 3. kind -> what the caller gets
export interface UpstreamErrorRule {
  /** The caller's status, from the upstream's. */
  status(upstreamStatus: number): number;
  code: ErrorCode;
  /** Another attempt may succeed. */
  retryable: boolean;
  /**
   * The upstream certainly did not start the work, so the fallback rule may try the next upstream:
   * refusals before any processing (a rate limit, the operator's credentials or account refused, or
   * 503 "not able to handle the request now", RFC 9110). A 500/502/504 or an error inside a 200 may
   * come after the work began.
   */
  notStarted(upstreamStatus: number): boolean;
}

const never = (): boolean => false;
const always = (): boolean => true;

export const UPSTREAM_ERROR_RULES: Readonly<Record<UpstreamErrorKind, UpstreamErrorRule>> = {
  content_policy: { status: () => 400, code: ERROR_CODES.contentPolicyViolation, retryable: false, notStarted: never },
  invalid: {
    // the upstream's own 4xx, except those that would tell the caller about the operator's key or mapping
    status: (upstream) => (upstream >= 400 && upstream < 500 && upstream !== 401 && upstream !== 403 && upstream !== 404 ? upstream : 400),
    code: ERROR_CODES.invalidRequest,
    retryable: false,
    notStarted: never,
  },
  rate_limit: { status: () => 429, code: ERROR_CODES.rateLimitExceeded, retryable: true, notStarted: always },
  auth: { status: () => 502, code: ERROR_CODES.upstreamAuthFailed, retryable: true, notStarted: always },
  quota: { status: () => 502, code: ERROR_CODES.upstreamQuotaExceeded, retryable: true, notStarted: always },
  server: { status: () => 502, code: ERROR_CODES.upstreamError, retryable: true, notStarted: (upstream) => upstream === 503 },
};

// 4. status -> `error.type`, the OpenAI convention where it has one
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
