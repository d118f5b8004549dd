// Which failures count against an upstream's health (docs/routing-and-health.md "What counts"), by table.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/errors/gateway-error.js';
import { healthOutcomeOf } from '../../lib/gateway/routing/health-failure.js';

describe('healthOutcomeOf', () => {
  it.each<{ name: string; error: unknown; expected: ReturnType<typeof healthOutcomeOf> }>([
    { name: 'upstream 401', error: GatewayError.fromUpstream({ provider: 'openai', status: 401 }), expected: { account: true } },
    { name: 'upstream 403', error: GatewayError.fromUpstream({ provider: 'openai', status: 403 }), expected: { account: true } },
    { name: 'quota exhausted', error: GatewayError.fromUpstream({ provider: 'dashscope', status: 400, upstreamCode: 'Arrearage', kind: 'quota' }), expected: { account: true } },
    { name: '429 with its Retry-After', error: GatewayError.fromUpstream({ provider: 'openai', status: 429, retryAfterSeconds: 20 }), expected: { account: false, rest: true, retryAfterMs: 20_000 } },
    {
      name: '429 with a Retry-After that cannot be read',
      error: GatewayError.fromUpstream({ provider: 'openai', status: 429, retryAfterSeconds: 'unreadable' }),
      expected: { account: false, rest: true },
    },
    { name: '429 without Retry-After', error: GatewayError.fromUpstream({ provider: 'openai', status: 429 }), expected: { account: false } },
    { name: '503', error: GatewayError.fromUpstream({ provider: 'openai', status: 503 }), expected: { account: false, callerOwn: true } },
    { name: '500', error: GatewayError.fromUpstream({ provider: 'openai', status: 500 }), expected: { account: false, callerOwn: true } },
    { name: 'an unreadable answer', error: GatewayError.badUpstreamResponse('openai', 'not JSON'), expected: { account: false, callerOwn: true } },
    { name: 'refused connection', error: GatewayError.upstreamUnreachable('openai', 'ECONNREFUSED', { notStarted: true }), expected: { account: false } },
    { name: 'reset after the request was written', error: GatewayError.upstreamUnreachable('openai', 'ECONNRESET'), expected: { account: false, callerOwn: true } },
    { name: 'connect timeout', error: GatewayError.upstreamTimeout('openai', 1000, { notStarted: true }), expected: { account: false } },
    { name: 'timeout after the request was written', error: GatewayError.upstreamTimeout('openai', 1000), expected: { account: false, callerOwn: true } },
    { name: "the caller's 400", error: GatewayError.fromUpstream({ provider: 'openai', status: 400 }), expected: 'answered' },
    { name: 'content policy', error: GatewayError.fromUpstream({ provider: 'openai', status: 400, upstreamCode: 'content_policy_violation', kind: 'content_policy' }), expected: 'answered' },
    { name: 'a client that went away', error: new Error('aborted'), expected: 'neutral' },
    { name: "the gateway's own failure", error: GatewayError.internal(), expected: 'neutral' },
  ])('$name', ({ error, expected }) => {
    expect(healthOutcomeOf(error)).toEqual(expected);
  });
});
