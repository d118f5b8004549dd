// s3ResultStorage against a real S3-protocol server on port 0 (s3rver): upload, presign, fetch the
// presigned URL over plain HTTP and compare bytes; a 20 MB video through the streamed multipart upload;
// tenant deletion; a public base URL; and the router re-hosting into it end to end.
import { Readable } from 'node:stream';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { s3ResultStorage } from '../../lib/storage.js';
import { newResultKey, tenantPrefix } from '../../lib/stores/results/result-keys.js';
import { dashscopeSuccess, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { fakeMp4 } from '../helpers/fake-media-host.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';
import { startS3Server } from '../helpers/s3-server.js';

const s3 = await startS3Server();
afterAll(() => s3.close());
const storage = s3ResultStorage({ bucket: s3.bucket, prefix: 'gw/', region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials });
afterAll(() => storage.close?.());
const signal = new AbortController().signal;

async function fetchBytes(url: string): Promise<{ status: number; body: Buffer; type: string | null }> {
  const response = await fetch(url);
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()), type: response.headers.get('content-type') };
}

describe('s3ResultStorage', () => {
  it('uploads, presigns, and the presigned URL serves the same bytes over HTTP', async () => {
    const key = newResultKey('tenant-a', 'image/png');
    expect(await storage.put(key, Readable.from([TINY_PNG]), { contentType: 'image/png', signal })).toBe(TINY_PNG.length);
    const url = await storage.url(key, {});
    expect(url).toContain('X-Amz-Signature=');
    expect(url).toContain(`/${s3.bucket}/gw/${key}`);
    const fetched = await fetchBytes(url);
    expect(fetched.status).toBe(200);
    expect(fetched.type).toBe('image/png');
    expect(fetched.body.equals(TINY_PNG)).toBe(true);
  });

  it('streams a 20 MB video as a multipart upload', async () => {
    const video = fakeMp4(20 * 1024 * 1024);
    const key = newResultKey('tenant-a', 'video/mp4');
    // handed over in 1 MiB chunks, as a download arrives
    const chunks = Array.from({ length: 20 }, (_, index) => video.subarray(index * 1024 * 1024, (index + 1) * 1024 * 1024));
    expect(await storage.put(key, Readable.from(chunks), { contentType: 'video/mp4', signal })).toBe(video.length);
    const fetched = await fetchBytes(await storage.url(key, {}));
    expect(fetched.body.length).toBe(video.length);
    expect(fetched.body.equals(video)).toBe(true);
  });

  it('deletePrefix removes one tenant and leaves the other', async () => {
    const mine = newResultKey('tenant-leaving', 'image/png');
    const theirs = newResultKey('tenant-staying', 'image/png');
    for (const key of [mine, theirs]) await storage.put(key, Readable.from([TINY_PNG]), { contentType: 'image/png', signal });
    expect(await storage.deletePrefix(tenantPrefix('tenant-leaving'))).toBe(1);
    expect((await fetchBytes(await storage.url(mine, {}))).status).toBe(404);
    expect((await fetchBytes(await storage.url(theirs, {}))).status).toBe(200);
  });

  it('publicBaseUrl answers CDN URLs instead of presigned ones', async () => {
    const cdn = s3ResultStorage({ bucket: s3.bucket, prefix: 'gw/', publicBaseUrl: 'https://cdn.example.com/', endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials });
    expect(await cdn.url('abc/def.png', {})).toBe('https://cdn.example.com/gw/abc/def.png');
  });
});

const gateway = await gatewayWith({
  fakes: { dashscope: startFakeDashscope },
  storage,
  resolve: ({ model }, { dashscope }) => (model.startsWith('x-image-') ? { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-2.0' } : null),
});

describe('the router re-hosting into S3', () => {
  it('answers a presigned URL of the bucket that serves the upstream image', async () => {
    const { dashscope } = gateway.fakes;
    dashscope.next((_request, res) => sendJson(res, 200, dashscopeSuccess([dashscope.resultUrl('image-1.png')])));
    const res = await request(gateway.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'x-image-2.0', prompt: 'a crane' });
    expect(res.status).toBe(200);
    const url = res.body.data[0].url as string;
    expect(url.startsWith(`${s3.endpoint}/${s3.bucket}/gw/${tenantPrefix('tenant-a')}`)).toBe(true);
    expect((await fetchBytes(url)).body.equals(TINY_PNG)).toBe(true);
    expect(gateway.usage.at(-1)?.storedBytes).toBe(TINY_PNG.length);
  });
});
