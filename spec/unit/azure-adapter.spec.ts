// Azure OpenAI adapter rules (docs/providers/azure.md): the URL of each form, the credential headers,
// Azure's error bodies read as the gateway's, the upstream's Retry-After, and the catalogue rows it serves.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/errors/gateway-error.js';
import { azureAuth, azureUrl, normalizeAzureError } from '../../lib/providers/openai/azure.js';
import { tokenBudgetMs } from '../../lib/providers/host-token.js';
import { retryAfterOf } from '../../lib/providers/retry-after.js';
import { servesRowsOf } from '../../lib/providers/registry.js';
import type { Upstream } from '../../lib/types.js';
import { thrown } from '../helpers/thrown.js';

const ENDPOINT = 'https://contoso.openai.azure.com';

describe('azureUrl', () => {
  it.each<{ name: string; upstream: Partial<Upstream>; path: string; model?: string; expected: string }>([
    { name: 'v1 form from a bare endpoint', upstream: {}, path: '/images/generations', expected: `${ENDPOINT}/openai/v1/images/generations` },
    { name: 'v1 form, a trailing slash', upstream: { baseURL: `${ENDPOINT}/` }, path: '/images/edits', expected: `${ENDPOINT}/openai/v1/images/edits` },
    { name: 'v1 form, a base that names its path is kept', upstream: { baseURL: `${ENDPOINT}/openai/v1` }, path: '/images/edits', expected: `${ENDPOINT}/openai/v1/images/edits` },
    // openai-node's AzureOpenAI baseURL: the endpoint and `/openai`
    { name: "v1 form, the SDK's `{endpoint}/openai` base", upstream: { baseURL: `${ENDPOINT}/openai/` }, path: '/images/generations', expected: `${ENDPOINT}/openai/v1/images/generations` },
    {
      name: 'deployment form, a `{endpoint}/openai/v1` base',
      upstream: { baseURL: `${ENDPOINT}/openai/v1`, apiVersion: '2024-10-21', deployment: 'img' },
      path: '/images/generations',
      expected: `${ENDPOINT}/openai/deployments/img/images/generations?api-version=2024-10-21`,
    },
    {
      name: 'deployment form, a `{endpoint}/openai` base',
      upstream: { baseURL: `${ENDPOINT}/openai`, apiVersion: '2024-10-21', deployment: 'img' },
      path: '/responses',
      expected: `${ENDPOINT}/openai/responses?api-version=2024-10-21`,
    },
    { name: "v1 form, a proxy's own path is kept", upstream: { baseURL: 'https://proxy.example.com/azure' }, path: '/images/edits', expected: 'https://proxy.example.com/azure/images/edits' },
    {
      name: "deployment form behind a proxy's `/openai` path",
      upstream: { baseURL: 'https://proxy.example.com/azure/openai', apiVersion: '2024-10-21', deployment: 'img' },
      path: '/images/generations',
      expected: 'https://proxy.example.com/azure/openai/deployments/img/images/generations?api-version=2024-10-21',
    },
    {
      name: 'deployment form: the deployment, then the api-version',
      upstream: { apiVersion: '2025-04-01-preview', deployment: 'img-prod', model: 'gpt-image-1' },
      path: '/images/edits',
      expected: `${ENDPOINT}/openai/deployments/img-prod/images/edits?api-version=2025-04-01-preview`,
    },
    {
      name: 'deployment form: the deployment defaults to the upstream model',
      upstream: { apiVersion: '2024-10-21', model: 'gpt-image-1' },
      path: '/images/generations',
      expected: `${ENDPOINT}/openai/deployments/gpt-image-1/images/generations?api-version=2024-10-21`,
    },
    {
      name: 'deployment form: then to the model of the JSON body',
      upstream: { apiVersion: '2024-10-21' },
      path: '/images/generations',
      model: 'caller-model',
      expected: `${ENDPOINT}/openai/deployments/caller-model/images/generations?api-version=2024-10-21`,
    },
    {
      name: 'deployment form: names and versions are encoded',
      upstream: { apiVersion: '2024 10&x=1', deployment: 'a/b?c' },
      path: '/images/generations',
      expected: `${ENDPOINT}/openai/deployments/a%2Fb%3Fc/images/generations?api-version=2024%2010%26x%3D1`,
    },
    {
      name: 'deployment form: chat completions under the deployment',
      upstream: { apiVersion: '2024-10-21', deployment: 'chat-prod' },
      path: '/chat/completions',
      expected: `${ENDPOINT}/openai/deployments/chat-prod/chat/completions?api-version=2024-10-21`,
    },
    {
      name: 'deployment form: responses are not under a deployment',
      upstream: { apiVersion: '2025-04-01-preview', deployment: 'chat-prod' },
      path: '/responses',
      expected: `${ENDPOINT}/openai/responses?api-version=2025-04-01-preview`,
    },
    { name: 'v1 form: chat completions', upstream: { model: 'gpt-4.1' }, path: '/chat/completions', expected: `${ENDPOINT}/openai/v1/chat/completions` },
    {
      name: 'deployment form: a base that names its deployment gets no second one',
      upstream: { baseURL: `${ENDPOINT}/openai/deployments/img-prod`, apiVersion: '2024-10-21', deployment: 'other' },
      path: '/images/edits',
      expected: `${ENDPOINT}/openai/deployments/img-prod/images/edits?api-version=2024-10-21`,
    },
  ])('$name', ({ upstream, path, model, expected }) => {
    expect(azureUrl({ provider: 'azure', baseURL: ENDPOINT, ...upstream }, path, model)).toBe(expected);
  });

  it('deployment form without deployment, model or a JSON model (a multipart edit): 500, the operator told', () => {
    expect(() => azureUrl({ provider: 'azure', baseURL: ENDPOINT, apiVersion: '2024-10-21' }, '/images/edits', undefined)).toThrow(GatewayError);
  });

  it.each<{ name: string; upstream: Partial<Upstream>; model: string; status: number; param?: string }>([
    { name: "the caller's model '..'", upstream: {}, model: '..', status: 400, param: 'model' },
    { name: "the caller's model '.'", upstream: {}, model: '.', status: 400, param: 'model' },
    { name: "the operator's deployment '..'", upstream: { deployment: '..' }, model: 'gpt-image-1', status: 500 },
  ])('a deployment that is a dot segment ($name) never becomes a URL: $status', ({ upstream, model, status, param }) => {
    const error = thrown(() => azureUrl({ provider: 'azure', baseURL: ENDPOINT, apiVersion: '2024-10-21', ...upstream }, '/images/generations', model));
    expect([error.status, error.param]).toEqual([status, param]);
  });

  it.each(['..x', '...', 'a..b', '%2e%2e'])('a deployment %s that is no dot segment stays one encoded path segment', (model) => {
    const url = new URL(azureUrl({ provider: 'azure', baseURL: ENDPOINT, apiVersion: '2024-10-21' }, '/images/generations', model));
    expect(url.pathname).toBe(`/openai/deployments/${encodeURIComponent(model)}/images/generations`);
  });
});

describe('azureAuth', () => {
  it.each<{ name: string; upstream: Partial<Upstream>; expected: Record<string, string> }>([
    { name: 'the key in api-key', upstream: { apiKey: 'k1' }, expected: { 'api-key': 'k1' } },
    { name: 'a token function wins over the key', upstream: { apiKey: 'k1', token: () => 't1' }, expected: { authorization: 'Bearer t1' } },
    { name: 'an async token function', upstream: { token: () => Promise.resolve('t2') }, expected: { authorization: 'Bearer t2' } },
    { name: 'neither: no credential header', upstream: {}, expected: {} },
  ])('$name', async ({ upstream, expected }) => {
    expect(await azureAuth({ provider: 'azure', baseURL: ENDPOINT, ...upstream }, 60_000)).toEqual(expected);
  });

  it.each<{ name: string; token: () => string | Promise<string> }>([
    { name: 'throws', token: () => Promise.reject(new Error('no credential')) },
    { name: 'answers an empty token', token: () => '' },
    { name: 'answers a token with a line break', token: () => 'a\r\nx-injected: 1' },
    { name: 'never answers within the deadline', token: () => new Promise<string>(() => {}) },
  ])('a token function that $name: 502 upstream_auth_failed, another upstream may be tried', async ({ token }) => {
    const error = await azureAuth({ provider: 'azure', baseURL: ENDPOINT, token }, 20).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect({ status: (error as GatewayError).status, code: (error as GatewayError).code, notStarted: (error as GatewayError).notStarted }).toEqual({
      status: 502,
      code: 'upstream_auth_failed',
      notStarted: true,
    });
  });
});

describe('normalizeAzureError', () => {
  it.each<{ name: string; status: number; body: unknown; retryAfter?: number; expected: { status: number; code: string; retryAfterSeconds?: number } }>([
    {
      name: 'image content filter',
      status: 400,
      body: { error: { code: 'content_policy_violation', message: 'rejected', inner_error: { code: 'ResponsibleAIPolicyViolation' } } },
      expected: { status: 400, code: 'content_policy_violation' },
    },
    {
      name: 'inner code only',
      status: 400,
      body: { error: { code: 'BadRequest', message: 'rejected', inner_error: { code: 'ResponsibleAIPolicyViolation' } } },
      expected: { status: 400, code: 'content_policy_violation' },
    },
    { name: 'chat-style content_filter', status: 400, body: { error: { code: 'content_filter', message: 'filtered' } }, expected: { status: 400, code: 'content_policy_violation' } },
    { name: '401 of the resource key', status: 401, body: { error: { code: '401', message: 'Access denied' } }, expected: { status: 502, code: 'upstream_auth_failed' } },
    { name: '403 of a token without the role', status: 403, body: { error: { code: 'PermissionDenied', message: 'lacks the role' } }, expected: { status: 502, code: 'upstream_auth_failed' } },
    {
      name: '429 keeps the wait',
      status: 429,
      body: { error: { code: '429', message: 'retry after 6 seconds' } },
      retryAfter: 6,
      expected: { status: 429, code: 'rate_limit_exceeded', retryAfterSeconds: 6 },
    },
    { name: '404 DeploymentNotFound', status: 404, body: { error: { code: 'DeploymentNotFound', message: 'no deployment' } }, expected: { status: 502, code: 'upstream_error' } },
    { name: 'a caller 400', status: 400, body: { error: { code: 'invalid_request_error', message: 'bad size' } }, retryAfter: 9, expected: { status: 400, code: 'invalid_request_error' } },
    // the resource blocked: the operator's account (the breaker opens it for every tenant), never the caller's content
    ...[403, 400].map((status) => ({
      name: `${status} resource temporarily blocked`,
      status,
      body: {
        error: {
          code: status === 403 ? 'Forbidden' : 'content_policy_violation',
          message: 'Your resource has been temporarily blocked because we detected behavior that may violate our content policy.',
        },
      },
      expected: { status: 502, code: 'upstream_quota_exceeded' },
    })),
  ])('$name', ({ status, body, retryAfter, expected }) => {
    const error = normalizeAzureError(status, body, 'req-1', 'azure', retryAfter);
    expect({ status: error.status, code: error.code, ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}) }).toEqual(expected);
  });
});

describe('retryAfterOf', () => {
  it.each<{ name: string; headers: Record<string, string>; expected: number | 'unreadable' | undefined }>([
    { name: 'seconds', headers: { 'retry-after': '6' }, expected: 6 },
    { name: 'milliseconds (Azure)', headers: { 'retry-after-ms': '1500' }, expected: 1.5 },
    { name: 'a date in the past', headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }, expected: 0 },
    { name: 'nonsense', headers: { 'retry-after': 'soon' }, expected: 'unreadable' },
    { name: 'negative', headers: { 'retry-after': '-5' }, expected: 'unreadable' },
    { name: 'fractional', headers: { 'retry-after': '1.5' }, expected: 'unreadable' },
    { name: 'a date that is not one', headers: { 'retry-after': 'Fri, 31 Feb 2026 99:00:00 GMT' }, expected: 'unreadable' },
    { name: 'an RFC 850 date in the past', headers: { 'retry-after': 'Sunday, 06-Nov-94 08:49:37 GMT' }, expected: 0 },
    { name: 'none', headers: {}, expected: undefined },
  ])('$name', ({ headers, expected }) => {
    expect(retryAfterOf(headers)).toBe(expected);
  });
});

describe('servesRowsOf', () => {
  it.each<{ routed: unknown; row: 'openai' | 'ark'; expected: boolean }>([
    { routed: 'openai', row: 'openai', expected: true },
    { routed: 'azure', row: 'openai', expected: true },
    { routed: 'azure', row: 'ark', expected: false },
    { routed: 'dashscope', row: 'openai', expected: false },
    { routed: 'nonsense', row: 'openai', expected: false },
  ])('routed to $routed, a row of $row: $expected', ({ routed, row, expected }) => {
    expect(servesRowsOf(routed, row)).toBe(expected);
  });
});

describe('tokenBudgetMs', () => {
  it.each([
    [300, 150],
    [60_000, 30_000],
    [600_000, 30_000],
  ])('an attempt of %i ms waits %i ms for a host token', (timeoutMs, budget) => {
    expect(tokenBudgetMs(timeoutMs)).toBe(budget);
  });
});
