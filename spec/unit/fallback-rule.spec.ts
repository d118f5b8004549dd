// GatewayError.notStarted, the input of the fallback rule (issue 9 item 14): which upstream answers
// certainly came before any work began. Only those let withFallback try the next upstream.
import { describe, expect, it } from 'vitest';
import { GatewayError, type UpstreamFailure } from '../../lib/errors/gateway-error.js';

describe('GatewayError.fromUpstream: notStarted', () => {
  it.each<[string, Omit<UpstreamFailure, 'provider'>, boolean]>([
    ['429 rate limit', { status: 429 }, true],
    ['503 unavailable', { status: 503 }, true],
    ['503 with a server code', { status: 503, upstreamCode: 'ServiceUnavailable', kind: 'server' }, true],
    ['401 operator key refused', { status: 401 }, true],
    ['403 operator key refused', { status: 403 }, true],
    ['402 quota', { status: 402 }, true],
    ['a rate-limit code inside a 200', { status: 200, upstreamCode: 'Throttling', kind: 'rate_limit' }, true],
    ['500 internal error', { status: 500 }, false],
    ['502 bad gateway', { status: 502 }, false],
    ['504 gateway timeout', { status: 504 }, false],
    ['an error code inside a 200', { status: 200, upstreamCode: 'InternalError', kind: 'server' }, false],
    ['400 the caller caused', { status: 400 }, false],
    ['404 model mapping', { status: 404 }, false],
    ['content policy', { status: 400, kind: 'content_policy' }, false],
  ])('%s: notStarted %s', (_name, failure, notStarted) => {
    expect(GatewayError.fromUpstream({ provider: 'dashscope', ...failure }).notStarted).toBe(notStarted);
  });
});

describe('transport errors: notStarted', () => {
  it.each([
    ['a timeout after the request was written', GatewayError.upstreamTimeout('ark', 1000), false],
    ['a connect timeout', GatewayError.upstreamTimeout('ark', 1000, { notStarted: true }), true],
    ['a reset after the request was written', GatewayError.upstreamUnreachable('ark', 'ECONNRESET'), false],
    ['connection refused', GatewayError.upstreamUnreachable('ark', 'ECONNREFUSED', { notStarted: true }), true],
    ['an unreadable answer', GatewayError.badUpstreamResponse('ark', 'the body is not JSON'), false],
  ])('%s: notStarted %s', (_name, error, notStarted) => {
    expect(error.notStarted).toBe(notStarted);
  });

  it('survives withoutSecrets', () => {
    const error = GatewayError.upstreamUnreachable('ark', 'ECONNREFUSED sk-operator', { notStarted: true }).withoutSecrets(['sk-operator']);
    expect(error.message).not.toContain('sk-operator');
    expect(error.notStarted).toBe(true);
  });
});
