// OpenAI-compatible adapter translation (upstreams §4.5, §2.8): model rename and error normalization.
import { describe, expect, it } from 'vitest';
import { GatewayError, type GatewayErrorBody } from '../../lib/errors/gateway-error.js';
import { normalizeOpenAIError, translateOpenAIRequest } from '../../lib/providers/openai/openai.js';

describe('translateOpenAIRequest', () => {
  it.each<{ name: string; body: Record<string, unknown>; upstreamModel: string; expected: Record<string, unknown> }>([
    {
      name: 'chat body: only the model changes',
      body: { model: 'my-chat', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } },
      upstreamModel: 'qwen-plus',
      expected: { model: 'qwen-plus', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } },
    },
    {
      name: 'image body: vendor fields pass through',
      body: { model: 'gpt-image-1', prompt: 'a cat', size: '1024x1024', n: 2, response_format: 'b64_json', moderation: 'low' },
      upstreamModel: 'gpt-image-1',
      expected: { model: 'gpt-image-1', prompt: 'a cat', size: '1024x1024', n: 2, response_format: 'b64_json', moderation: 'low' },
    },
    {
      name: 'a body without model gets one',
      body: { input: 'hello' },
      upstreamModel: 'doubao-seed-1-6',
      expected: { input: 'hello', model: 'doubao-seed-1-6' },
    },
  ])('$name', ({ body, upstreamModel, expected }) => {
    const before = structuredClone(body);
    expect(translateOpenAIRequest(body, upstreamModel)).toStrictEqual(expected);
    expect(body).toStrictEqual(before); // the caller's body is not mutated
  });

  it('hands back the body itself when its model already is the upstream model, and a copy otherwise', () => {
    const body = { model: 'gpt-image-1', prompt: 'a cat' };
    expect(translateOpenAIRequest(body, 'gpt-image-1')).toBe(body);
    expect(translateOpenAIRequest(body, 'gpt-image-1.5')).not.toBe(body);
  });
});

describe('normalizeOpenAIError', () => {
  it.each<{
    name: string;
    status: number;
    body: unknown;
    headerRequestId?: string;
    provider?: string;
    expected: { status: number; retryable: boolean; body: GatewayErrorBody };
  }>([
    {
      name: '400 invalid_request_error -> 400',
      status: 400,
      body: { error: { message: "Invalid value for 'size'.", type: 'invalid_request_error', param: 'size', code: null } },
      headerRequestId: 'req_400',
      expected: {
        status: 400,
        retryable: false,
        body: {
          error: {
            message: "The upstream rejected the request: Invalid value for 'size'. (openai code invalid_request_error, request id req_400)",
            type: 'invalid_request_error',
            code: 'invalid_request_error',
            param: 'size',
          },
        },
      },
    },
    {
      name: '401 invalid_api_key -> 502 upstream_auth_failed',
      status: 401,
      body: { error: { message: 'Incorrect API key provided: sk-proj-****abcd', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
      headerRequestId: 'req_401',
      expected: {
        status: 502,
        retryable: true,
        body: {
          error: {
            message: "The upstream rejected the gateway's own credentials (an operator configuration problem, not your key) (openai code invalid_api_key, request id req_401).",
            type: 'upstream_error',
            code: 'upstream_auth_failed',
            param: null,
          },
        },
      },
    },
    {
      name: '429 rate_limit_exceeded -> 429',
      status: 429,
      body: { error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
      expected: {
        status: 429,
        retryable: true,
        body: {
          error: {
            message: 'The upstream is rate limiting requests: Rate limit reached for requests (openai code rate_limit_exceeded). Retry later.',
            type: 'rate_limit_error',
            code: 'rate_limit_exceeded',
            param: null,
          },
        },
      },
    },
    {
      name: '429 with no body -> 429 by status',
      status: 429,
      body: undefined,
      expected: {
        status: 429,
        retryable: true,
        body: { error: { message: 'The upstream is rate limiting requests: HTTP 429 (openai). Retry later.', type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null } },
      },
    },
    {
      name: '500 server_error -> 502',
      status: 500,
      body: { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } },
      headerRequestId: 'req_500',
      expected: {
        status: 502,
        retryable: true,
        body: {
          error: {
            message: 'The upstream failed: The server had an error while processing your request. (openai code server_error, request id req_500)',
            type: 'upstream_error',
            code: 'upstream_error',
            param: null,
          },
        },
      },
    },
    {
      name: '400 content_policy_violation -> 400 content_policy_violation',
      status: 400,
      body: { error: { message: 'Your request was rejected by the safety system.', type: 'invalid_request_error', param: null, code: 'content_policy_violation' } },
      expected: {
        status: 400,
        retryable: false,
        body: {
          error: {
            message: 'The upstream rejected the content as inappropriate: Your request was rejected by the safety system. (openai code content_policy_violation)',
            type: 'invalid_request_error',
            code: 'content_policy_violation',
            param: null,
          },
        },
      },
    },
    {
      name: '429 insufficient_quota -> 502 upstream_quota_exceeded (the operator account, not the caller)',
      status: 429,
      body: { error: { message: 'You exceeded your current quota.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } },
      expected: {
        status: 502,
        retryable: true,
        body: {
          error: {
            message: "The operator's upstream account cannot serve requests now: You exceeded your current quota. (openai code insufficient_quota).",
            type: 'upstream_error',
            code: 'upstream_quota_exceeded',
            param: null,
          },
        },
      },
    },
    {
      name: 'Ark 429 RateLimitExceeded.EndpointRPMExceeded -> 429',
      status: 429,
      provider: 'ark',
      body: { error: { code: 'RateLimitExceeded.EndpointRPMExceeded', message: 'RPM exceeded. Request id: 0217a', param: '', type: 'TooManyRequests' } },
      expected: {
        status: 429,
        retryable: true,
        body: {
          error: {
            message: 'The upstream is rate limiting requests: RPM exceeded. Request id: 0217a (ark code RateLimitExceeded.EndpointRPMExceeded). Retry later.',
            type: 'rate_limit_error',
            code: 'rate_limit_exceeded',
            param: null,
          },
        },
      },
    },
    {
      name: 'Ark 400 SensitiveContentDetected -> 400 content_policy_violation',
      status: 400,
      provider: 'ark',
      body: { error: { code: 'SensitiveContentDetected', message: 'The request failed because the input text may contain sensitive information.', param: '', type: 'BadRequest' } },
      expected: {
        status: 400,
        retryable: false,
        body: {
          error: {
            message: 'The upstream rejected the content as inappropriate: The request failed because the input text may contain sensitive information. (ark code SensitiveContentDetected)',
            type: 'invalid_request_error',
            code: 'content_policy_violation',
            param: null,
          },
        },
      },
    },
    {
      name: 'Ark 400 InvalidParameter (verbatim §2.8) -> 400',
      status: 400,
      provider: 'ark',
      body: {
        error: {
          code: 'InvalidParameter',
          message: 'One or more parameters specified in the request are not valid. Request id: 0217280951205813c183a1fb82c613f4d4485b7d388d5b4d02e7e',
          param: '',
          type: 'BadRequest',
        },
      },
      expected: {
        status: 400,
        retryable: false,
        body: {
          error: {
            message:
              'The upstream rejected the request: One or more parameters specified in the request are not valid. Request id: 0217280951205813c183a1fb82c613f4d4485b7d388d5b4d02e7e (ark code InvalidParameter)',
            type: 'invalid_request_error',
            code: 'invalid_request_error',
            param: null,
          },
        },
      },
    },
    {
      name: 'Ark 403 AccountOverdueError -> 502 upstream_quota_exceeded',
      status: 403,
      provider: 'ark',
      body: { error: { code: 'AccountOverdueError', message: 'Your account has an overdue balance.', param: '', type: 'Forbidden' } },
      expected: {
        status: 502,
        retryable: true,
        body: {
          error: {
            message: "The operator's upstream account cannot serve requests now: Your account has an overdue balance. (ark code AccountOverdueError).",
            type: 'upstream_error',
            code: 'upstream_quota_exceeded',
            param: null,
          },
        },
      },
    },
    {
      name: 'Ark 404 InvalidEndpointOrModel.NotFound -> 502 (operator mapping)',
      status: 404,
      provider: 'ark',
      body: { error: { code: 'InvalidEndpointOrModel.NotFound', message: 'The model does not exist.', param: '', type: 'NotFound' } },
      expected: {
        status: 502,
        retryable: true,
        body: {
          error: {
            message: 'The upstream failed: The model does not exist. (ark code InvalidEndpointOrModel.NotFound)',
            type: 'upstream_error',
            code: 'upstream_error',
            param: null,
          },
        },
      },
    },
    {
      name: 'a flat { message } body is still read',
      status: 400,
      body: { message: 'bad input' },
      expected: {
        status: 400,
        retryable: false,
        body: { error: { message: 'The upstream rejected the request: bad input (openai)', type: 'invalid_request_error', code: 'invalid_request_error', param: null } },
      },
    },
  ])('$name', ({ status, body, headerRequestId, provider, expected }) => {
    const error = normalizeOpenAIError(status, body, headerRequestId, provider);
    expect(error).toBeInstanceOf(GatewayError);
    expect({ status: error.status, retryable: error.retryable, body: error.toJSON() }).toEqual(expected);
  });

  it('401: the upstream message, which can quote the operator key, is not echoed', () => {
    const error = normalizeOpenAIError(401, { error: { message: 'Incorrect API key provided: sk-proj-abc123', type: 'invalid_request_error', code: 'invalid_api_key', param: null } });
    expect(error.message).not.toContain('sk-proj-abc123');
    expect(error.status).toBe(502);
  });
});
