// The vendors' free reads that serve as the half-open trial (docs/routing-and-health.md "The trial"):
// each provider that has one reads its own model endpoint with its own credential header, resolves on
// a 2xx and throws the normalized failure otherwise (so routing counts it as a paid call's would be);
// providers without one are not asked. Real HTTP against a fake vendor on port 0.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, type Upstream } from '../../lib/index.js';
import { healthReads } from '../../lib/gateway/routing/health-reads.js';
import { UpstreamHttp } from '../../lib/transport/upstream-http.js';
import { type FakeUpstream, sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';

const KEY = 'sk-operator-health-read-secret';

let fake: FakeUpstream;
const http = new UpstreamHttp();
const reads = healthReads(http, DEFAULT_LIMITS);

beforeAll(async () => {
  fake = await startFakeUpstream((_recorded, res: ServerResponse) => sendJson(res, 200, { data: [] }));
});
afterAll(async () => {
  http.close();
  await fake.close();
});

const cases: Array<{ provider: Upstream['provider']; base: (origin: string) => string; model: string; path: string; credential: [string, string] }> = [
  { provider: 'openai', base: (origin) => `${origin}/v1`, model: 'gpt-image-1', path: '/v1/models', credential: ['authorization', `Bearer ${KEY}`] },
  { provider: 'gemini', base: (origin) => origin, model: 'gemini-2.5-flash-image', path: '/v1beta/models/gemini-2.5-flash-image', credential: ['x-goog-api-key', KEY] },
  { provider: 'replicate', base: (origin) => origin, model: 'black-forest-labs/flux-schnell', path: '/v1/models/black-forest-labs/flux-schnell', credential: ['authorization', `Bearer ${KEY}`] },
];

describe('health reads', () => {
  it.each(cases)('$provider reads GET $path with its own credential header and resolves on a 200', async ({ provider, base, model, path, credential }) => {
    const upstream: Upstream = { provider, baseURL: base(fake.origin), apiKey: KEY };
    expect(reads.has(upstream)).toBe(true);
    await reads.read(upstream, model);
    const last = fake.requests.at(-1)!;
    expect(last.method).toBe('GET');
    expect(last.path).toBe(path);
    expect(last.headers[credential[0]]).toBe(credential[1]);
  });

  it.each(cases)('$provider: a 500 is thrown as the upstream error a paid call would get, without the key', async ({ provider, base, model }) => {
    fake.next((_recorded, res) => sendJson(res, 500, { error: { message: `broken for ${KEY}` } }));
    const failure = await reads.read({ provider, baseURL: base(fake.origin), apiKey: KEY }, model).then(
      () => undefined,
      (error: unknown) => error as { status: number; code: string; message: string },
    );
    expect(failure).toMatchObject({ code: 'upstream_error' });
    expect(failure!.message).not.toContain(KEY);
  });

  it.each(cases)('$provider: a 401 is the operator-account failure', async ({ provider, base, model }) => {
    fake.next((_recorded, res) => sendJson(res, 401, { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } }));
    await expect(reads.read({ provider, baseURL: base(fake.origin), apiKey: KEY }, model)).rejects.toMatchObject({ code: 'upstream_auth_failed' });
  });

  it.each(['dashscope', 'ark', 'fal'] as const)('%s has no free read: its trial stays a caller request', (provider) => {
    expect(reads.has({ provider, baseURL: fake.origin, apiKey: KEY })).toBe(false);
  });
});
