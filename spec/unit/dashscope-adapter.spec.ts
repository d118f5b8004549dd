// DashScope adapter translation (upstreams §1.3, §1.4): request, response and error normalization.
import { describe, expect, it } from 'vitest';
import { GatewayError, type GatewayErrorBody } from '../../lib/errors/gateway-error.js';
import type { ImageGenerationResponse } from '../../lib/images/image-generation-response.js';
import type { ImageGenerationRequest } from '../../lib/images/image-request.js';
import { type DashscopeImageRequest, normalizeDashscopeError, translateImageRequest, translateImageResponse } from '../../lib/providers/dashscope/dashscope.js';
import { thrown } from '../helpers/thrown.js';

/** The whole client-visible error plus the fields the router acts on. */
function summary(error: GatewayError): { status: number; retryable: boolean; upstreamRequestId?: string; body: GatewayErrorBody } {
  return { status: error.status, retryable: error.retryable, upstreamRequestId: error.upstreamRequestId, body: error.toJSON() };
}

function request(overrides: Partial<ImageGenerationRequest>): ImageGenerationRequest {
  return { model: 'x-image-2.0', content: [{ text: 'a cat' }], parameters: {}, responseFormat: 'url', ...overrides };
}

describe('translateImageRequest', () => {
  it.each<{ name: string; request: ImageGenerationRequest; upstreamModel: string; expected: DashscopeImageRequest }>([
    {
      name: 'text-to-image with parameters',
      request: request({
        model: 'x-image-max',
        content: [{ text: 'winter street in Beijing' }],
        parameters: { negative_prompt: 'low quality', n: 1, prompt_extend: true, watermark: false, size: '1664*928', seed: 233 },
      }),
      upstreamModel: 'qwen-image-max',
      expected: {
        model: 'qwen-image-max',
        input: { messages: [{ role: 'user', content: [{ text: 'winter street in Beijing' }] }] },
        parameters: { negative_prompt: 'low quality', n: 1, prompt_extend: true, watermark: false, size: '1664*928', seed: 233 },
      },
    },
    {
      name: 'single-image edit keeps the image before the text',
      request: request({
        model: 'x-image-edit',
        content: [{ image: 'https://example.com/in.png' }, { text: 'make it blue' }],
        parameters: { watermark: false, size: '1024*1024' },
      }),
      upstreamModel: 'qwen-image-edit',
      expected: {
        model: 'qwen-image-edit',
        input: { messages: [{ role: 'user', content: [{ image: 'https://example.com/in.png' }, { text: 'make it blue' }] }] },
        parameters: { watermark: false, size: '1024*1024' },
      },
    },
    {
      name: 'multi-image edit keeps the caller order (spec §2.2 rule 4)',
      request: request({
        model: 'x-image-edit-plus',
        content: [
          { image: 'https://example.com/subject.png' },
          { image: 'data:image/png;base64,iVBORw0KGgo=' },
          { image: 'https://example.com/background.png' },
          { text: 'The girl in Image 1 wears the dress in Image 2 in front of Image 3' },
        ],
        parameters: { n: 2, size: '1024*1536' },
      }),
      upstreamModel: 'qwen-image-edit-plus',
      expected: {
        model: 'qwen-image-edit-plus',
        input: {
          messages: [
            {
              role: 'user',
              content: [
                { image: 'https://example.com/subject.png' },
                { image: 'data:image/png;base64,iVBORw0KGgo=' },
                { image: 'https://example.com/background.png' },
                { text: 'The girl in Image 1 wears the dress in Image 2 in front of Image 3' },
              ],
            },
          ],
        },
        parameters: { n: 2, size: '1024*1536' },
      },
    },
    {
      name: 'empty parameters are left out (DashScope has BadRequest.EmptyParameters)',
      request: request({ parameters: {} }),
      upstreamModel: 'qwen-image-2.0',
      expected: { model: 'qwen-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'a cat' }] }] } },
    },
    {
      name: "the upstream model name replaces the caller's",
      request: request({ model: 'x-image-2.0-pro', parameters: { n: 2 } }),
      upstreamModel: 'qwen-image-2.0-pro-2026-03-01',
      expected: {
        model: 'qwen-image-2.0-pro-2026-03-01',
        input: { messages: [{ role: 'user', content: [{ text: 'a cat' }] }] },
        parameters: { n: 2 },
      },
    },
  ])('$name', ({ request, upstreamModel, expected }) => {
    // toStrictEqual: no `parameters: undefined`, no gateway-only fields (responseFormat)
    expect(translateImageRequest(request, upstreamModel)).toStrictEqual(expected);
  });
});

// upstreams §1.3, verbatim capture (HTTP 200)
const CAPTURED_SUCCESS = JSON.parse(
  '{"output":{"choices":[{"finish_reason":"stop","message":{"content":[{"image":"https://dashscope-7c2c.oss-cn-shanghai.aliyuncs.com/7d/93/20260611/d23adf3d/5795d646-…233.png?Expires=1781778573&OSSAccessKeyId=…&Signature=…"}],"role":"assistant"}}],"task_metric":{"FAILED":0,"SUCCEEDED":1,"TOTAL":1}},"usage":{"height":928,"image_count":1,"width":1664},"request_id":"5795d646-7395-91d2-85d7-34d8b99a3d8d"}',
) as unknown;

const CAPTURED_URL = 'https://dashscope-7c2c.oss-cn-shanghai.aliyuncs.com/7d/93/20260611/d23adf3d/5795d646-…233.png?Expires=1781778573&OSSAccessKeyId=…&Signature=…';

function choice(content: unknown[]): unknown {
  return { finish_reason: 'stop', message: { role: 'assistant', content } };
}

describe('translateImageResponse', () => {
  it.each<{ name: string; body: unknown; now: number; headerRequestId?: string; expected: ImageGenerationResponse }>([
    {
      name: 'the verbatim capture of upstreams §1.3',
      body: CAPTURED_SUCCESS,
      now: 1_781_173_773_000,
      expected: {
        created: 1_781_173_773,
        data: [{ url: CAPTURED_URL, b64_json: '', revised_prompt: '' }],
        extra: { request_id: '5795d646-7395-91d2-85d7-34d8b99a3d8d' },
        // for the usage event (the pipeline takes them off the answer): usage.width x usage.height per image
        sizes: ['1664x928'],
        usage: { height: 928, image_count: 1, width: 1664 },
      },
    },
    {
      name: 'several choices: one entry per image, in order',
      body: {
        output: { choices: [choice([{ image: 'https://cdn.example/1.png' }]), choice([{ image: 'https://cdn.example/2.png' }])] },
        request_id: 'req-2',
      },
      now: 1_000,
      expected: {
        created: 1,
        data: [
          { url: 'https://cdn.example/1.png', b64_json: '', revised_prompt: '' },
          { url: 'https://cdn.example/2.png', b64_json: '', revised_prompt: '' },
        ],
        extra: { request_id: 'req-2' },
      },
    },
    {
      name: 'several images in one choice',
      body: {
        output: {
          choices: [choice([{ image: 'https://cdn.example/a.png' }, { image: 'https://cdn.example/b.png' }, { image: 'https://cdn.example/c.png' }])],
        },
        request_id: 'req-3',
      },
      now: 2_000,
      expected: {
        created: 2,
        data: [
          { url: 'https://cdn.example/a.png', b64_json: '', revised_prompt: '' },
          { url: 'https://cdn.example/b.png', b64_json: '', revised_prompt: '' },
          { url: 'https://cdn.example/c.png', b64_json: '', revised_prompt: '' },
        ],
        extra: { request_id: 'req-3' },
      },
    },
    {
      name: "a text item becomes the revised_prompt of its own choice's images only",
      body: {
        output: {
          choices: [choice([{ text: 'A snowy Beijing street at dusk, cinematic' }, { image: 'https://cdn.example/a.png' }]), choice([{ image: 'https://cdn.example/b.png' }])],
        },
        request_id: 'req-4',
      },
      now: 3_000,
      expected: {
        created: 3,
        data: [
          { url: 'https://cdn.example/a.png', b64_json: '', revised_prompt: 'A snowy Beijing street at dusk, cinematic' },
          { url: 'https://cdn.example/b.png', b64_json: '', revised_prompt: '' },
        ],
        extra: { request_id: 'req-4' },
      },
    },
    {
      name: 'a data: image becomes b64_json with an empty url',
      body: { output: { choices: [choice([{ image: 'data:image/png;base64,iVBORw0KGgo=' }])] }, request_id: 'req-5' },
      now: 4_000,
      expected: { created: 4, data: [{ url: '', b64_json: 'iVBORw0KGgo=', revised_prompt: '' }], extra: { request_id: 'req-5' } },
    },
    {
      name: 'a missing request_id falls back to the header id',
      body: { output: { choices: [choice([{ image: 'https://cdn.example/a.png' }])] } },
      now: 5_000,
      headerRequestId: 'hdr-6',
      expected: { created: 5, data: [{ url: 'https://cdn.example/a.png', b64_json: '', revised_prompt: '' }], extra: { request_id: 'hdr-6' } },
    },
    {
      name: 'the body request_id wins over the header id',
      body: { output: { choices: [choice([{ image: 'https://cdn.example/a.png' }])] }, request_id: 'body-7' },
      now: 6_000,
      headerRequestId: 'hdr-7',
      expected: { created: 6, data: [{ url: 'https://cdn.example/a.png', b64_json: '', revised_prompt: '' }], extra: { request_id: 'body-7' } },
    },
    {
      name: 'no request id anywhere: an empty string (spec §2.4 says request_id is a string)',
      body: { output: { choices: [choice([{ image: 'https://cdn.example/a.png' }])] } },
      now: 7_000,
      expected: { created: 7, data: [{ url: 'https://cdn.example/a.png', b64_json: '', revised_prompt: '' }], extra: { request_id: '' } },
    },
    {
      name: 'created is floor(now / 1000), never rounded up',
      body: { output: { choices: [choice([{ image: 'https://cdn.example/a.png' }])] }, request_id: 'req-9' },
      now: 1_700_000_000_999,
      expected: {
        created: 1_700_000_000,
        data: [{ url: 'https://cdn.example/a.png', b64_json: '', revised_prompt: '' }],
        extra: { request_id: 'req-9' },
      },
    },
  ])('$name', ({ body, now, headerRequestId, expected }) => {
    expect(translateImageResponse(body, { now, headerRequestId })).toEqual(expected);
  });

  it.each<{ name: string; body: unknown; headerRequestId?: string; message: string; upstreamRequestId?: string }>([
    {
      name: 'a choice with no image names its finish_reason',
      body: { output: { choices: [choice([{ text: 'sorry' }])] }, request_id: 'r-none' },
      message: 'The dashscope upstream returned no image (finish_reason stop); check the prompt is in input.messages[].content[] (request id r-none)',
      upstreamRequestId: 'r-none',
    },
    {
      name: 'no choices at all',
      body: { output: { choices: [] }, request_id: 'r-empty' },
      message: 'The dashscope upstream returned no image; check the prompt is in input.messages[].content[] (request id r-empty)',
      upstreamRequestId: 'r-empty',
    },
    {
      name: 'no output and no code, header id used',
      body: {},
      headerRequestId: 'hdr-x',
      message: 'The dashscope upstream returned no image; check the prompt is in input.messages[].content[] (request id hdr-x)',
      upstreamRequestId: 'hdr-x',
    },
    {
      name: 'a body that is not an object',
      body: 'not json',
      message: 'The dashscope upstream returned no image; check the prompt is in input.messages[].content[]',
    },
  ])('no image: 502 upstream_no_image ($name)', ({ body, headerRequestId, message, upstreamRequestId }) => {
    const error = thrown(() => translateImageResponse(body, { now: 0, headerRequestId }));
    expect(summary(error)).toEqual({
      status: 502,
      // the same request would get no image from another upstream either
      retryable: false,
      upstreamRequestId,
      body: { error: { message, type: 'upstream_error', code: 'upstream_no_image', param: null } },
    });
  });

  it.each<{ name: string; body: Record<string, unknown>; headerRequestId?: string; status: number; code: string; type: string; message: string }>([
    {
      name: 'InvalidParameter',
      body: { code: 'InvalidParameter', message: 'size is not supported', request_id: 'r-200a' },
      status: 400,
      code: 'invalid_request_error',
      type: 'invalid_request_error',
      message: 'The upstream rejected the request: size is not supported (dashscope code InvalidParameter, request id r-200a)',
    },
    {
      name: 'DataInspectionFailed',
      body: { code: 'DataInspectionFailed', message: 'Input data may contain inappropriate content.', request_id: 'r-200b' },
      status: 400,
      code: 'content_policy_violation',
      type: 'invalid_request_error',
      message: 'The upstream rejected the content as inappropriate: Input data may contain inappropriate content. (dashscope code DataInspectionFailed, request id r-200b)',
    },
    {
      name: 'an unknown code is an upstream failure, request id from the header',
      body: { code: 'SomethingOdd', message: 'odd' },
      headerRequestId: 'hdr-200c',
      status: 502,
      code: 'upstream_error',
      type: 'upstream_error',
      message: 'The upstream failed: odd (dashscope code SomethingOdd, request id hdr-200c)',
    },
  ])('a 200 body with code and no output is normalized ($name)', ({ body, headerRequestId, status, code, type, message }) => {
    const error = thrown(() => translateImageResponse(body, { now: 0, headerRequestId }));
    expect(error.status).toBe(status);
    expect(error.toJSON()).toEqual({ error: { message, type, code, param: null } });
  });
});

describe('normalizeDashscopeError', () => {
  it.each<{
    name: string;
    status: number;
    body: unknown;
    headerRequestId?: string;
    expected: { status: number; retryable: boolean; upstreamRequestId?: string; body: GatewayErrorBody };
  }>([
    {
      name: '400 InvalidParameter -> 400 invalid_request_error',
      status: 400,
      body: { code: 'InvalidParameter', message: 'Role must be user or assistant and Content length must be greater than 0', request_id: 'a5898c04-0001' },
      expected: {
        status: 400,
        retryable: false,
        upstreamRequestId: 'a5898c04-0001',
        body: {
          error: {
            message: 'The upstream rejected the request: Role must be user or assistant and Content length must be greater than 0 (dashscope code InvalidParameter, request id a5898c04-0001)',
            type: 'invalid_request_error',
            code: 'invalid_request_error',
            param: null,
          },
        },
      },
    },
    {
      name: '400 DataInspectionFailed -> 400 content_policy_violation',
      status: 400,
      body: { request_id: 'dif-1', code: 'DataInspectionFailed', message: 'Input data may contain inappropriate content.' },
      expected: {
        status: 400,
        retryable: false,
        upstreamRequestId: 'dif-1',
        body: {
          error: {
            message: 'The upstream rejected the content as inappropriate: Input data may contain inappropriate content. (dashscope code DataInspectionFailed, request id dif-1)',
            type: 'invalid_request_error',
            code: 'content_policy_violation',
            param: null,
          },
        },
      },
    },
    ...(['Throttling', 'Throttling.RateQuota', 'Throttling.AllocationQuota'] as const).map((upstreamCode) => ({
      name: `429 ${upstreamCode} -> 429 rate_limit_exceeded`,
      status: 429,
      body: { code: upstreamCode, message: 'Requests rate limit exceeded, please try again later.', request_id: `thr-${upstreamCode}` },
      expected: {
        status: 429,
        retryable: true,
        upstreamRequestId: `thr-${upstreamCode}`,
        body: {
          error: {
            message: `The upstream is rate limiting requests: Requests rate limit exceeded, please try again later. (dashscope code ${upstreamCode}, request id thr-${upstreamCode}). Retry later.`,
            type: 'rate_limit_error',
            code: 'rate_limit_exceeded',
            param: null,
          },
        },
      },
    })),
    {
      name: '401 InvalidApiKey -> 502 upstream_auth_failed, upstream message not repeated',
      status: 401,
      body: { code: 'InvalidApiKey', message: 'Invalid API-key provided.', request_id: 'a1c0561c-1dfe-98a6-a62f-983577b8bc5e' },
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'a1c0561c-1dfe-98a6-a62f-983577b8bc5e',
        body: {
          error: {
            message:
              "The upstream rejected the gateway's own credentials (an operator configuration problem, not your key) (dashscope code InvalidApiKey, request id a1c0561c-1dfe-98a6-a62f-983577b8bc5e).",
            type: 'upstream_error',
            code: 'upstream_auth_failed',
            param: null,
          },
        },
      },
    },
    {
      name: '403 AccessDenied -> 502 upstream_auth_failed',
      status: 403,
      body: { code: 'AccessDenied', message: 'Access denied for key sk-operator-secret', request_id: 'ad-1' },
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'ad-1',
        body: {
          error: {
            message: "The upstream rejected the gateway's own credentials (an operator configuration problem, not your key) (dashscope code AccessDenied, request id ad-1).",
            type: 'upstream_error',
            code: 'upstream_auth_failed',
            param: null,
          },
        },
      },
    },
    {
      name: '400 Arrearage -> 502 upstream_quota_exceeded',
      status: 400,
      body: { code: 'Arrearage', message: 'Access denied, please make sure your account is in good standing.', request_id: 'arr-1' },
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'arr-1',
        body: {
          error: {
            message: "The operator's upstream account cannot serve requests now: Access denied, please make sure your account is in good standing. (dashscope code Arrearage, request id arr-1).",
            type: 'upstream_error',
            code: 'upstream_quota_exceeded',
            param: null,
          },
        },
      },
    },
    {
      name: '500 InternalError -> 502 upstream_error',
      status: 500,
      body: { code: 'InternalError', message: 'An internal error has occured, please try again later.', request_id: 'ie-1' },
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'ie-1',
        body: {
          error: {
            message: 'The upstream failed: An internal error has occured, please try again later. (dashscope code InternalError, request id ie-1)',
            type: 'upstream_error',
            code: 'upstream_error',
            param: null,
          },
        },
      },
    },
    {
      name: '503 with a non-JSON body (parsed as undefined) -> 502, header request id kept',
      status: 503,
      body: undefined,
      headerRequestId: 'hdr-503',
      expected: {
        status: 502,
        retryable: true,
        upstreamRequestId: 'hdr-503',
        body: { error: { message: 'The upstream failed: HTTP 503 (dashscope, request id hdr-503)', type: 'upstream_error', code: 'upstream_error', param: null } },
      },
    },
    {
      name: '503 with an HTML string body -> 502',
      status: 503,
      body: '<html><body>Service Unavailable</body></html>',
      expected: {
        status: 502,
        retryable: true,
        body: { error: { message: 'The upstream failed: HTTP 503 (dashscope)', type: 'upstream_error', code: 'upstream_error', param: null } },
      },
    },
  ])('$name', ({ status, body, headerRequestId, expected }) => {
    const error = normalizeDashscopeError(status, body, headerRequestId);
    expect(error).toBeInstanceOf(GatewayError);
    expect({ status: error.status, retryable: error.retryable, upstreamRequestId: error.upstreamRequestId, body: error.toJSON() }).toEqual(expected);
    // the body is the contract §2.5 object and nothing more
    expect(Object.keys(error.toJSON())).toEqual(['error']);
    expect(Object.keys(error.toJSON().error).sort()).toEqual(['code', 'message', 'param', 'type']);
    if (expected.upstreamRequestId) expect(error.message).toContain(expected.upstreamRequestId);
  });

  it.each([
    { status: 401, code: 'InvalidApiKey', message: 'Invalid API-key provided: sk-live-0123456789' },
    { status: 403, code: 'AccessDenied', message: 'Access denied for key sk-live-0123456789' },
  ])('$status $code: the upstream message (which may quote the operator key) is not echoed', ({ status, code, message }) => {
    const error = normalizeDashscopeError(status, { code, message, request_id: 'r' });
    expect(error.message).not.toContain(message);
    expect(error.message).not.toContain('sk-live');
    expect(error.status).toBe(502);
  });
});
