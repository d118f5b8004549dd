// Durable results (docs/durable-results.md) end to end with the embedded store (localResultStorage): every provider
// path answers URLs of the router's own signed result route, the bytes behind them are the upstream's,
// and they keep working after the upstream's one-download links have died. Then the signed URL rules
// (valid, expired, tampered, another tenant's, traversal), the hostile upstreams (not an image, too
// large, a private address) and a failing or hanging store.
import { createHmac } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { memoryTaskStore, type ResultStorage, type TaskStore } from '../../lib/index.js';
import { localResultStorage } from '../../lib/storage.js';
import { tenantPrefix } from '../../lib/stores/results/result-keys.js';
import { startCallbackReceiver } from '../helpers/callback-receiver.js';
import { dashscopeSuccess, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { arkTaskObject } from '../helpers/fake-ark.js';
import { fakeMp4, startFakeMediaHost, type FakeMediaHost } from '../helpers/fake-media-host.js';
import { type RecordedRequest, sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';

const SECRET = 'a-results-signing-secret-of-more-than-32-chars';
const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-results-'));
afterAll(() => fs.rm(directory, { recursive: true, force: true }));

const media = await startFakeMediaHost();
afterAll(() => media.close());
afterEach(() => {
  media.requests.length = 0;
});

/** An OpenAI-compatible upstream that, like GPT-image models, answers base64 only. */
async function startB64Only() {
  const fake = await startFakeUpstream((request: RecordedRequest, res: ServerResponse) => {
    sendJson(res, 200, { created: 1713833628, data: [{ b64_json: TINY_PNG.toString('base64') }], usage: { total_tokens: 100 } }, { 'x-request-id': 'oa-b64' });
  });
  return Object.assign(fake, { baseURL: `${fake.origin}/v1` });
}

/** Ark (upstreams §2.3) whose succeeded tasks name a video and a last frame on the media host. */
function startArkWithMedia(host: FakeMediaHost, video: Buffer) {
  return async () => {
    let created = 0;
    const tasks = new Map<string, Record<string, unknown>>();
    return startFakeUpstream((request: RecordedRequest, res: ServerResponse) => {
      if (request.method === 'POST') {
        const id = `cgt-20260917121233-${String(++created).padStart(5, '0')}`;
        tasks.set(id, { video_url: host.publish('video.mp4', video, 'video/mp4'), last_frame_url: host.publish('frame.png', TINY_PNG, 'image/png') });
        return sendJson(res, 200, { id });
      }
      const id = decodeURIComponent(request.path.split('/').at(-1)!);
      const content = tasks.get(id);
      if (!content) return sendJson(res, 404, { error: { code: 'ResourceNotFound', message: 'task not found', param: 'id', type: 'NotFound' } });
      return sendJson(res, 200, { ...arkTaskObject(id, 'seedance', 'succeeded'), content });
    });
  };
}

const VIDEO = fakeMp4(300 * 1024);
const store: TaskStore = memoryTaskStore();
const storage = localResultStorage({ directory, secret: SECRET });
const gateway = await gatewayWith({
  fakes: { dashscope: startFakeDashscope, gpt: startB64Only, ark: startArkWithMedia(media, VIDEO) },
  store,
  storage,
  callbacks: { allowLocal: true, pollIntervalsMs: { video: [30] }, retryBaseMs: 20, retryMaxMs: 40 },
  resolve: ({ model }, { dashscope, gpt, ark }) => {
    if (model.startsWith('x-image-')) return { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-2.0' };
    if (model === 'gpt-image-1') return { provider: 'openai', baseURL: gpt.baseURL, apiKey: 'k' };
    if (model === 'seedance') return { provider: 'ark', baseURL: `${ark.origin}/api/v3`, apiKey: 'ark-key' };
    return null;
  },
  resetEach: true,
});
const { dashscope } = gateway.fakes;
const RESULTS = `${gateway.url}/v1/results/`;

const generate = (body: Record<string, unknown>, app: Parameters<typeof request>[0] = gateway.url) =>
  request(app)
    .post('/v1/images/generations')
    .set('Authorization', `Bearer ${KEY_A}`)
    .send({ model: 'x-image-2.0', prompt: 'a paper crane', ...body });

async function fetchBytes(url: string): Promise<{ status: number; body: Buffer; json?: unknown }> {
  const response = await fetch(url);
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, body, json: response.headers.get('content-type')?.includes('json') ? JSON.parse(body.toString()) : undefined };
}

/** A dashscope answer naming `url` as its one result. */
const answerWith = (url: string) => (_request: RecordedRequest, res: ServerResponse) => sendJson(res, 200, dashscopeSuccess([url]));

describe('DashScope images', () => {
  it('url: answers a signed URL of the router that serves the upstream bytes, after the upstream link died', async () => {
    dashscope.next(answerWith(media.publish('one.png', TINY_PNG, 'image/png')));
    const res = await generate({});
    expect(res.status).toBe(200);
    const url = res.body.data[0].url as string;
    expect(url.startsWith(RESULTS)).toBe(true);
    expect(url).toMatch(/\/v1\/results\/[a-f0-9]{32}\/[A-Za-z0-9_-]{22}\.png\?expires=\d+&signature=[A-Za-z0-9_-]{43}$/);
    const fetched = await fetchBytes(url);
    expect(fetched.status).toBe(200);
    expect(fetched.body.equals(TINY_PNG)).toBe(true);
    // the upstream's link is gone (one download), the durable one still works
    expect(media.requests.filter((r) => r.method === 'GET')).toHaveLength(1);
    expect((await fetchBytes(url)).body.equals(TINY_PNG)).toBe(true);
    expect(gateway.usage.at(-1)?.storedBytes).toBe(TINY_PNG.length);
  });

  it('b64_json: the image is downloaded once, encoded and stored from the same bytes', async () => {
    dashscope.next(answerWith(media.publish('two.png', TINY_PNG, 'image/png')));
    const res = await generate({ response_format: 'b64_json' });
    expect(res.status).toBe(200);
    expect(Buffer.from(res.body.data[0].b64_json as string, 'base64').equals(TINY_PNG)).toBe(true);
    expect((await fetchBytes(res.body.data[0].url as string)).body.equals(TINY_PNG)).toBe(true);
    expect(media.requests).toHaveLength(1);
    expect(gateway.usage.at(-1)?.storedBytes).toBe(TINY_PNG.length);
  });
});

describe('OpenAI-compatible base64-only upstream (GPT-image)', () => {
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: KEY_A, maxRetries: 0 });

  it('response_format url (openai SDK): the base64 is stored and answered as a URL', async () => {
    const result = await client.images.generate({ model: 'gpt-image-1', prompt: 'a fox', response_format: 'url' });
    const item = result.data?.[0];
    expect(item?.b64_json).toBeUndefined();
    expect(item?.url?.startsWith(RESULTS)).toBe(true);
    expect((await fetchBytes(item!.url!)).body.equals(TINY_PNG)).toBe(true);
    expect(result.usage).toEqual({ total_tokens: 100 });
  });

  it('b64_json still works, with the durable URL beside it', async () => {
    const res = await generate({ model: 'gpt-image-1', response_format: 'b64_json' });
    expect(res.status).toBe(200);
    expect(res.body.data[0].b64_json).toBe(TINY_PNG.toString('base64'));
    expect((await fetchBytes(res.body.data[0].url as string)).body.equals(TINY_PNG)).toBe(true);
  });
});

describe('Ark video tasks', () => {
  const TASKS = '/api/v3/contents/generations/tasks';
  const content = [{ type: 'text', text: 'a cat walks' }];

  it('succeeded: the callback and the query carry durable URLs; the record keeps keys, not URLs', async () => {
    const receiver = await startCallbackReceiver();
    try {
      const created = await request(gateway.url).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).send({ model: 'seedance', content, callback_url: receiver.url });
      expect(created.status).toBe(200);
      const [delivery] = await receiver.accepted(1);
      const called = JSON.parse(delivery!.body) as { status: string; content: { video_url: string; last_frame_url: string } };
      expect(called.status).toBe('succeeded');
      expect(called.content.video_url).toMatch(new RegExp(`^${RESULTS}[a-f0-9]{32}/[A-Za-z0-9_-]{22}\\.mp4\\?`));
      expect((await fetchBytes(called.content.video_url)).body.equals(VIDEO)).toBe(true);
      expect((await fetchBytes(called.content.last_frame_url)).body.equals(TINY_PNG)).toBe(true);

      const queried = await request(gateway.url).get(`${TASKS}/${created.body.id}`).set('Authorization', `Bearer ${KEY_A}`);
      expect(queried.body.content.video_url.startsWith(RESULTS)).toBe(true);
      expect((await fetchBytes(queried.body.content.video_url as string)).body.equals(VIDEO)).toBe(true);
      // re-hosted once: each upstream link was downloaded exactly once
      expect(media.requests.filter((r) => r.path.includes('video.mp4'))).toHaveLength(1);
      const record = await store.getTask(created.body.id as string);
      expect(record?.stored?.keys.video_url).toMatch(/^[a-f0-9]{32}\/[A-Za-z0-9_-]{22}\.mp4$/);
      expect(record?.stored?.bytes).toBe(VIDEO.length + TINY_PNG.length);
      expect(JSON.stringify(record)).not.toContain('signature=');
    } finally {
      await receiver.close();
    }
  });

  it('a task without callback is re-hosted on the query that sees it succeed', async () => {
    const created = await request(gateway.url).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).send({ model: 'seedance', content });
    const first = await request(gateway.url).get(`${TASKS}/${created.body.id}`).set('Authorization', `Bearer ${KEY_A}`);
    expect(first.status).toBe(200);
    expect(first.body.content.video_url.startsWith(RESULTS)).toBe(true);
    // the task's terminal usage event reports the stored bytes, once (no other event carries them)
    const stored = gateway.usage.filter((event) => (event.storedBytes ?? 0) > 0);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ route: 'video.tasks', storedBytes: VIDEO.length + TINY_PNG.length, task: { id: created.body.id, status: 'succeeded' } });
    const second = await request(gateway.url).get(`${TASKS}/${created.body.id}`).set('Authorization', `Bearer ${KEY_A}`);
    expect((await fetchBytes(second.body.content.last_frame_url as string)).body.equals(TINY_PNG)).toBe(true);
  });
});

describe('two instances see the same task succeed', () => {
  it('one set of copies is recorded and answered by both; the other is deleted', async () => {
    const other = gateway.variant({ store, storage });
    const tenantDir = path.join(directory, tenantPrefix('tenant-a'));
    const files = async () => (await fs.readdir(tenantDir).catch(() => [])).filter((name) => !name.endsWith('.part'));
    // the upstream's link lives on (24 h at Ark): both instances can download it
    media.downloadsPerLink = 5;
    try {
      const created = await request(gateway.url)
        .post('/api/v3/contents/generations/tasks')
        .set('Authorization', `Bearer ${KEY_A}`)
        .send({ model: 'seedance', content: [{ type: 'text', text: 'a race' }] });
      const before = await files();
      const taskPath = `/api/v3/contents/generations/tasks/${created.body.id}`;
      const [a, b] = await Promise.all([request(gateway.url).get(taskPath).set('Authorization', `Bearer ${KEY_A}`), request(other.app).get(taskPath).set('Authorization', `Bearer ${KEY_A}`)]);
      const keyOf = (body: { content: { video_url: string } }) => new URL(body.content.video_url).pathname;
      expect(keyOf(a.body)).toBe(keyOf(b.body));
      const record = await store.getTask(created.body.id as string);
      expect(keyOf(a.body)).toBe(`/v1/results/${record!.stored!.keys.video_url}`);
      // the losing instance's copies are deleted (in the background): two new files remain, video and frame
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && (await files()).length - before.length !== 2) await new Promise((resolve) => setTimeout(resolve, 50));
      const added = (await files()).filter((name) => !before.includes(name)).sort();
      expect(added).toEqual(
        Object.values(record!.stored!.keys)
          .map((key) => key.split('/')[1])
          .sort(),
      );
    } finally {
      media.downloadsPerLink = 1;
    }
  });
});

describe('video re-hosting retried with backoff', () => {
  it('a store down for the first attempts: the poll is retried, the callback waits and then carries the durable URL', async () => {
    let failures = 2;
    const flaky: ResultStorage = {
      ...storage,
      put: (key, body, info) => {
        if (failures <= 0) return storage.put(key, body, info);
        failures -= 1;
        body.destroy();
        return Promise.reject(new Error('503 Slow Down'));
      },
    };
    const warned: string[] = [];
    const variant = gateway.variant({ store, storage: flaky, logger: { warn: (_fields, message) => warned.push(message), error: () => undefined } });
    const receiver = await startCallbackReceiver();
    // the upstream's link lives on (24 h at Ark): each retry downloads it again
    media.downloadsPerLink = 5;
    try {
      const created = await request(variant.app)
        .post('/api/v3/contents/generations/tasks')
        .set('Authorization', `Bearer ${KEY_A}`)
        .send({ model: 'seedance', content: [{ type: 'text', text: 'a cat' }], callback_url: receiver.url });
      const [delivery] = await receiver.accepted(1);
      const durable = new URL((JSON.parse(delivery!.body) as { content: { video_url: string } }).content.video_url);
      expect(durable.pathname).toMatch(/^\/v1\/results\/[a-f0-9]{32}\/[A-Za-z0-9_-]{22}\.mp4$/);
      expect(failures).toBe(0);
      expect(warned).toContain('task poll failed; retrying with backoff');
      // the URL was signed for the host the task was created on; the same path and signature on this app
      const fetched = await request(variant.app).get(durable.pathname + durable.search);
      expect(Buffer.from(fetched.body as Buffer).equals(VIDEO)).toBe(true);
      expect((await store.getTask(created.body.id as string))?.stored?.keys.video_url).toBe(durable.pathname.replace('/v1/results/', ''));
    } finally {
      media.downloadsPerLink = 1;
      await receiver.close();
    }
  });
});

describe('signed result URLs', () => {
  async function storedUrl(): Promise<URL> {
    dashscope.next(answerWith(media.publish('signed.png', TINY_PNG, 'image/png')));
    return new URL((await generate({})).body.data[0].url as string);
  }
  const sign = (key: string, expires: string) => createHmac('sha256', SECRET).update(`${key}\n${expires}`).digest('base64url');
  const NOT_FOUND = { error: { message: 'No such result.', type: 'invalid_request_error', code: 'not_found', param: null } };

  it('valid: 200 with the bytes and the sniffed type', async () => {
    const response = await fetch(await storedUrl());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
  });

  it('expired (honestly signed): 403 permission_denied', async () => {
    const url = await storedUrl();
    const key = url.pathname.replace('/v1/results/', '');
    const past = String(Math.floor(Date.now() / 1000) - 10);
    const fetched = await fetchBytes(`${RESULTS}${key}?expires=${past}&signature=${sign(key, past)}`);
    expect(fetched.status).toBe(403);
    expect((fetched.json as { error: { code: string } }).error.code).toBe('permission_denied');
  });

  it.each([
    ['a tampered signature', (url: URL) => `${url.origin}${url.pathname}?expires=${url.searchParams.get('expires')}&signature=${'A'.repeat(43)}`],
    ['a tampered expiry', (url: URL) => `${url.origin}${url.pathname}?expires=${Number(url.searchParams.get('expires')) + 1000}&signature=${url.searchParams.get('signature')}`],
    ["another tenant's key under this signature", (url: URL) => `${url.origin}/v1/results/${tenantPrefix('tenant-b')}${url.pathname.split('/').at(-1)}${url.search}`],
    ['no signature', (url: URL) => `${url.origin}${url.pathname}`],
  ])('%s: 404, the same answer as a key that never existed', async (_name, mutate) => {
    const fetched = await fetchBytes(mutate(await storedUrl()));
    expect(fetched.status).toBe(404);
    expect(fetched.json).toEqual(NOT_FOUND);
  });

  it('a well-signed URL of a missing file: the same 404', async () => {
    const key = `${tenantPrefix('tenant-a')}${'x'.repeat(22)}.png`;
    const expires = String(Math.floor(Date.now() / 1000) + 60);
    const fetched = await fetchBytes(`${RESULTS}${key}?expires=${expires}&signature=${sign(key, expires)}`);
    expect(fetched).toMatchObject({ status: 404, json: NOT_FOUND });
  });

  it.each(['..%2f..%2f..%2fetc/passwd', `${tenantPrefix('tenant-a')}%2e%2e%2f%2e%2e%2fsecret.png`, `${tenantPrefix('tenant-a').slice(0, -1)}/..%2f..%2fsecret.png`, '..%5c..%5cwin.ini/x.png'])(
    'path traversal %s: 404, nothing read',
    async (tail) => {
      await fs.writeFile(path.join(path.dirname(directory), 'secret.png'), TINY_PNG).catch(() => undefined);
      const expires = String(Math.floor(Date.now() / 1000) + 60);
      const fetched = await fetchBytes(`${RESULTS}${tail}?expires=${expires}&signature=${sign(decodeURIComponent(tail), expires)}`);
      expect(fetched.status).toBe(404);
      expect((fetched.json as { error: { code: string } }).error.code).toBe('not_found');
    },
  );

  it('deleteResults removes a tenant: its URLs then answer 404', async () => {
    const url = await storedUrl();
    expect((await fetchBytes(url.href)).status).toBe(200);
    expect(await gateway.router.deleteResults({ id: 'tenant-a' })).toBeGreaterThan(0);
    expect((await fetchBytes(url.href)).json).toEqual(NOT_FOUND);
  });
});

describe('hostile upstreams and failing stores', () => {
  it('a result that is not an image: 502 image_download_failed, nothing stored', async () => {
    const before = await fs.readdir(path.join(directory, tenantPrefix('tenant-a'))).catch(() => []);
    dashscope.next(answerWith(media.publish('page.png', Buffer.from('<html>signed link expired</html>'), 'image/png')));
    const res = await generate({});
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('image_download_failed');
    expect(await fs.readdir(path.join(directory, tenantPrefix('tenant-a'))).catch(() => [])).toEqual(before);
  });

  it('a result larger than limits.downloadBytes: 502, the transfer cut', async () => {
    const small = gateway.variant({ store, storage, limits: { downloadBytes: 4096 } });
    const big = Buffer.concat([TINY_PNG, Buffer.alloc(64 * 1024)]);
    dashscope.next(answerWith(media.publish('big.png', big, 'image/png')));
    const res = await generate({}, small.app);
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('image_download_failed');
    expect(res.body.error.message).toContain('larger than 4096 bytes');
  });

  it('a result URL on a private address: refused unless allow.privateResultUrls', async () => {
    const strict = gateway.variant({ store, storage, allow: { privateResultUrls: false } });
    dashscope.next(answerWith(media.publish('private.png', TINY_PNG, 'image/png')));
    const res = await generate({}, strict.app);
    expect(res.status).toBe(502);
    expect(res.body.error.message).toContain('loopback, private or link-local');
    expect(media.requests).toHaveLength(0);
  });

  const failing = (put: ResultStorage['put']): ResultStorage => ({ put, url: async () => 'unused', delete: async () => undefined, deletePrefix: async () => 0 });

  it('a store that throws: the upstream URL, said so in extra, and logged', async () => {
    const logged: string[] = [];
    const down = gateway.variant({ store, storage: failing(async () => Promise.reject(new Error('connect ECONNREFUSED'))), logger: { error: (_fields, message) => logged.push(message) } });
    const upstreamUrl = media.publish('fallback.png', TINY_PNG, 'image/png');
    dashscope.next(answerWith(upstreamUrl));
    const res = await generate({}, down.app);
    expect(res.status).toBe(200);
    expect(res.body.data[0].url).toBe(upstreamUrl);
    expect(res.body.extra.storage_error).toContain('could not be stored');
    expect(logged).toContain('result storage failed');
  });

  it("a store that hangs: cut after storage.timeoutMs; onFailure 'error' answers 502 storage_failed", async () => {
    const hung = gateway.variant({ store, storage: { store: failing(() => new Promise(() => undefined)), timeoutMs: 200, onFailure: 'error' } });
    dashscope.next(answerWith(media.publish('hang.png', TINY_PNG, 'image/png')));
    const res = await generate({}, hung.app);
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ code: 'storage_failed', type: 'upstream_error' });
  });
});
