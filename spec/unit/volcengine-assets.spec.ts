// Volcengine asset library adapter translation (upstreams §2.6): the `{ ResponseMetadata, Result }`
// envelope and error normalization (ResponseMetadata.Error codes). The request body goes upstream as the
// caller sent it: volcengine-assets-transport.spec.ts checks it on the wire.
import { describe, expect, it } from 'vitest';
import { GatewayError, type GatewayErrorBody } from '../../lib/errors/gateway-error.js';
import { readCreateAssetResponse } from '../../lib/providers/ark/volcengine-assets.js';
import { thrown } from '../helpers/thrown.js';

/** The whole client-visible error plus the fields the router acts on. */
function summary(error: GatewayError): { status: number; retryable: boolean; upstreamRequestId?: string; body: GatewayErrorBody } {
  return { status: error.status, retryable: error.retryable, upstreamRequestId: error.upstreamRequestId, body: error.toJSON() };
}

const METADATA = { RequestId: 'r-1', Action: 'CreateAsset', Version: '2024-01-01', Service: 'ark', Region: 'cn-beijing' };

function failure(code: string, message: string): unknown {
  return { ResponseMetadata: { ...METADATA, Error: { Code: code, Message: message } } };
}

describe('readCreateAssetResponse', () => {
  it.each<{ name: string; status: number; body: unknown; headerRequestId?: string; requestId?: string }>([
    {
      name: 'the documented success envelope',
      status: 200,
      body: { ResponseMetadata: METADATA, Result: { Id: 'asset-20260320120147-pqwhc' } },
      requestId: 'r-1',
    },
    {
      name: 'envelope request id wins over the header',
      status: 200,
      body: { ResponseMetadata: METADATA, Result: { Id: 'asset-20260320120147-pqwhc', Extra: true } },
      headerRequestId: 'h-1',
      requestId: 'r-1',
    },
    {
      name: 'no ResponseMetadata: header request id',
      status: 200,
      body: { Result: { Id: 'asset-20260320120147-pqwhc' } },
      headerRequestId: 'h-1',
      requestId: 'h-1',
    },
  ])('$name', ({ status, body, headerRequestId, requestId }) => {
    const result = readCreateAssetResponse(status, body, headerRequestId);
    expect(result).toEqual({ assetId: 'asset-20260320120147-pqwhc', envelope: body, requestId });
    // the caller gets the upstream envelope itself
    expect(result.envelope).toBe(body);
  });

  it.each<{ name: string; status: number; body: unknown; headerRequestId?: string; expected: ReturnType<typeof summary> }>([
    {
      name: "AccessDenied (no ark:*Asset* policy) is the operator's problem: 502",
      status: 403,
      body: failure('AccessDenied', 'User is not authorized to perform: ark:CreateAsset on resource: trn:ark:…'),
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'r-1',
        body: {
          error: {
            message: "The upstream rejected the gateway's own credentials (an operator configuration problem, not your key) (volcengine code AccessDenied, request id r-1).",
            type: 'upstream_error',
            code: 'upstream_auth_failed',
            param: null,
          },
        },
      },
    },
    {
      name: 'SignatureDoesNotMatch: 502, the upstream message (which may quote the AK) not repeated',
      status: 401,
      body: failure('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. AKLTabc'),
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'r-1',
        body: {
          error: {
            message: "The upstream rejected the gateway's own credentials (an operator configuration problem, not your key) (volcengine code SignatureDoesNotMatch, request id r-1).",
            type: 'upstream_error',
            code: 'upstream_auth_failed',
            param: null,
          },
        },
      },
    },
    {
      name: 'InvalidAccessKey: 502',
      status: 401,
      body: failure('InvalidAccessKey', 'The accesskey [AKLTabc] included in the request is invalid.'),
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'r-1',
        body: {
          error: {
            message: "The upstream rejected the gateway's own credentials (an operator configuration problem, not your key) (volcengine code InvalidAccessKey, request id r-1).",
            type: 'upstream_error',
            code: 'upstream_auth_failed',
            param: null,
          },
        },
      },
    },
    {
      name: 'InvalidParameter: 400 with the upstream message',
      status: 400,
      body: failure('InvalidParameter', 'The parameter URL specified in the request is not valid.'),
      expected: {
        status: 400,
        retryable: false,
        upstreamRequestId: 'r-1',
        body: {
          error: {
            message: 'The upstream rejected the request: The parameter URL specified in the request is not valid. (volcengine code InvalidParameter, request id r-1)',
            type: 'invalid_request_error',
            code: 'invalid_request_error',
            param: null,
          },
        },
      },
    },
    {
      name: 'MissingParameter: 400',
      status: 400,
      body: failure('MissingParameter', 'The request is missing GroupId parameter.'),
      expected: {
        status: 400,
        retryable: false,
        upstreamRequestId: 'r-1',
        body: {
          error: {
            message: 'The upstream rejected the request: The request is missing GroupId parameter. (volcengine code MissingParameter, request id r-1)',
            type: 'invalid_request_error',
            code: 'invalid_request_error',
            param: null,
          },
        },
      },
    },
    {
      name: 'RequestLimitExceeded: 429',
      status: 429,
      body: failure('RequestLimitExceeded', 'Request limit exceeded.'),
      expected: {
        status: 429,
        retryable: true,
        upstreamRequestId: 'r-1',
        body: {
          error: {
            message: 'The upstream is rate limiting requests: Request limit exceeded. (volcengine code RequestLimitExceeded, request id r-1). Retry later.',
            type: 'rate_limit_error',
            code: 'rate_limit_exceeded',
            param: null,
          },
        },
      },
    },
    {
      name: 'FlowLimitExceeded: 429',
      status: 429,
      body: failure('FlowLimitExceeded', 'Flow limit exceeded.'),
      expected: {
        status: 429,
        retryable: true,
        upstreamRequestId: 'r-1',
        body: {
          error: {
            message: 'The upstream is rate limiting requests: Flow limit exceeded. (volcengine code FlowLimitExceeded, request id r-1). Retry later.',
            type: 'rate_limit_error',
            code: 'rate_limit_exceeded',
            param: null,
          },
        },
      },
    },
    {
      name: 'InternalError: 502',
      status: 500,
      body: failure('InternalError', 'Service has some internal Error. Pls Contact With Admin.'),
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'r-1',
        body: {
          error: {
            message: 'The upstream failed: Service has some internal Error. Pls Contact With Admin. (volcengine code InternalError, request id r-1)',
            type: 'upstream_error',
            code: 'upstream_error',
            param: null,
          },
        },
      },
    },
    {
      name: 'ServiceUnavailable: 502',
      status: 503,
      body: failure('ServiceUnavailable', 'Service unavailable.'),
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'r-1',
        body: {
          error: {
            message: 'The upstream failed: Service unavailable. (volcengine code ServiceUnavailable, request id r-1)',
            type: 'upstream_error',
            code: 'upstream_error',
            param: null,
          },
        },
      },
    },
    {
      name: 'an Error in a 200 envelope is still a failure (unknown code: server)',
      status: 200,
      body: failure('SomethingNew', 'odd'),
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'r-1',
        body: { error: { message: 'The upstream failed: odd (volcengine code SomethingNew, request id r-1)', type: 'upstream_error', code: 'upstream_error', param: null } },
      },
    },
    {
      name: 'a non-envelope 502 (a proxy page): the status decides, header request id',
      status: 502,
      body: undefined,
      headerRequestId: 'h-9',
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'h-9',
        body: { error: { message: 'The upstream failed: HTTP 502 (volcengine, request id h-9)', type: 'upstream_error', code: 'upstream_error', param: null } },
      },
    },
    {
      name: 'a 2xx without Result.Id',
      status: 200,
      body: { ResponseMetadata: METADATA, Result: {} },
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'r-1',
        body: {
          error: {
            message: 'The volcengine upstream returned an unusable response: the CreateAsset answer has no Result.Id (request id r-1)',
            type: 'upstream_error',
            code: 'upstream_bad_response',
            param: null,
          },
        },
      },
    },
    {
      name: 'a 2xx with an empty Result.Id',
      status: 200,
      body: { ResponseMetadata: METADATA, Result: { Id: '' } },
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'r-1',
        body: {
          error: {
            message: 'The volcengine upstream returned an unusable response: the CreateAsset answer has no Result.Id (request id r-1)',
            type: 'upstream_error',
            code: 'upstream_bad_response',
            param: null,
          },
        },
      },
    },
    {
      name: 'a 2xx whose body is not JSON',
      status: 200,
      body: undefined,
      expected: {
        status: 502,
        retryable: true,
        body: {
          error: {
            message: 'The volcengine upstream returned an unusable response: the body is not a JSON object',
            type: 'upstream_error',
            code: 'upstream_bad_response',
            param: null,
          },
        },
      },
    },
  ])('$name', ({ status, body, headerRequestId, expected }) => {
    expect(summary(thrown(() => readCreateAssetResponse(status, body, headerRequestId)))).toEqual(expected);
  });
});
