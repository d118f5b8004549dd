// Upstream error codes of every provider (upstreams.md §1.4, §2.8, §4.5) read into the few kinds the
// status mapping of GatewayError.fromUpstream needs. One table, so providers are mapped alike.
import type { UpstreamFailure } from './gateway-error.js';

type Kind = NonNullable<UpstreamFailure['kind']>;

const EXACT: Readonly<Record<string, Kind>> = {
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
  // OpenAI
  content_policy_violation: 'content_policy',
  moderation_blocked: 'content_policy',
  invalid_api_key: 'auth',
  insufficient_quota: 'quota',
  rate_limit_exceeded: 'rate_limit',
};

const PREFIXES: ReadonlyArray<readonly [string, Kind]> = [
  ['Throttling', 'rate_limit'],
  ['RateLimitExceeded', 'rate_limit'],
  ['BadRequest.', 'invalid'],
  ['InvalidParameter.', 'invalid'],
  ['InternalError', 'server'],
  ['OperationDenied', 'auth'],
];

/** The kind of an upstream error code, or undefined to let the HTTP status decide. */
export function classifyUpstreamCode(code: string | undefined): Kind | undefined {
  if (!code) return undefined;
  const exact = EXACT[code];
  if (exact) return exact;
  for (const [prefix, kind] of PREFIXES) if (code.startsWith(prefix)) return kind;
  return undefined;
}
