// Attacks on durable results (docs/durable-results.md): each test names the defect it guards against.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import type { ResolveUpstreamInput } from '../../lib/index.js';
import { localResultStorage } from '../../lib/storage.js';
import { startCallbackReceiver } from '../helpers/callback-receiver.js';
import { type FakeArk, arkTaskObject, startFakeArk } from '../helpers/fake-ark.js';
import { dashscopeSuccess, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';

const SECRET = 'attack-secret-0123456789-abcdefghijklmn';
const directories: string[] = [];
afterAll(async () => {
  for (const directory of directories) await fs.rm(directory, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-attacks-'));
  directories.push(directory);
  return directory;
}
async function storedFiles(directory: string): Promise<string[]> {
  return (await fs.readdir(directory, { recursive: true })).filter((name) => /\.[a-z0-9]+$/.test(name));
}

/** Polls `read` until `done` holds (or 10 s pass) and answers the last value. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

/** A small MP4 (an `ftyp` box first, so it reads as a video) of `size` bytes. */
function mp4(size: number): Buffer {
  const video = Buffer.alloc(size, 7);
  Buffer.from([0, 0, 0, 0x20, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d]).copy(video);
  return video;
}

/** A media host that answers every request with a 4 KB MP4. */
const startVideoHost = () =>
  startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4' });
    res.end(mp4(4096));
  });

/** Video tasks on the fake Ark's Seedance; nothing else resolves. */
const seedance = ({ route }: ResolveUpstreamInput, { ark }: { ark: FakeArk }) =>
  route === 'video.tasks' ? { provider: 'ark' as const, baseURL: ark.baseURL, apiKey: 'ark-key', model: 'seedance' } : null;

/** The task succeeds, and its next `reads` reads answer it succeeded with `videoUrl`. */
function succeedWith(ark: FakeArk, videoUrl: string, reads: number): void {
  ark.scripts.push(['succeeded']);
  for (let index = 0; index < reads; index += 1) {
    ark.next((req, res) => sendJson(res, 200, { ...arkTaskObject(decodeURIComponent(req.path.split('/').pop()!), 'seedance', 'succeeded'), content: { video_url: videoUrl } }));
  }
}

/** Creates a Seedance task on the gateway; `query` reads it there. */
async function createVideoTask(url: string, extra: Record<string, unknown> = {}) {
  const created = await request(url)
    .post('/api/v3/contents/generations/tasks')
    .set('authorization', `Bearer ${KEY_A}`)
    .send({ model: 'seedance', content: [{ type: 'text', text: 'a cat' }], ...extra });
  const query = () => request(url).get(`/api/v3/contents/generations/tasks/${created.body.id}`).set('authorization', `Bearer ${KEY_A}`);
  return { created, query };
}

describe('a failure of one image of several leaves no stored copies behind', () => {
  it('n=2, the second result is not an image: 502 and the first copy is deleted too', async () => {
    const directory = await tempDir();
    // the first result answers at once, the second only after the first is stored, and lies
    let firstStored!: () => void;
    const stored = new Promise<void>((resolve) => (firstStored = resolve));
    const host = await startFakeUpstream(async (req, res) => {
      if (req.path === '/good.png') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(TINY_PNG);
        return;
      }
      await stored;
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end('<html>not an image</html>');
    });
    const local = localResultStorage({ directory, secret: SECRET });
    const gateway = await gatewayWith({
      fakes: { dashscope: startFakeDashscope },
      // a model whose catalogue row takes n 2 (qwen-image-plus makes one)
      resolve: (_input, { dashscope }) => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-2.0' }),
      storage: {
        ...local,
        put: async (key, body, info) => {
          const bytes = await local.put(key, body, info);
          firstStored();
          return bytes;
        },
      },
    });
    gateway.fakes.dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([`${host.origin}/good.png`, `${host.origin}/bad.png`])));
    const res = await request(gateway.url).post('/v1/images/generations').set('authorization', `Bearer ${KEY_A}`).send({ model: 'x', prompt: 'x', n: 2 });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('image_download_failed');
    // the copy is deleted in the background (best effort, the store may be down): gone soon after
    expect(
      await eventually(
        () => storedFiles(directory),
        (files) => files.length === 0,
      ),
    ).toEqual([]);
    // and no bytes are billed as stored for an answer that names none
    expect(gateway.usage.at(-1)?.storedBytes ?? 0).toBe(0);
    await host.close();
  });
});

describe('a succeeded video whose result cannot be stored (not a video) still reaches the callback', () => {
  it('the callback carries succeeded with the upstream URL and a storage_error note, not silence', async () => {
    const directory = await tempDir();
    const receiver = await startCallbackReceiver();
    const host = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.end('<html>this is not a video</html>');
    });
    const gateway = await gatewayWith({
      fakes: { ark: startFakeArk },
      resolve: seedance,
      callbacks: { allowLocal: true, pollIntervalsMs: { video: [30] }, retryBaseMs: 20, retryMaxMs: 40, maxAttempts: 3 },
      storage: localResultStorage({ directory, secret: SECRET }),
    });
    const { ark } = gateway.fakes;
    succeedWith(ark, `${host.origin}/v.mp4`, 200);
    const { created } = await createVideoTask(gateway.url, { callback_url: receiver.url });
    expect(created.status).toBe(200);
    const [delivery] = await receiver.accepted(1, 15_000);
    const body = JSON.parse(delivery!.body) as { status: string; content: { video_url: string }; storage_error?: string };
    expect(body.status).toBe('succeeded');
    expect(body.content.video_url).toBe(`${host.origin}/v.mp4`);
    expect(typeof body.storage_error).toBe('string');
    await receiver.close();
    await host.close();
  }, 30_000);
});

describe('a result download that breaks while the store is not reading yet does not crash the process', () => {
  it.each([
    ['a slow store (connects before reading)', 400],
    ['a store that never reads', -1],
  ])('%s: the download reset answers 502 image_download_failed, no unhandled error', async (_name, delayMs) => {
    const directory = await tempDir();
    const local = localResultStorage({ directory, secret: SECRET });
    // the result host sends the first bytes of a PNG, then drops the connection
    const host = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 100_000 });
      res.write(Buffer.concat([TINY_PNG, Buffer.alloc(1024)]));
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const gateway = await gatewayWith({
      fakes: { dashscope: startFakeDashscope },
      resolve: (_input, { dashscope }) => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-plus' }),
      storage: {
        store: {
          ...local,
          put: async (key, body, info) => {
            if (delayMs < 0) return new Promise<number>(() => undefined);
            await new Promise((resolve) => setTimeout(resolve, delayMs));
            return local.put(key, body, info);
          },
        },
        timeoutMs: 2_000,
      },
    });
    gateway.fakes.dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([`${host.origin}/r.png`])));
    const res = await request(gateway.url).post('/v1/images/generations').set('authorization', `Bearer ${KEY_A}`).send({ model: 'x', prompt: 'x' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('image_download_failed');
    expect(await storedFiles(directory)).toEqual([]);
    await host.close();
  });
});

describe('a store that fails while writing is a storage failure, not the upstream’s', () => {
  it('the write error destroys the body: the answer is the upstream URL with storage_error', async () => {
    const { Writable } = await import('node:stream');
    const { pipeline } = await import('node:stream/promises');
    const gateway = await gatewayWith({
      fakes: { dashscope: startFakeDashscope },
      resolve: (_input, { dashscope }) => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-plus' }),
      storage: {
        put: async (_key, body) => {
          await pipeline(body, new Writable({ write: (_chunk, _encoding, callback) => callback(new Error('disk full')) }));
          return 0;
        },
        url: async () => 'https://never.example/x',
        delete: async () => undefined,
        deletePrefix: async () => 0,
      },
    });
    const res = await request(gateway.url).post('/v1/images/generations').set('authorization', `Bearer ${KEY_A}`).send({ model: 'x', prompt: 'x' });
    expect(res.status).toBe(200);
    expect(String(res.body.data[0].url).startsWith(gateway.fakes.dashscope.origin)).toBe(true);
    expect(res.body.extra.storage_error).toMatch(/could not be stored/);
  });
});

describe('a stored video whose store cannot sign a URL any more', () => {
  it('the query answers per storage.onFailure (upstream URL and storage_error), not 500 internal_error', async () => {
    const directory = await tempDir();
    const local = localResultStorage({ directory, secret: SECRET });
    let signing = true;
    const host = await startVideoHost();
    const gateway = await gatewayWith({
      fakes: { ark: startFakeArk },
      resolve: seedance,
      storage: {
        ...local,
        url: async (key, context) => {
          if (!signing) throw new Error('signing service down');
          return local.url(key, context);
        },
      },
    });
    const { ark } = gateway.fakes;
    const videoUrl = `${host.origin}/v.mp4`;
    succeedWith(ark, videoUrl, 5);
    const { query } = await createVideoTask(gateway.url);
    const first = await query();
    expect(first.status).toBe(200);
    expect(String(first.body.content.video_url).startsWith(gateway.url)).toBe(true);
    signing = false;
    const second = await query();
    expect(second.status).toBe(200);
    expect(second.body.content.video_url).toBe(videoUrl);
    expect(typeof second.body.storage_error).toBe('string');
    await host.close();
  });
});

describe('the embedded store serves byte ranges (video players, Safari above all, need 206)', () => {
  it('Range: bytes=a-b answers 206 with Content-Range and those bytes; no Range is 200 with Accept-Ranges', async () => {
    const directory = await tempDir();
    const image = Buffer.concat([TINY_PNG, Buffer.from(Array.from({ length: 5000 }, (_, index) => index % 251))]);
    const host = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(image);
    });
    const gateway = await gatewayWith({
      fakes: { dashscope: startFakeDashscope },
      resolve: (_input, { dashscope }) => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-plus' }),
      storage: localResultStorage({ directory, secret: SECRET }),
    });
    gateway.fakes.dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([`${host.origin}/r.png`])));
    const res = await request(gateway.url).post('/v1/images/generations').set('authorization', `Bearer ${KEY_A}`).send({ model: 'x', prompt: 'x' });
    const url = String(res.body.data[0].url);
    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect(Buffer.from(await whole.arrayBuffer()).equals(image)).toBe(true);
    const part = await fetch(url, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${image.length}`);
    expect(part.headers.get('content-length')).toBe('100');
    expect(Buffer.from(await part.arrayBuffer()).equals(image.subarray(100, 200))).toBe(true);
    const tail = await fetch(url, { headers: { range: 'bytes=-10' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).equals(image.subarray(image.length - 10))).toBe(true);
    // a range the file cannot satisfy, or several ranges, get the whole file (RFC 9110 allows ignoring Range)
    for (const range of [`bytes=${image.length + 10}-`, 'bytes=0-1,5-6', 'items=0-1']) {
      const other = await fetch(url, { headers: { range } });
      expect(other.status).toBe(200);
      expect(Buffer.from(await other.arrayBuffer()).equals(image)).toBe(true);
    }
    await host.close();
  });
});

describe('an S3 endpoint that black-holes requests does not pin sockets forever', () => {
  it('the answer falls back, and the store gives up its connections (put and the cleanup delete) after requestTimeoutMs', async () => {
    const { s3ResultStorage } = await import('../../lib/storage.js');
    const { startSilentServer } = await import('../helpers/faulty-servers.js');
    const silent = await startSilentServer();
    const gateway = await gatewayWith({
      fakes: { dashscope: startFakeDashscope },
      resolve: (_input, { dashscope }) => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-plus' }),
      storage: {
        store: s3ResultStorage({
          bucket: 'results',
          endpoint: silent.origin,
          forcePathStyle: true,
          credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
          requestTimeoutMs: 500,
        }),
        // the store's own timeout, with its retries, ends the put long before this: the answer waits
        // for it, so the silent server has surely seen the put's connections, however slow the machine
        timeoutMs: 15_000,
      },
    });
    const res = await request(gateway.url).post('/v1/images/generations').set('authorization', `Bearer ${KEY_A}`).send({ model: 'x', prompt: 'x' });
    expect(res.status).toBe(200);
    expect(typeof res.body.extra.storage_error).toBe('string');
    // the put's and the cleanup delete's connections (with the SDK's retries) all end, router still open
    await new Promise((resolve) => setTimeout(resolve, 500));
    await silent.allClosed(15_000);
    expect(silent.connections.length).toBeGreaterThan(0);
    await silent.close();
  }, 30_000);
});

describe('the embedded store: expiry overflow and the retention sweep', () => {
  it.each([10 ** 13, Number.MAX_SAFE_INTEGER])('urlExpiresInSeconds %d would sign URLs the route can never accept: refused at configuration', async (lifetime) => {
    const { GatewayConfigError } = await import('../../lib/index.js');
    const directory = await tempDir();
    expect(() => localResultStorage({ directory, secret: SECRET, urlExpiresInSeconds: lifetime })).toThrow(GatewayConfigError);
  });

  it('the sweep deletes files past retentionMs from disk without anyone reading them; close() stops it', async () => {
    const directory = await tempDir();
    const store = localResultStorage({ directory, secret: SECRET, retentionMs: 200 });
    const { Readable } = await import('node:stream');
    const key = `${'a'.repeat(32)}/${'b'.repeat(22)}.png`;
    await store.put(key, Readable.from([TINY_PNG]), { contentType: 'image/png', signal: new AbortController().signal });
    expect(await storedFiles(directory)).toHaveLength(1);
    expect(
      await eventually(
        () => storedFiles(directory),
        (files) => files.length === 0,
      ),
    ).toEqual([]);
    await store.close?.();
    // after close, nothing sweeps: a file older than retention stays on disk
    await store.put(key, Readable.from([TINY_PNG]), { contentType: 'image/png', signal: new AbortController().signal });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await storedFiles(directory)).toHaveLength(1);
  });
});

describe('a task store that fails to record the stored keys', () => {
  it('the copies just made are deleted (a retry makes new ones): no orphaned videos per attempt', async () => {
    const { memoryTaskStore } = await import('../../lib/index.js');
    const directory = await tempDir();
    const inner = memoryTaskStore();
    let failStored = true;
    const host = await startVideoHost();
    const gateway = await gatewayWith({
      fakes: { ark: startFakeArk },
      resolve: seedance,
      store: {
        ...inner,
        updateTask: async (id, version, changes) => {
          if (changes.stored && failStored) throw new Error('task store unreachable');
          return inner.updateTask(id, version, changes);
        },
      },
      storage: localResultStorage({ directory, secret: SECRET }),
    });
    const { ark } = gateway.fakes;
    succeedWith(ark, `${host.origin}/v.mp4`, 5);
    const { query } = await createVideoTask(gateway.url);
    expect((await query()).status).toBeGreaterThanOrEqual(500);
    expect(
      await eventually(
        () => storedFiles(directory),
        (files) => files.length === 0,
      ),
    ).toEqual([]);
    failStored = false;
    const ok = await query();
    expect(ok.status).toBe(200);
    expect(String(ok.body.content.video_url).startsWith(gateway.url)).toBe(true);
    expect(await storedFiles(directory)).toHaveLength(1);
    await host.close();
  });
});

describe('a task store whose write of the keys lands but does not answer', () => {
  it('the copies the record now names are kept: the durable URL works', async () => {
    const { memoryTaskStore } = await import('../../lib/index.js');
    const directory = await tempDir();
    const inner = memoryTaskStore();
    let lose = true;
    const host = await startVideoHost();
    const gateway = await gatewayWith({
      fakes: { ark: startFakeArk },
      resolve: seedance,
      store: {
        ...inner,
        updateTask: async (id, version, changes) => {
          const updated = await inner.updateTask(id, version, changes);
          if (changes.stored && lose) {
            lose = false;
            throw new Error('timeout after the write');
          }
          return updated;
        },
      },
      storage: localResultStorage({ directory, secret: SECRET }),
    });
    const { ark } = gateway.fakes;
    succeedWith(ark, `${host.origin}/v.mp4`, 5);
    const { query } = await createVideoTask(gateway.url);
    await query();
    const ok = await query();
    expect(ok.status).toBe(200);
    const video = await fetch(String(ok.body.content.video_url));
    expect(video.status).toBe(200);
    await host.close();
  });
});

describe('queries that poll while a video is being copied', () => {
  it('share the one copy in progress instead of each starting a full download', async () => {
    const directory = await tempDir();
    let downloads = 0;
    const host = await startFakeUpstream(async (_req, res) => {
      downloads += 1;
      const video = mp4(64 * 1024);
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.write(video.subarray(0, 1024));
      // a slow transfer: the other queries arrive while it runs
      await new Promise((resolve) => setTimeout(resolve, 800));
      res.end(video.subarray(1024));
    });
    const gateway = await gatewayWith({
      fakes: { ark: startFakeArk },
      resolve: seedance,
      storage: localResultStorage({ directory, secret: SECRET }),
    });
    const { ark } = gateway.fakes;
    succeedWith(ark, `${host.origin}/v.mp4`, 10);
    const { query } = await createVideoTask(gateway.url);
    const first = query().then((res) => res);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const answers = await Promise.all([first, query(), query()]);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(String(answer.body.content.video_url).startsWith(gateway.url)).toBe(true);
    }
    expect(downloads).toBe(1);
    // one usage event reports the bytes, the others none
    expect(gateway.usage.filter((event) => (event.storedBytes ?? 0) > 0)).toHaveLength(1);
    await host.close();
  });
});
