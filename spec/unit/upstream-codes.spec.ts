// classifyUpstreamCode: DashScope, Ark and OpenAI error codes read into error kinds (upstreams §1.4, §2.8, §4.5).
import { describe, expect, it } from 'vitest';
import type { UpstreamFailure } from '../../lib/errors/gateway-error.js';
import { classifyUpstreamCode } from '../../lib/errors/status-policy.js';

describe('classifyUpstreamCode', () => {
  it.each<{ code: string | undefined; kind: UpstreamFailure['kind'] }>([
    // no code: the HTTP status decides
    { code: undefined, kind: undefined },
    { code: '', kind: undefined },
    // DashScope §1.4
    { code: 'InvalidParameter', kind: 'invalid' },
    { code: 'InvalidURL', kind: 'invalid' },
    { code: 'UnsupportedOperation', kind: 'invalid' },
    { code: 'BadRequest.EmptyInput', kind: 'invalid' },
    { code: 'BadRequest.EmptyParameters', kind: 'invalid' },
    { code: 'BadRequest.EmptyModel', kind: 'invalid' },
    { code: 'DataInspectionFailed', kind: 'content_policy' },
    { code: 'InvalidApiKey', kind: 'auth' },
    { code: 'AccessDenied', kind: 'auth' },
    { code: 'AccessDenied.Unpurchased', kind: 'auth' },
    { code: 'Model.AccessDenied', kind: 'auth' },
    { code: 'Arrearage', kind: 'quota' },
    { code: 'Throttling', kind: 'rate_limit' },
    { code: 'Throttling.RateQuota', kind: 'rate_limit' },
    { code: 'Throttling.AllocationQuota', kind: 'rate_limit' },
    { code: 'Throttling.BurstRate', kind: 'rate_limit' },
    { code: 'ModelNotFound', kind: 'server' },
    { code: 'InternalError', kind: 'server' },
    { code: 'InternalError.Algo', kind: 'server' },
    { code: 'InternalError.Timeout', kind: 'server' },
    { code: 'InternalError.Algo.InvalidParameter', kind: 'server' },
    // Ark §2.8
    { code: 'MissingParameter', kind: 'invalid' },
    { code: 'InvalidParameter.Size', kind: 'invalid' },
    { code: 'SensitiveContentDetected', kind: 'content_policy' },
    { code: 'InputTextSensitiveContentDetected', kind: 'content_policy' },
    { code: 'InputImageSensitiveContentDetected', kind: 'content_policy' },
    { code: 'OutputImageSensitiveContentDetected', kind: 'content_policy' },
    { code: 'OutputVideoSensitiveContentDetected', kind: 'content_policy' },
    { code: 'AuthenticationError', kind: 'auth' },
    { code: 'AccountOverdueError', kind: 'quota' },
    { code: 'OperationDenied.ServiceNotOpen', kind: 'auth' },
    { code: 'RateLimitExceeded.EndpointRPMExceeded', kind: 'rate_limit' },
    { code: 'RateLimitExceeded.EndpointTPMExceeded', kind: 'rate_limit' },
    { code: 'RateLimitExceeded.FoundationModelRPMExceeded', kind: 'rate_limit' },
    { code: 'InvalidEndpointOrModel.NotFound', kind: undefined },
    { code: 'InvalidEndpoint.ClosedEndpoint', kind: undefined },
    { code: 'ServerOverloaded', kind: undefined },
    // OpenAI §4.5
    { code: 'content_policy_violation', kind: 'content_policy' },
    { code: 'moderation_blocked', kind: 'content_policy' },
    { code: 'invalid_api_key', kind: 'auth' },
    { code: 'insufficient_quota', kind: 'quota' },
    { code: 'rate_limit_exceeded', kind: 'rate_limit' },
    { code: 'invalid_request_error', kind: undefined },
    { code: 'server_error', kind: undefined },
    // codes are case-sensitive identifiers
    { code: 'invalidparameter', kind: undefined },
  ])('$code -> $kind', ({ code, kind }) => {
    expect(classifyUpstreamCode(code)).toBe(kind);
  });
});
