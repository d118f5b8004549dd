// Acceptance of durable results (docs/durable-results.md), black-box through HTTP: the router in a
// real Express app, fake upstreams and a real S3-protocol server on port 0. Each test names the
// documented behaviour it proves.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import type { ResultStorage } from '../../lib/index.js';
import { localResultStorage, s3ResultStorage } from '../../lib/storage.js';
import { startCallbackReceiver } from '../helpers/callback-receiver.js';
import { startFakeArk, arkTaskObject } from '../helpers/fake-ark.js';
import { dashscopeSuccess, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { fakeMp4, startFakeMediaHost } from '../helpers/fake-media-host.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';
import { startS3Server } from '../helpers/s3-server.js';

const SECRET = 'acceptance-secret-0123456789-abcdefghij';
const directories: string[] = [];
afterAll(async () => {
  for (const directory of directories) await fs.rm(directory, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-acceptance-'));
  directories.push(directory);
  return directory;
}

const PNG_8K = Buffer.concat([TINY_PNG, Buffer.alloc(8 * 1024, 3)]);

async function fetchBytes(url: string): Promise<{ status: number; type: string | null; bytes: Buffer; headers: Headers }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}

async function localGateway(extra: Record<string, unknown> = {}, storeOptions: Record<string, unknown> = {}) {
  const directory = await tempDir();
  const store = localResultStorage({ directory, secret: SECRET, ...storeOptions });
  return {
    directory,
    store,
    gateway: await gatewayWith({
      fakes: { dashscope: startFakeDashscope, openai: startFakeOpenAI, media: startFakeMediaHost },
      resolve: ({ model }, { dashscope, openai }) => {
        if (model === 'ds') return { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-plus' };
        if (model === 'gpt-image-1') return { provider: 'openai', baseURL: openai.baseURL, apiKey: 'k', model: 'gpt-image-1' };
        return null;
      },
      storage: store,
      ...extra,
    }),
  };
}

function generate(url: string, key: string, body: Record<string, unknown>) {
  return request(url).post('/v1/images/generations').set('authorization', `Bearer ${key}`).send(body);
}

describe('durable results: DashScope results re-hosted (url and b64_json)', () => {
  it('data[].url is a durable URL whose bytes are the upstream image, after the upstream link died; usage reports storedBytes', async () => {
    const { gateway } = await localGateway();
    const { dashscope, media } = gateway.fakes;
    const link = media.publish('a.png', PNG_8K, 'image/png');
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([link])));
    const res = await generate(gateway.url, KEY_A, { model: 'ds', prompt: 'a cat' });
    expect(res.status).toBe(200);
    const url = String(res.body.data[0].url);
    expect(url.startsWith(gateway.url)).toBe(true);
    expect(url).not.toContain(media.origin);
    // the upstream link is dead now (one download), the durable one is not
    expect((await fetch(link)).status).toBe(403);
    const got = await fetchBytes(url);
    expect(got.status).toBe(200);
    expect(got.type).toBe('image/png');
    expect(got.bytes.equals(PNG_8K)).toBe(true);
    expect(gateway.usage.at(-1)?.storedBytes).toBe(PNG_8K.length);
    // the tenant id is not in the URL
    expect(url).not.toContain('tenant-a');
  });

  it('b64_json still works and carries the same bytes as the stored copy', async () => {
    const { gateway } = await localGateway();
    const { dashscope, media } = gateway.fakes;
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([media.publish('b.png', PNG_8K, 'image/png')])));
    const res = await generate(gateway.url, KEY_A, { model: 'ds', prompt: 'a cat', response_format: 'b64_json' });
    expect(res.status).toBe(200);
    expect(Buffer.from(String(res.body.data[0].b64_json), 'base64').equals(PNG_8K)).toBe(true);
    expect(gateway.usage.at(-1)?.storedBytes).toBe(PNG_8K.length);
  });
});

describe('durable results: base64-only upstream with response_format url', () => {
  it('gpt-image answers b64 only; the caller asked for url and gets a stored URL with the same bytes', async () => {
    const { gateway } = await localGateway();
    gateway.fakes.openai.next((_req, res) => sendJson(res, 200, { created: 1, data: [{ b64_json: PNG_8K.toString('base64') }] }));
    const res = await generate(gateway.url, KEY_A, { model: 'gpt-image-1', prompt: 'a cat', response_format: 'url' });
    expect(res.status).toBe(200);
    const item = res.body.data[0] as Record<string, unknown>;
    expect(typeof item.url).toBe('string');
    expect(item.b64_json).toBeUndefined();
    const got = await fetchBytes(String(item.url));
    expect(got.bytes.equals(PNG_8K)).toBe(true);
  });
});

describe('durable results: the signed local URLs', () => {
  it('valid, tampered, another tenant key with this signature, traversal, expired', async () => {
    const { gateway } = await localGateway({}, { urlExpiresInSeconds: 2 });
    const { dashscope, media } = gateway.fakes;
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([media.publish('a.png', PNG_8K, 'image/png')])));
    const a = String((await generate(gateway.url, KEY_A, { model: 'ds', prompt: 'x' })).body.data[0].url);
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([media.publish('b.png', TINY_PNG, 'image/png')])));
    const b = String((await generate(gateway.url, KEY_B, { model: 'ds', prompt: 'x' })).body.data[0].url);
    expect((await fetchBytes(a)).status).toBe(200);
    const ua = new URL(a);
    const ub = new URL(b);
    // tenants have different prefixes
    expect(ua.pathname.split('/')[3]).not.toBe(ub.pathname.split('/')[3]);
    // tampered signature
    const tampered = new URL(a);
    const sig = tampered.searchParams.get('signature')!;
    tampered.searchParams.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    const t = await fetchBytes(tampered.href);
    expect(t.status).toBe(404);
    expect(JSON.parse(t.bytes.toString()).error).toBeDefined();
    // longer expiry with the old signature
    const later = new URL(a);
    later.searchParams.set('expires', String(Number(later.searchParams.get('expires')) + 1000));
    expect((await fetchBytes(later.href)).status).toBe(404);
    // b's path with a's signature and expiry: another tenant's file
    const cross = new URL(b);
    cross.search = ua.search;
    expect((await fetchBytes(cross.href)).status).toBe(404);
    // path traversal attempts never leave the directory
    for (const evil of ['/v1/results/..%2F..%2F..%2Fetc/passwd', '/v1/results/../../etc/passwd', `/v1/results/${ua.pathname.split('/')[3]}/..%2F..%2Fpackage.json`]) {
      const res = await fetch(`${gateway.url}${evil}${ua.search}`);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain('root:');
    }
    // expired (honestly signed): 403
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    const expired = await fetchBytes(a);
    expect(expired.status).toBe(403);
    expect(expired.bytes.equals(PNG_8K)).toBe(false);
  });

  it('serves only image/video types with nosniff: an upstream HTML/SVG "image" is never stored or served as markup', async () => {
    const { gateway, directory } = await localGateway();
    const { dashscope, media } = gateway.fakes;
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([media.publish('x.svg', svg, 'image/svg+xml')])));
    const res = await generate(gateway.url, KEY_A, { model: 'ds', prompt: 'x' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('image_download_failed');
    const files = await fs.readdir(directory, { recursive: true });
    expect(files.filter((name) => /\.[a-z]+$/.test(name) && !name.endsWith('.part'))).toEqual([]);
  });

  it('HEAD on a valid URL answers the headers without crashing', async () => {
    const { gateway } = await localGateway();
    const { dashscope, media } = gateway.fakes;
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([media.publish('a.png', PNG_8K, 'image/png')])));
    const url = String((await generate(gateway.url, KEY_A, { model: 'ds', prompt: 'x' })).body.data[0].url);
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('image/png');
    expect(head.headers.get('x-content-type-options')).toBe('nosniff');
    // still served afterwards
    expect((await fetchBytes(url)).bytes.equals(PNG_8K)).toBe(true);
  });
});

describe('durable results: failure is explicit', () => {
  const failing = (mode: 'reject' | 'hang'): ResultStorage => ({
    put: (_key, body) => {
      if (mode === 'reject') {
        body.destroy();
        return Promise.reject(new Error('store down'));
      }
      return new Promise(() => undefined);
    },
    url: async () => 'https://never.example/x',
    delete: async () => undefined,
    deletePrefix: async () => 0,
  });

  it.each(['reject', 'hang'] as const)('a store that %ss: upstream URL with a note in extra (default)', async (mode) => {
    const gateway = await gatewayWith({
      fakes: { dashscope: startFakeDashscope },
      resolve: (_input, { dashscope }) => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-plus' }),
      storage: { store: failing(mode), timeoutMs: 300 },
    });
    const res = await generate(gateway.url, KEY_A, { model: 'ds', prompt: 'x' });
    expect(res.status).toBe(200);
    expect(String(res.body.data[0].url).startsWith(gateway.fakes.dashscope.origin)).toBe(true);
    expect(typeof res.body.extra.storage_error).toBe('string');
  });

  it("onFailure 'error': 502 storage_failed", async () => {
    const gateway = await gatewayWith({
      fakes: { dashscope: startFakeDashscope },
      resolve: (_input, { dashscope }) => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-plus' }),
      storage: { store: failing('hang'), timeoutMs: 300, onFailure: 'error' },
    });
    const res = await generate(gateway.url, KEY_A, { model: 'ds', prompt: 'x' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('storage_failed');
  });

  it('a lying upstream (HTML instead of an image) is 502 image_download_failed, not stored', async () => {
    const { gateway, directory } = await localGateway();
    const { dashscope, media } = gateway.fakes;
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([media.publish('a.png', Buffer.from('<html><script>alert(1)</script></html>'), 'image/png')])));
    const res = await generate(gateway.url, KEY_A, { model: 'ds', prompt: 'x' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('image_download_failed');
    expect((await fs.readdir(directory, { recursive: true })).filter((name) => name.includes('.'))).toEqual([]);
  });

  it('an upstream result larger than limits.downloadBytes is refused, not stored', async () => {
    const { gateway } = await localGateway({ limits: { downloadBytes: 64 * 1024 } });
    const { dashscope, media } = gateway.fakes;
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([media.publish('a.png', Buffer.concat([TINY_PNG, Buffer.alloc(200 * 1024)]), 'image/png')])));
    const res = await generate(gateway.url, KEY_A, { model: 'ds', prompt: 'x' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('image_download_failed');
  });
});

describe('durable results: tenant scoping and deleteResults', () => {
  it.each(['tenant-a/b', 'tenant-a*', 'tenant-', 'tenant-a/../tenant-a', 'ténant-a', ''])("deleteResults({ id: '%s' }) deletes nothing of tenant-a", async (other) => {
    const { gateway } = await localGateway();
    const { dashscope, media } = gateway.fakes;
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([media.publish('a.png', PNG_8K, 'image/png')])));
    const url = String((await generate(gateway.url, KEY_A, { model: 'ds', prompt: 'x' })).body.data[0].url);
    expect(await gateway.router.deleteResults({ id: other })).toBe(0);
    expect((await fetchBytes(url)).status).toBe(200);
  });

  it("deleteResults(tenant-a) removes a's results and keeps b's", async () => {
    const { gateway } = await localGateway();
    const { dashscope, media } = gateway.fakes;
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([media.publish('a.png', PNG_8K, 'image/png')])));
    const a = String((await generate(gateway.url, KEY_A, { model: 'ds', prompt: 'x' })).body.data[0].url);
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([media.publish('b.png', PNG_8K, 'image/png')])));
    const b = String((await generate(gateway.url, KEY_B, { model: 'ds', prompt: 'x' })).body.data[0].url);
    expect(await gateway.router.deleteResults({ id: 'tenant-a' })).toBe(1);
    expect((await fetchBytes(a)).status).toBe(404);
    expect((await fetchBytes(b)).status).toBe(200);
  });

  it('retention: the local store deletes files past retentionMs', async () => {
    const { gateway, store } = await localGateway({}, { retentionMs: 300 });
    const { dashscope, media } = gateway.fakes;
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([media.publish('a.png', PNG_8K, 'image/png')])));
    const url = String((await generate(gateway.url, KEY_A, { model: 'ds', prompt: 'x' })).body.data[0].url);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect((await fetchBytes(url)).status).toBe(404);
    await store.close?.();
  });
});

describe('durable results: Ark video task re-hosted once on succeeded', () => {
  it('query and callback carry the durable URL; the bytes are the video', async () => {
    const directory = await tempDir();
    const video = fakeMp4(256 * 1024);
    const receiver = await startCallbackReceiver();
    const media = await startFakeMediaHost();
    media.downloadsPerLink = 1;
    const gateway = await gatewayWith({
      fakes: { ark: startFakeArk },
      resolve: ({ route }, { ark }) => (route === 'video.tasks' ? { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-key', model: 'seedance' } : null),
      callbacks: { allowLocal: true, pollIntervalsMs: { video: [30] }, retryBaseMs: 20, retryMaxMs: 40 },
      storage: localResultStorage({ directory, secret: SECRET }),
    });
    const link = media.publish('v.mp4', video, 'video/mp4');
    const { ark } = gateway.fakes;
    const succeeded = (id: string) => ({ ...arkTaskObject(id, 'seedance', 'succeeded'), content: { video_url: link } });
    ark.scripts.push(['succeeded']);
    const created = await request(gateway.url)
      .post('/api/v3/contents/generations/tasks')
      .set('authorization', `Bearer ${KEY_A}`)
      .send({ model: 'seedance', content: [{ type: 'text', text: 'a cat' }], callback_url: receiver.url });
    expect(created.status).toBe(200);
    // every Ark GET answers succeeded with the (one-download) link
    for (let index = 0; index < 20; index += 1) ark.next((req, res) => sendJson(res, 200, succeeded(decodeURIComponent(req.path.split('/').pop()!))));
    const [delivery] = await receiver.accepted(1, 20_000);
    const callbackUrl = String((JSON.parse(delivery!.body) as { content: { video_url: string } }).content.video_url);
    expect(callbackUrl.startsWith(gateway.url)).toBe(true);
    expect((await fetchBytes(callbackUrl)).bytes.equals(video)).toBe(true);
    const query = await request(gateway.url).get(`/api/v3/contents/generations/tasks/${created.body.id}`).set('authorization', `Bearer ${KEY_A}`);
    expect(query.status).toBe(200);
    expect(String(query.body.content.video_url).startsWith(gateway.url)).toBe(true);
    expect((await fetchBytes(query.body.content.video_url)).bytes.equals(video)).toBe(true);
    // stored once: one file for the one video
    const files = (await fs.readdir(directory, { recursive: true })).filter((name) => name.endsWith('.mp4'));
    expect(files.length).toBe(1);
    // another tenant cannot query it
    const other = await request(gateway.url).get(`/api/v3/contents/generations/tasks/${created.body.id}`).set('authorization', `Bearer ${KEY_B}`);
    expect(other.status).toBe(404);
    await media.close();
    await receiver.close();
  }, 30_000);
});

describe('durable results: S3 store against s3rver', () => {
  it('upload, presign, fetch the presigned URL and compare bytes; 20 MB multipart; deletePrefix', async () => {
    const s3 = await startS3Server();
    const store = s3ResultStorage({ bucket: s3.bucket, endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials, prefix: 'r/' });
    try {
      const { Readable } = await import('node:stream');
      const key = `${'a'.repeat(32)}/${'b'.repeat(22)}.png`;
      const signal = new AbortController().signal;
      expect(await store.put(key, Readable.from([PNG_8K]), { contentType: 'image/png', signal })).toBe(PNG_8K.length);
      const got = await fetchBytes(await store.url(key, {}));
      expect(got.status).toBe(200);
      expect(got.bytes.equals(PNG_8K)).toBe(true);
      const big = fakeMp4(20 * 1024 * 1024);
      const bigKey = `${'a'.repeat(32)}/${'c'.repeat(22)}.mp4`;
      const chunks = Array.from({ length: 20 }, (_, index) => big.subarray(index * 1024 * 1024, (index + 1) * 1024 * 1024));
      expect(await store.put(bigKey, Readable.from(chunks), { contentType: 'video/mp4', signal })).toBe(big.length);
      expect((await fetchBytes(await store.url(bigKey, {}))).bytes.equals(big)).toBe(true);
      expect(await store.deletePrefix(`${'a'.repeat(32)}/`)).toBe(2);
      expect((await fetch(await store.url(key, {}))).status).toBe(404);
    } finally {
      await store.close?.();
      await s3.close();
    }
  }, 60_000);
});
