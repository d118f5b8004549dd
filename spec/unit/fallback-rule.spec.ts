// GatewayError.notStarted, the input of the fallback rule (docs/errors.md "Which failures are retried upstream"): which upstream answers
// certainly came before any work began. Only those let withFallback try the next upstream.
import { describe, expect, it } from 'vitest';
import { GatewayError, type UpstreamFailure } from '../../lib/errors/gateway-error.js';
import { withFallback } from '../../lib/gateway/routing/fallback.js';
import { attempting, usageFor } from '../../lib/gateway/use-case.js';
import { resolveOptions } from '../../lib/gateway/resolve-options.js';
import type { Upstream } from '../../lib/types.js';

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

// withFallback is a promise chain (no suspended async frames beside a slow upstream); an
// attempt that throws before it has a promise must still count as that upstream's failure.
describe('withFallback: an attempt that throws synchronously', () => {
  const upstreams: Upstream[] = [
    { provider: 'dashscope', baseURL: 'https://first.example/api/v1', apiKey: 'sk-first-secret' },
    { provider: 'dashscope', baseURL: 'https://second.example/api/v1' },
  ];
  const info = { route: 'images.generations', model: 'x-image' } as const;

  it('falls back when the throw is a not-started failure, and logs it without the key', async () => {
    const warnings: string[] = [];
    const options = resolveOptions({ verifyKey: () => null, resolveUpstream: () => null, logger: { warn: (_fields, message) => warnings.push(message) } });
    const tried: string[] = [];
    const answer = await withFallback(upstreams, options, info, { usage: {} }, (upstream) => {
      tried.push(upstream.baseURL);
      if (tried.length === 1) throw GatewayError.upstreamUnreachable('dashscope', 'ECONNREFUSED sk-first-secret', { notStarted: true });
      return Promise.resolve('second');
    });
    expect(answer).toBe('second');
    expect(tried).toEqual(['https://first.example/api/v1', 'https://second.example/api/v1']);
    expect(warnings).toEqual(['upstream failed, trying the next one']);
  });

  it('rejects (never throws) when the throw rules out the next upstream, with the key cut out', async () => {
    const options = resolveOptions({ verifyKey: () => null, resolveUpstream: () => null });
    let running: Promise<string> | undefined;
    expect(() => {
      running = withFallback(upstreams, options, info, { usage: {} }, () => {
        throw GatewayError.upstreamUnreachable('dashscope', 'ECONNRESET sk-first-secret');
      });
    }).not.toThrow();
    const error = await running!.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).message).not.toContain('sk-first-secret');
  });
});

// every attempt the rule runs is booked under the id the vendor answered (docs/tenancy-and-billing.md "The books")
describe('withFallback: the ids of the attempts it runs', () => {
  const upstreams: Upstream[] = [
    { provider: 'openai', baseURL: 'https://first.example/v1' },
    { provider: 'openai', baseURL: 'https://second.example/v1' },
  ];
  const info = { route: 'images.generations', model: 'gpt-image-1' } as const;
  const options = resolveOptions({ verifyKey: () => null, resolveUpstream: () => null, logger: false });

  it('books a refusal it passed over under its failure id, and the answer under the id the answer names', async () => {
    const usage = usageFor('gpt-image-1');
    const answer = await withFallback(upstreams, options, info, { usage, idOf: (sent: { id: string }) => sent.id }, (upstream) => {
      attempting(usage, upstream.provider);
      if (upstream.baseURL.startsWith('https://first')) throw GatewayError.fromUpstream({ provider: 'openai', status: 429, requestId: 'req_refused' });
      return Promise.resolve({ id: 'req_answered' });
    });
    expect(answer).toEqual({ id: 'req_answered' });
    expect(usage.attempts?.map((attempt) => attempt.id)).toEqual(['req_refused', 'req_answered']);
  });

  it('keeps an id the call recorded itself, and books nothing for a try that recorded no attempt', async () => {
    const usage = usageFor('gpt-image-1');
    const failure = await withFallback(upstreams, options, info, { usage }, (upstream) => {
      if (upstream.baseURL.startsWith('https://first')) throw GatewayError.upstreamUnreachable('openai', 'ECONNREFUSED', { notStarted: true });
      attempting(usage, upstream.provider).id = 'task-1';
      return Promise.reject(GatewayError.fromUpstream({ provider: 'openai', status: 500, requestId: 'req_failed' }));
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayError);
    expect(usage.attempts?.map((attempt) => attempt.id)).toEqual(['task-1']);
  });
});
