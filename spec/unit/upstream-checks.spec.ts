// A provider's own Upstream fields are checked by the provider (Provider.checkUpstream), asked through the
// registry for every resolver answer (docs/architecture.md "Providers and the registry").
import { describe, expect, it } from 'vitest';
import { upstreamProblem } from '../../lib/providers/registry.js';
import type { Upstream } from '../../lib/types.js';

const token = (): string => 'token';

describe('upstreamProblem', () => {
  it.each<{ name: string; upstream: Upstream; problem: string | undefined }>([
    {
      name: 'vertex without project',
      upstream: { provider: 'vertex', baseURL: 'https://aiplatform.example/v1', getAccessToken: token },
      problem: "provider 'vertex' needs project and getAccessToken",
    },
    {
      name: 'vertex with an empty project',
      upstream: { provider: 'vertex', baseURL: 'https://aiplatform.example/v1', project: '', getAccessToken: token },
      problem: "provider 'vertex' needs project and getAccessToken",
    },
    {
      name: 'vertex without a token function',
      upstream: { provider: 'vertex', baseURL: 'https://aiplatform.example/v1', project: 'p' },
      problem: "provider 'vertex' needs project and getAccessToken",
    },
    { name: 'vertex with both', upstream: { provider: 'vertex', baseURL: 'https://aiplatform.example/v1', project: 'p', getAccessToken: token }, problem: undefined },
    { name: 'a provider with no fields of its own', upstream: { provider: 'gemini', baseURL: 'https://generativelanguage.example/v1beta' }, problem: undefined },
    { name: 'a name no provider has', upstream: { provider: 'nobody' as Upstream['provider'], baseURL: 'https://upstream.example' }, problem: undefined },
  ])('$name', ({ upstream, problem }) => {
    expect(upstreamProblem(upstream)).toBe(problem);
  });
});
