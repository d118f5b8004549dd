// createVolcengineAsset over real HTTP against a fake Volcengine OpenAPI (upstreams §2.6) that
// checks every request the way the real one does: it recomputes the signature from what it received
// (method, path, query, headers, body) with the operator's secret, and answers the CreateAsset
// envelope only when it matches, else 403 SignatureDoesNotMatch.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError, type GatewayErrorBody } from '../../lib/errors/gateway-error.js';
import { UpstreamHttp } from '../../lib/transport/upstream-http.js';
import { DEFAULT_LIMITS } from '../../lib/default-limits.js';
import type { Upstream } from '../../lib/types.js';
import type { CallContext } from '../../lib/providers/call-context.js';
import { createVolcengineAsset } from '../../lib/providers/ark/volcengine-assets.js';
import { signVolcengineRequest } from '../../lib/transport/volcengine-signer.js';
import { type FakeUpstream, type RecordedRequest, sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';

const AK = 'AKLTZmFrZS1hY2Nlc3Mta2V5LWlk';
const SK = 'WkdWbVlXdHNkQzF6WldOeVpYUXRhMlY1TFdadmNpMTBaWE4wY3c9PQ==';
const OWN_HEADERS = new Set(['content-type', 'host', 'x-content-sha256', 'x-date']);

const METADATA = { RequestId: 'r-1', Action: 'CreateAsset', Version: '2024-01-01', Service: 'ark', Region: 'cn-beijing' };
const CREATED = { ResponseMetadata: METADATA, Result: { Id: 'asset-20260320120147-pqwhc' } };
const BODY = { GroupId: 'group-20260320120601-hsw4s', URL: 'https://example.com/refs/portrait.png', AssetType: 'Image', Name: 'portrait', ProjectName: 'default' };

/** The region the fake OpenAPI expects in the credential scope. */
let serverRegion = 'cn-beijing';

function header(request: RecordedRequest, name: string): string {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

function parseXDate(xDate: string): Date | undefined {
  const parts = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(xDate);
  if (!parts) return undefined;
  const [year, month, day, hour, minute, second] = parts.slice(1).map(Number) as [number, number, number, number, number, number];
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second));
}

/** What the real OpenAPI does: look up the AK's secret, rebuild the canonical request, compare. */
function signatureMatches(request: RecordedRequest): boolean {
  const authorization = header(request, 'authorization');
  const parsed = /^HMAC-SHA256 Credential=([^/]+)\/\d{8}\/[^/]+\/[^/]+\/request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/.exec(authorization);
  const date = parseXDate(header(request, 'x-date'));
  // the real one answers InvalidTimestamp past a few minutes of skew
  if (!parsed || parsed[1] !== AK || !date || Math.abs(Date.now() - date.getTime()) > 5 * 60_000) return false;
  const extra: Record<string, string> = {};
  for (const name of parsed[2]!.split(';')) if (!OWN_HEADERS.has(name)) extra[name] = header(request, name);
  const url = new URL(request.path, 'http://fake.invalid');
  const expected = signVolcengineRequest({
    method: request.method,
    host: header(request, 'host'),
    path: url.pathname.split('/').map(decodeURIComponent).join('/'),
    query: Object.fromEntries(url.searchParams),
    headers: extra,
    body: request.body.toString('utf8'),
    accessKeyId: AK,
    secretAccessKey: SK,
    region: serverRegion,
    service: 'ark',
    date,
  });
  return expected.Authorization === authorization && expected['X-Content-Sha256'] === header(request, 'x-content-sha256') && header(request, 'content-type') === 'application/json';
}

let fake: FakeUpstream;
const http = new UpstreamHttp();
const call: CallContext = { http, signal: new AbortController().signal, limits: DEFAULT_LIMITS };

beforeAll(async () => {
  fake = await startFakeUpstream((request, res) => {
    if (signatureMatches(request)) sendJson(res, 200, CREATED);
    else {
      sendJson(res, 403, {
        ResponseMetadata: {
          ...METADATA,
          RequestId: 'r-403',
          Error: { Code: 'SignatureDoesNotMatch', Message: 'The request signature we calculated does not match the signature you provided.' },
        },
      });
    }
  });
});

afterEach(() => {
  fake.requests.length = 0;
  serverRegion = 'cn-beijing';
});

afterAll(async () => {
  http.close();
  await fake.close();
});

function upstream(overrides: Partial<Upstream> = {}): Upstream {
  return { provider: 'ark', baseURL: fake.origin, accessKeyId: AK, secretAccessKey: SK, ...overrides };
}

async function rejection(promise: Promise<unknown>): Promise<{ status: number; body: GatewayErrorBody }> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return { status: (error as GatewayError).status, body: (error as GatewayError).toJSON() };
}

const SIGNATURE_REJECTED = {
  status: 502,
  body: {
    error: {
      message: "The upstream rejected the gateway's own credentials (an operator configuration problem, not your key) (volcengine code SignatureDoesNotMatch, request id r-403).",
      type: 'upstream_error',
      code: 'upstream_auth_failed',
      param: null,
    },
  },
};

describe('createVolcengineAsset', () => {
  it('POSTs the signed CreateAsset call and returns the id and the envelope', async () => {
    const result = await createVolcengineAsset(call, BODY, upstream());

    expect(result).toEqual({ assetId: 'asset-20260320120147-pqwhc', envelope: CREATED, requestId: 'r-1' });
    expect(fake.requests).toHaveLength(1);
    const [received] = fake.requests;
    expect(received!.method).toBe('POST');
    expect(received!.path).toBe('/?Action=CreateAsset&Version=2024-01-01');
    expect(received!.json).toEqual(BODY);
    expect(header(received!, 'authorization')).toMatch(
      new RegExp(`^HMAC-SHA256 Credential=${AK}/\\d{8}/cn-beijing/ark/request, SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=[0-9a-f]{64}$`),
    );
    // the secret is only ever an HMAC key
    expect(JSON.stringify(received!.headers)).not.toContain(SK);
    expect(received!.path).not.toContain(SK);
  });

  it.each<{ name: string; body: Record<string, unknown> }>([
    { name: 'a unicode body', body: { ...BODY, URL: 'https://example.com/图片 1.png?x=1&y=2', Name: '视频 – “引号”' } },
    { name: 'extra keys', body: { ...BODY, Description: 'kept', Tags: [{ Key: 'k', Value: 'v' }] } },
    // the caller's body goes upstream as given (validation is the route's): the required fields alone,
    // and keys the OpenAPI may add later
    { name: 'the required fields only', body: { GroupId: 'group-1', URL: 'https://example.com/v.mp4', AssetType: 'Video' } },
    { name: 'an audio asset with tags', body: { GroupId: 'group-1', URL: 'https://example.com/s.mp3', AssetType: 'Audio', Tags: [{ Key: 'k', Value: 'v' }] } },
  ])('signs $name so that the OpenAPI accepts it', async ({ body }) => {
    await expect(createVolcengineAsset(call, body, upstream())).resolves.toMatchObject({ assetId: 'asset-20260320120147-pqwhc' });
    expect(fake.requests[0]!.json).toEqual(body);
  });

  it.each<{ baseURL: (origin: string) => string; path: string }>([
    { baseURL: (origin) => `${origin}/`, path: '/?Action=CreateAsset&Version=2024-01-01' },
    { baseURL: (origin) => `${origin}/proxy/volc`, path: '/proxy/volc/?Action=CreateAsset&Version=2024-01-01' },
    { baseURL: (origin) => `${origin}/proxy/volc//`, path: '/proxy/volc/?Action=CreateAsset&Version=2024-01-01' },
    { baseURL: (origin) => `${origin}/a b/资产`, path: '/a%20b/%E8%B5%84%E4%BA%A7/?Action=CreateAsset&Version=2024-01-01' },
  ])('keeps the path of baseURL: $path', async ({ baseURL, path }) => {
    await expect(createVolcengineAsset(call, BODY, upstream({ baseURL: baseURL(fake.origin) }))).resolves.toMatchObject({ requestId: 'r-1' });
    expect(fake.requests[0]!.path).toBe(path);
  });

  it('signs for upstream.region', async () => {
    serverRegion = 'ap-southeast-1';
    await expect(createVolcengineAsset(call, BODY, upstream({ region: 'ap-southeast-1' }))).resolves.toMatchObject({ requestId: 'r-1' });
    expect(header(fake.requests[0]!, 'authorization')).toContain('/ap-southeast-1/ark/request, ');
  });

  it('defaults to cn-beijing, which an OpenAPI in another region rejects', async () => {
    serverRegion = 'ap-southeast-1';
    expect(await rejection(createVolcengineAsset(call, BODY, upstream()))).toEqual(SIGNATURE_REJECTED);
  });

  it("signs the operator's X- headers and drops the ones the signer owns", async () => {
    const headers = { 'X-Custom-Trace': 'trace-1', Authorization: 'Bearer ark-key', 'Content-Type': 'text/plain', Host: 'elsewhere.example' };
    await expect(createVolcengineAsset(call, BODY, upstream({ headers }))).resolves.toMatchObject({ requestId: 'r-1' });
    const received = fake.requests[0]!;
    expect(header(received, 'x-custom-trace')).toBe('trace-1');
    expect(header(received, 'authorization')).toContain('SignedHeaders=content-type;host;x-content-sha256;x-custom-trace;x-date, ');
    expect(header(received, 'content-type')).toBe('application/json');
  });

  it("fails as the operator's credential problem (502) when the secret is wrong, without echoing it", async () => {
    const failure = await rejection(createVolcengineAsset(call, BODY, upstream({ secretAccessKey: 'not-the-secret' })));
    expect(failure).toEqual(SIGNATURE_REJECTED);
    expect(JSON.stringify(failure)).not.toContain('not-the-secret');
  });

  it('normalizes an OpenAPI error envelope (400 InvalidParameter)', async () => {
    fake.next((_request, res) =>
      sendJson(res, 400, {
        ResponseMetadata: { ...METADATA, RequestId: 'r-400', Error: { Code: 'InvalidParameter', Message: 'The parameter URL specified in the request is not valid.' } },
      }),
    );
    expect(await rejection(createVolcengineAsset(call, BODY, upstream()))).toEqual({
      status: 400,
      body: {
        error: {
          message: 'The upstream rejected the request: The parameter URL specified in the request is not valid. (volcengine code InvalidParameter, request id r-400)',
          type: 'invalid_request_error',
          code: 'invalid_request_error',
          param: null,
        },
      },
    });
  });

  it.each<{ name: string; overrides: Partial<Upstream> }>([
    { name: 'no accessKeyId', overrides: { accessKeyId: undefined } },
    { name: 'no secretAccessKey', overrides: { secretAccessKey: undefined } },
    { name: 'an empty secretAccessKey', overrides: { secretAccessKey: '' } },
  ])('answers 500 and sends nothing with $name (operator configuration)', async ({ overrides }) => {
    expect(await rejection(createVolcengineAsset(call, BODY, upstream(overrides)))).toEqual({
      status: 500,
      body: { error: { message: 'Internal gateway error.', type: 'server_error', code: 'internal_error', param: null } },
    });
    expect(fake.requests).toHaveLength(0);
  });
});
