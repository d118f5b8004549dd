// POST /api/v3/open/CreateAsset end to end: signed upstream call to a fake Volcengine OpenAPI, the
// envelope answered as is, and the asset recorded as the caller's for asset:// references in tasks.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { Upstream } from '../../lib/index.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';

let assets = 0;

const gateway = await gatewayWith({
  fakes: {
    openapi: () =>
      startFakeUpstream((req, res) => {
        const id = `asset-20260320120147-${String(++assets).padStart(5, '0')}`;
        sendJson(res, 200, { ResponseMetadata: { RequestId: `r-${assets}`, Action: 'CreateAsset', Version: '2024-01-01', Service: 'ark', Region: 'cn-beijing' }, Result: { Id: id } });
      }),
    ark: startFakeArk,
  },
  resolve: ({ route }, { openapi, ark }): Upstream | null => {
    if (route === 'assets') return { provider: 'ark', baseURL: openapi.origin, accessKeyId: 'AKLTtest', secretAccessKey: 'c2VjcmV0LXNlY3JldA==', region: 'cn-beijing' };
    if (route === 'video.tasks') return { provider: 'ark', baseURL: ark.baseURL, apiKey: 'k' };
    return null;
  },
});
const { openapi } = gateway.fakes;

const asset = { GroupId: 'group-20260320120601-hsw4s', URL: 'https://media.example.com/girl.png', AssetType: 'Image', Name: 'girl' };

describe('CreateAsset', () => {
  it("signs the upstream call, answers the envelope, and makes the asset the caller's", async () => {
    const res = await request(gateway.app).post('/api/v3/open/CreateAsset').set('Authorization', `Bearer ${KEY_A}`).send(asset);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ResponseMetadata: { RequestId: 'r-1', Action: 'CreateAsset', Version: '2024-01-01', Service: 'ark', Region: 'cn-beijing' },
      Result: { Id: 'asset-20260320120147-00001' },
    });
    const [sent] = openapi.requests;
    expect(sent?.path).toBe('/?Action=CreateAsset&Version=2024-01-01');
    expect(sent?.headers.authorization).toMatch(/^HMAC-SHA256 Credential=AKLTtest\/\d{8}\/cn-beijing\/ark\/request, SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=[0-9a-f]{64}$/);
    expect(sent?.json).toEqual(asset);
    expect(JSON.stringify(sent?.headers)).not.toContain('c2VjcmV0LXNlY3JldA==');

    const content = [
      { type: 'text', text: 'x' },
      { type: 'image_url', image_url: { url: 'asset://asset-20260320120147-00001' }, role: 'reference_image' },
    ];
    const own = await request(gateway.app).post('/api/v3/contents/generations/tasks').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'seedance', content });
    const foreign = await request(gateway.app).post('/api/v3/contents/generations/tasks').set('Authorization', `Bearer ${KEY_B}`).send({ model: 'seedance', content });
    expect(own.status).toBe(200);
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.param).toBe('content[1].image_url.url');
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['no GroupId', { URL: asset.URL, AssetType: 'Image' }, 'GroupId is required'],
    ['bad AssetType', { ...asset, AssetType: 'Pdf' }, "AssetType must be one of 'Image', 'Video', 'Audio'"],
    ['not a URL', { ...asset, URL: 'file:///etc/passwd' }, 'URL must be an http(s) URL of the media file'],
    ['private URL', { ...asset, URL: 'http://192.168.0.2/a.png' }, 'URL names a loopback, private or link-local host; the media file must be publicly reachable'],
  ];
  it.each(invalid)('%s: 400, nothing sent', async (_name, payload, message) => {
    const before = openapi.requests.length;
    const res = await request(gateway.app).post('/api/v3/open/CreateAsset').set('Authorization', `Bearer ${KEY_A}`).send(payload);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(message);
    expect(openapi.requests).toHaveLength(before);
  });

  it('needs a key', async () => {
    const res = await request(gateway.app).post('/api/v3/open/CreateAsset').send(asset);
    expect(res.status).toBe(401);
  });
});
