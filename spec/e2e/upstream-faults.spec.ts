// Upstreams that misbehave on purpose (refuse, stay silent, stall, reset, lie, flood, die mid-stream): the right error object, the gateway keeps serving, nothing hangs or leaks.
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Upstream } from '../../lib/index.js';
import { DASHSCOPE_PATH, type FakeDashscope, dashscopeSuccess, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { type FakeUpstream, type Responder, sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';
import { type FakeLlm, chatChunks, chatCompletion, responseEvents, startFakeLlm } from '../helpers/fake-llm.js';
import { type StreamedBody, type TcpFault, refusedOrigin, startResettingServer, startSilentServer, startTcpFault, streamUntilClosed } from '../helpers/faulty-servers.js';
import { KEY_A, type TestGateway, createTestGateway, listen } from '../helpers/gateway-app.js';
import { type RawAnswer, postJson, rawRequest } from '../helpers/raw-client.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const UPSTREAM_KEY = 'sk-upstream-fault-secret-0000';
const FAULT_TIMEOUT_MS = 300;
const DOWNLOAD_BYTES = 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 1_000;
const UPSTREAM_RESPONSE_BYTES = 16 * 1024 * 1024; // the default limits.upstreamResponseBytes
const SILENT_TIMEOUT_MS = 1_000;
const MiB = 1024 * 1024;

let dashscope: FakeDashscope;
let llm: FakeLlm;
let imageHost: FakeUpstream;
let gateway: TestGateway;
let server: { url: string; close(): Promise<void> };
let agent: http.Agent;
/** Result images served endlessly: what each stream wrote before the gateway hung up. */
const endless: StreamedBody[] = [];

/** Where the `-faulty` models go; each test points them at its misbehaving upstream. */
const target = { imageBase: '', chatBase: '', timeoutMs: FAULT_TIMEOUT_MS };
function pointAt(origin: string, timeoutMs = FAULT_TIMEOUT_MS): void {
  target.imageBase = `${origin}/api/v1`;
  target.chatBase = `${origin}/v1`;
  target.timeoutMs = timeoutMs;
}

const imageBody = (model: string, extra: Record<string, unknown> = {}) => ({ model, input: { messages: [{ role: 'user', content: [{ text: 'a red square' }] }] }, ...extra });
const chatBody = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'Say hello' }], ...extra });

interface FaultRoute {
  name: string;
  path: string;
  provider: 'dashscope' | 'openai';
  body: () => unknown;
}
const IMAGE: FaultRoute = { name: 'image (DashScope)', path: '/v1/images/generations', provider: 'dashscope', body: () => imageBody('x-image-2.0-faulty') };
const CHAT: FaultRoute = { name: 'chat', path: '/v1/chat/completions', provider: 'openai', body: () => chatBody('chat-faulty') };
const CHAT_STREAM: FaultRoute = { name: 'chat stream: true', path: '/v1/chat/completions', provider: 'openai', body: () => chatBody('chat-faulty', { stream: true }) };

function post(pathname: string, body: unknown, deadlineMs = 8_000, via: http.Agent = agent): Promise<RawAnswer> {
  return postJson(`${server.url}${pathname}`, body, { key: KEY_A, agent: via, deadlineMs });
}

// The error objects of lib/errors/gateway-error.ts, whole.
const timeoutError = (provider: string, ms: number) => ({
  error: { message: `The ${provider} upstream did not answer within ${ms} ms. Retry, or raise the upstream's timeoutMs for slow jobs.`, type: 'upstream_error', code: 'upstream_timeout', param: null },
});
const unreachableError = (provider: string, detail: string) => ({
  error: { message: `The ${provider} upstream could not be reached (${detail}).`, type: 'upstream_error', code: 'upstream_unreachable', param: null },
});
const badResponseError = (provider: string, detail: string) => ({
  error: { message: `The ${provider} upstream returned an unusable response: ${detail}`, type: 'upstream_error', code: 'upstream_bad_response', param: null },
});
/** The chat-completions error event (upstreams §4.3) carrying one of the objects above. */
const chatErrorEvent = (body: { error: { message: string; type: string; code: string; param: null } }) =>
  `data: ${JSON.stringify({ error: { message: body.error.message, type: body.error.type, param: null, code: body.error.code } })}\n\n`;

/** A normal image request, chat request and chat stream through the same gateway all succeed. */
async function expectStillServing(): Promise<void> {
  // fresh connections: a kept-alive socket left idle through a long test (a burst, a flood) may be
  // closed by the server (keepAliveTimeout) just as it is reused, an ECONNRESET that says nothing of the gateway
  const fresh = new http.Agent({ keepAlive: true });
  const [image, chat, stream] = await Promise.all([
    post('/v1/images/generations', imageBody('x-image-2.0'), 8_000, fresh),
    post('/v1/chat/completions', chatBody('chat-ok'), 8_000, fresh),
    post('/v1/chat/completions', chatBody('chat-ok', { stream: true }), 8_000, fresh),
  ]).finally(() => fresh.destroy());
  expect(image.status).toBe(200);
  expect(image.json).toEqual({
    created: expect.any(Number),
    data: [{ url: expect.stringMatching(/\/results\/image-1\.png\?/), b64_json: '', revised_prompt: '' }],
    extra: { request_id: expect.stringMatching(/^ds-req-/) },
  });
  expect(chat.status).toBe(200);
  expect(chat.json).toEqual(chatCompletion('upstream-chat', 'Hello there'));
  expect(stream.status).toBe(200);
  expect(stream.text).toBe(chatChunks('upstream-chat', ['Hel', 'lo', ' there']).join(''));
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const stall = (): Promise<void> => new Promise(() => {});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  dashscope = await startFakeDashscope();
  llm = await startFakeLlm();
  llm.chunkDelayMs = 10;
  imageHost = await startFakeUpstream(async (request, res) => {
    if (request.path === '/missing.png') {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Not Found');
      return;
    }
    if (request.path === '/endless.png') {
      // a "2 GB" image: zeros until the reader hangs up, never buffered here
      res.writeHead(200, { 'content-type': 'image/png' });
      endless.push(await streamUntilClosed(res, 2 * 1024 * MiB));
      return;
    }
    res.writeHead(500);
    res.end();
  });
  gateway = createTestGateway({
    // each case here is one misbehaving call, sent with the same body as the case before it: with kept
    // answers on, a retry of the same body would join the previous case's abandoned call instead
    // (that is kept-work.spec.ts's subject), so the faults run with nothing kept
    idempotency: { keptAnswerSeconds: false },
    // the load tests send 200 requests at once from one tenant: above the default per-caller cap on purpose
    limits: { downloadBytes: DOWNLOAD_BYTES, downloadTimeoutMs: DOWNLOAD_TIMEOUT_MS, inFlightPerCaller: 256 },
    resolveUpstream: ({ model }): Upstream | null => {
      if (model === 'x-image-2.0') return { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: UPSTREAM_KEY, timeoutMs: 5_000 };
      if (model === 'x-image-2.0-faulty') return { provider: 'dashscope', baseURL: target.imageBase, apiKey: UPSTREAM_KEY, timeoutMs: target.timeoutMs };
      if (model === 'chat-ok') return { provider: 'openai', baseURL: llm.baseURL, apiKey: UPSTREAM_KEY, model: 'upstream-chat', timeoutMs: 5_000 };
      if (model === 'chat-faulty') return { provider: 'openai', baseURL: target.chatBase, apiKey: UPSTREAM_KEY, model: 'upstream-chat', timeoutMs: target.timeoutMs };
      // the requests the load test's upstream never answers (it tells them by the model name) and their own short timeout
      if (model === 'x-image-2.0-silent') return { provider: 'dashscope', baseURL: target.imageBase, apiKey: UPSTREAM_KEY, timeoutMs: SILENT_TIMEOUT_MS };
      if (model === 'chat-silent') return { provider: 'openai', baseURL: target.chatBase, apiKey: UPSTREAM_KEY, model: 'upstream-silent', timeoutMs: SILENT_TIMEOUT_MS };
      return null;
    },
  });
  target.imageBase = dashscope.baseURL;
  target.chatBase = llm.baseURL;
  server = await listen(gateway.app);
  agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
});

afterAll(async () => {
  agent.destroy();
  await server.close();
  await gateway.close();
  await dashscope.close();
  await llm.close();
  await imageHost.close();
});

afterEach(() => {
  // by default the faulty models reach the healthy fakes, which tests script with next()
  target.imageBase = dashscope.baseURL;
  target.chatBase = llm.baseURL;
  target.timeoutMs = FAULT_TIMEOUT_MS;
  dashscope.requests.length = 0;
  llm.requests.length = 0;
});

describe('1. an upstream that refuses connections', () => {
  it.each([IMAGE, CHAT, CHAT_STREAM])('$name: 502 upstream_unreachable (ECONNREFUSED), then keeps serving', async (route) => {
    pointAt(await refusedOrigin());
    const res = await post(route.path, route.body());
    expect(res.status).toBe(502);
    expect(res.json).toEqual(unreachableError(route.provider, 'ECONNREFUSED'));
    expect(res.ms).toBeLessThan(3_000);
    await expectStillServing();
  });
});

describe('2. an upstream that accepts the connection and never answers', () => {
  let silent: TcpFault;
  beforeAll(async () => {
    silent = await startSilentServer();
  });
  afterAll(() => silent.close());

  it.each([IMAGE, CHAT, CHAT_STREAM])('$name: 504 upstream_timeout in about the timeout, upstream socket closed', async (route) => {
    pointAt(silent.origin);
    const opened = silent.connections.length;
    const res = await post(route.path, route.body());
    expect(res.status).toBe(504);
    expect(res.json).toEqual(timeoutError(route.provider, FAULT_TIMEOUT_MS));
    expect(res.ms).toBeGreaterThanOrEqual(FAULT_TIMEOUT_MS - 20);
    expect(res.ms).toBeLessThan(3_000);
    // the request reached the silent upstream, and the gateway hung up on it (nothing left open)
    expect(silent.connections.length).toBe(opened + 1);
    expect(silent.connections.at(-1)!.bytesRead).toBeGreaterThan(0);
    await silent.allClosed(1_000);
    await expectStillServing();
  });
});

describe('3. an upstream that sends headers, then stalls the body', () => {
  it('image (DashScope), part of the JSON then nothing: 504 upstream_timeout within the timeout', async () => {
    dashscope.next((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4000' });
      res.write('{"output":{"choices":[');
      return stall();
    });
    const res = await post(IMAGE.path, IMAGE.body());
    expect(res.status).toBe(504);
    expect(res.json).toEqual(timeoutError('dashscope', FAULT_TIMEOUT_MS));
    expect(res.ms).toBeLessThan(3_000);
    await expectStillServing();
  });

  it('chat, headers and no body byte: 504 upstream_timeout within the timeout', async () => {
    llm.next((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      return stall();
    });
    const res = await post(CHAT.path, CHAT.body());
    expect(res.status).toBe(504);
    expect(res.json).toEqual(timeoutError('openai', FAULT_TIMEOUT_MS));
    expect(res.ms).toBeLessThan(3_000);
    await expectStillServing();
  });

  it('chat stream, one chunk then nothing: the chunk, then one upstream_timeout error event, and the stream ends', async () => {
    const first = chatChunks('upstream-chat', ['a'])[0]!;
    llm.next((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(first);
      return stall();
    });
    const res = await post(CHAT_STREAM.path, CHAT_STREAM.body());
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.text).toBe(first + chatErrorEvent(timeoutError('openai', FAULT_TIMEOUT_MS)));
    expect(res.ms).toBeLessThan(3_000);
    await expectStillServing();
  });

  it('chat stream, headers and no event at all: one upstream_timeout error event, and the stream ends', async () => {
    llm.next((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      return stall();
    });
    const res = await post(CHAT_STREAM.path, CHAT_STREAM.body());
    expect(res.status).toBe(200);
    expect(res.text).toBe(chatErrorEvent(timeoutError('openai', FAULT_TIMEOUT_MS)));
    expect(res.ms).toBeLessThan(3_000);
    await expectStillServing();
  });

  // regression (was a defect): the relay pauses the upstream body for client backpressure and the idle limit counts that pause as upstream silence: a healthy stream read slowly is cut with upstream_timeout.
  it('chat stream, healthy but read slowly by the client: relayed whole, not cut as an upstream timeout', async () => {
    // 16 MiB of events, sent as fast as the gateway takes them: more than the socket buffers hold
    const event = `data: ${JSON.stringify({ pad: 'x'.repeat(64 * 1024 - 20) })}\n\n`;
    const events = Array.from({ length: 256 }, () => event);
    llm.next(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const chunk of [...events, 'data: [DONE]\n\n']) {
        if (res.destroyed) return;
        if (!res.write(chunk)) {
          await new Promise<void>((resolve) => {
            const done = (): void => {
              res.off('drain', done);
              res.off('close', done);
              resolve();
            };
            res.on('drain', done);
            res.on('close', done);
          });
        }
      }
      res.end();
    });
    // the client reads nothing for 1 s (over three idle limits), then everything
    const { text } = await rawRequest(server.url, {
      path: CHAT_STREAM.path,
      agent,
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify(CHAT_STREAM.body()),
      onResponse: (res) => {
        res.pause();
        setTimeout(() => res.resume(), 1_000);
      },
    });
    const errorEvents = text.split('\n\n').filter((part) => part.startsWith('data: {"error"'));
    console.info(`[faults] slow client: received ${(text.length / MiB).toFixed(2)} of ${((events.length * event.length) / MiB).toFixed(2)} MiB, error events ${JSON.stringify(errorEvents)}`);
    expect(errorEvents).toEqual([]);
    expect(text.length).toBe(events.length * event.length + 'data: [DONE]\n\n'.length);
    await expectStillServing();
  });
});

describe('4. an upstream that resets the connection', () => {
  /** Sends the headers and the first 40 bytes of `text`, then kills the socket. */
  const dieMidBody =
    (text: string, how: 'destroy' | 'reset'): Responder =>
    async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.write(text.slice(0, 40));
      await sleep(30);
      if (how === 'reset') res.socket!.resetAndDestroy();
      else res.socket!.destroy();
    };

  it.each(['destroy', 'reset'] as const)('image (DashScope), mid-body (%s): 502 upstream_unreachable', async (how) => {
    dashscope.next(dieMidBody(JSON.stringify(dashscopeSuccess([dashscope.resultUrl('a.png')])), how));
    const res = await post(IMAGE.path, IMAGE.body());
    expect(res.status).toBe(502);
    expect(res.json).toEqual(unreachableError('dashscope', 'ECONNRESET'));
    await expectStillServing();
  });

  it.each(['destroy', 'reset'] as const)('chat, mid-body (%s): 502 upstream_unreachable', async (how) => {
    llm.next(dieMidBody(JSON.stringify(chatCompletion('upstream-chat', 'Hello there')), how));
    const res = await post(CHAT.path, CHAT.body());
    expect(res.status).toBe(502);
    expect(res.json).toEqual(unreachableError('openai', 'ECONNRESET'));
    await expectStillServing();
  });

  describe('before answering anything (RST once the request arrived)', () => {
    let resetting: TcpFault;
    beforeAll(async () => {
      resetting = await startResettingServer();
    });
    afterAll(() => resetting.close());

    it.each([IMAGE, CHAT, CHAT_STREAM])('$name: 502 upstream_unreachable (ECONNRESET)', async (route) => {
      pointAt(resetting.origin);
      const res = await post(route.path, route.body());
      expect(res.status).toBe(502);
      expect(res.json).toEqual(unreachableError(route.provider, 'ECONNRESET'));
      await expectStillServing();
    });
  });
});

describe('5. an upstream that answers something that is not JSON', () => {
  const MALFORMED = '{"output":{"choices":[{"message":';

  it('image (DashScope), 200 with malformed JSON: 502 upstream_bad_response', async () => {
    dashscope.next((_req, res) => sendJson(res, 200, MALFORMED, { 'x-request-id': 'ds-bad-json' }));
    const res = await post(IMAGE.path, IMAGE.body());
    expect(res.status).toBe(502);
    expect(res.json).toEqual(badResponseError('dashscope', 'the body is not JSON (request id ds-bad-json)'));
    await expectStillServing();
  });

  it('image (DashScope), 503 with an HTML page: 502 upstream_error', async () => {
    dashscope.next((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<html><body>Service Unavailable</body></html>');
    });
    const res = await post(IMAGE.path, IMAGE.body());
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ error: { message: 'The upstream failed: HTTP 503 (dashscope)', type: 'upstream_error', code: 'upstream_error', param: null } });
    await expectStillServing();
  });

  it('chat, 200 with malformed JSON: relayed as is (a 2xx body is passed through untouched)', async () => {
    llm.next((_req, res) => sendJson(res, 200, MALFORMED, { 'x-request-id': 'llm-bad-json' }));
    const res = await post(CHAT.path, CHAT.body());
    // observed and by design (lib/providers/openai/openai.ts: "answers come back as the upstream sent them")
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.text).toBe(MALFORMED);
    await expectStillServing();
  });

  describe('an answer that is not HTTP at all', () => {
    let garbage: TcpFault;
    beforeAll(async () => {
      garbage = await startTcpFault((socket) => socket.once('data', () => socket.end('HELLO, THIS IS NOT HTTP\r\n\r\n')));
    });
    afterAll(() => garbage.close());

    // regression (was a defect): an answer that is not HTTP was reported as upstream_unreachable "could not be reached (HPE_INVALID_CONSTANT)"; docs/errors.md says a reset/refused/DNS failure is unreachable, an unusable answer is upstream_bad_response.
    it.each([IMAGE, CHAT])('$name: 502 upstream_bad_response', async (route) => {
      pointAt(garbage.origin);
      const res = await post(route.path, route.body());
      expect(res.status).toBe(502);
      expect(res.json).toEqual({
        error: { message: expect.stringMatching(new RegExp(`^The ${route.provider} upstream returned an unusable response: `)), type: 'upstream_error', code: 'upstream_bad_response', param: null },
      });
      await expectStillServing();
    });
  });

  // regression (was a defect): a 200 body whose content-encoding does not decode was reported as upstream_unreachable "could not be reached (Z_DATA_ERROR)" instead of upstream_bad_response.
  it.each([IMAGE, CHAT])('$name, 200 with a gzip content-encoding that is not gzip: 502 upstream_bad_response', async (route) => {
    (route === IMAGE ? dashscope : llm).next((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end('this is not gzip data');
    });
    const res = await post(route.path, route.body());
    expect(res.status).toBe(502);
    expect(res.json).toEqual({
      error: { message: expect.stringMatching(new RegExp(`^The ${route.provider} upstream returned an unusable response: `)), type: 'upstream_error', code: 'upstream_bad_response', param: null },
    });
    await expectStillServing();
  });

  it('chat, 502 with an HTML page: 502 upstream_error', async () => {
    llm.next((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><body>Bad Gateway</body></html>');
    });
    const res = await post(CHAT.path, CHAT.body());
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ error: { message: 'The upstream failed: HTTP 502 (openai)', type: 'upstream_error', code: 'upstream_error', param: null } });
    await expectStillServing();
  });
});

describe('6. an upstream that answers a 50 MB body', () => {
  const FIFTY_MB = 50 * 1000 * 1000;
  // these are about the byte limit, not the deadline: reading (or inflating) 16 MB can take longer
  // than the file's 300 ms fault timeout on a loaded machine, which then answered 504, not 502
  beforeEach(() => {
    target.timeoutMs = 10_000;
  });
  const written: number[] = [];
  /** 50 MB of spaces, sent with a content-length (image) or chunked (chat). */
  const flood =
    (withLength: boolean): Responder =>
    async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', ...(withLength ? { 'content-length': FIFTY_MB } : {}) });
      written.push((await streamUntilClosed(res, FIFTY_MB, Buffer.alloc(256 * 1024, 0x20))).written);
    };

  it('image and chat, three times each: 502 upstream_bad_response, the upstream cut early, RSS bounded', async () => {
    const rssBefore = process.memoryUsage().rss;
    for (let round = 0; round < 3; round += 1) {
      dashscope.next(flood(true));
      const image = await post(IMAGE.path, IMAGE.body());
      expect(image.status).toBe(502);
      expect(image.json).toEqual(badResponseError('dashscope', `the response is larger than ${UPSTREAM_RESPONSE_BYTES} bytes`));
      llm.next(flood(false));
      const chat = await post(CHAT.path, CHAT.body());
      expect(chat.status).toBe(502);
      expect(chat.json).toEqual(badResponseError('openai', `the response is larger than ${UPSTREAM_RESPONSE_BYTES} bytes`));
    }
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    await until(() => written.length === 6, 2_000, 'the flooding upstreams to see their connections close');
    console.info(
      `[faults] 50 MB bodies: RSS growth ${(rssGrowth / MiB).toFixed(1)} MiB after 6 requests; upstream wrote ${written.map((w) => (w / MiB).toFixed(1)).join(', ')} MiB before the gateway hung up`,
    );
    expect(rssGrowth).toBeLessThan(150 * MiB);
    // the gateway stopped reading past its limit: nobody drained the 50 MB
    for (const bytes of written) expect(bytes).toBeLessThan(UPSTREAM_RESPONSE_BYTES + 16 * MiB);
    await expectStillServing();
  });

  it('image and chat, 50 MB gzipped to 48 KB: the limit counts decoded bytes, 502 upstream_bad_response', async () => {
    const bomb = gzipSync(Buffer.alloc(FIFTY_MB, 0x20));
    const sendBomb: Responder = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': bomb.length });
      res.end(bomb);
    };
    dashscope.next(sendBomb);
    const image = await post(IMAGE.path, IMAGE.body());
    expect(image.status).toBe(502);
    expect(image.json).toEqual(badResponseError('dashscope', `the response is larger than ${UPSTREAM_RESPONSE_BYTES} bytes`));
    llm.next(sendBomb);
    const chat = await post(CHAT.path, CHAT.body());
    expect(chat.status).toBe(502);
    expect(chat.json).toEqual(badResponseError('openai', `the response is larger than ${UPSTREAM_RESPONSE_BYTES} bytes`));
    await expectStillServing();
  });
});

describe('7. result images for b64_json that cannot be downloaded', () => {
  it('an image URL that 404s: 502 image_download_failed', async () => {
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([`${imageHost.origin}/missing.png`], 'ds-req-404')));
    const res = await post(IMAGE.path, imageBody('x-image-2.0-faulty', { response_format: 'b64_json' }));
    expect(res.status).toBe(502);
    expect(res.json).toEqual({
      error: {
        message: expect.stringMatching(/^The image was generated but could not be downloaded for b64_json: .*\(HTTP 404\).* Ask for response_format 'url' instead\.$/),
        type: 'upstream_error',
        code: 'image_download_failed',
        param: null,
      },
    });
    await expectStillServing();
  });

  it('an image URL with an endless body: 502 image_download_failed fast, the image host cut soon after downloadBytes', async () => {
    dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([`${imageHost.origin}/endless.png`], 'ds-req-endless')));
    const res = await post(IMAGE.path, imageBody('x-image-2.0-faulty', { response_format: 'b64_json' }));
    const answeredAt = performance.now();
    expect(res.status).toBe(502);
    expect(res.json).toEqual({
      error: {
        message: expect.stringMatching(
          new RegExp(`^The image was generated but could not be downloaded for b64_json: .*larger than ${DOWNLOAD_BYTES} bytes.* Ask for response_format 'url' instead\\.$`),
        ),
        type: 'upstream_error',
        code: 'image_download_failed',
        param: null,
      },
    });
    expect(res.ms).toBeLessThan(3_000);
    await until(() => endless.length === 1, 2_000, 'the endless image host to see its connection close');
    const [served] = endless;
    console.info(
      `[faults] endless image: answered in ${res.ms.toFixed(0)} ms; the host wrote ${(served!.written / MiB).toFixed(2)} MiB, closed ${(served!.closedAt - answeredAt).toFixed(0)} ms after the answer`,
    );
    // ~1 MiB read by the gateway, the rest is socket buffers; nowhere near 2 GB
    expect(served!.written).toBeLessThan(DOWNLOAD_BYTES + 16 * MiB);
    expect(served!.closedAt - answeredAt).toBeLessThan(1_000);
    await expectStillServing();
  });

  it('an image URL that never answers: 504 image_download_failed after downloadTimeoutMs', async () => {
    const silent = await startSilentServer();
    try {
      dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess([`${silent.origin}/never.png`], 'ds-req-silent')));
      const res = await post(IMAGE.path, imageBody('x-image-2.0-faulty', { response_format: 'b64_json' }));
      expect(res.status).toBe(504);
      expect(res.json).toEqual({
        error: {
          message: expect.stringMatching(
            new RegExp(
              `^The image was generated but could not be downloaded for b64_json: the result host did not answer within ${DOWNLOAD_TIMEOUT_MS} ms \\(the gateway's limits\\.downloadTimeoutMs\\)\\. Ask for response_format 'url' instead\\.$`,
            ),
          ),
          type: 'upstream_error',
          code: 'image_download_failed',
          param: null,
        },
      });
      expect(res.ms).toBeGreaterThanOrEqual(DOWNLOAD_TIMEOUT_MS - 20);
      expect(res.ms).toBeLessThan(3_000);
      await silent.allClosed(1_000);
    } finally {
      await silent.close();
    }
    await expectStillServing();
  });
});

describe('8. a stream that sends a few chunks, then dies', () => {
  const CHUNKS = chatChunks('upstream-chat', ['a', 'b', 'c']);
  /** Writes `count` chunks (and `partial` bytes of the next), then kills the socket. */
  const dieAfter =
    (count: number, how: 'destroy' | 'reset', partial = 0): Responder =>
    async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const chunk of CHUNKS.slice(0, count)) {
        res.write(chunk);
        await sleep(10);
      }
      if (partial > 0) res.write(CHUNKS[count]!.slice(0, partial));
      await sleep(30);
      if (how === 'reset') res.socket!.resetAndDestroy();
      else res.socket!.destroy();
    };
  const countErrorEvents = (text: string) => text.split('\n\n').filter((event) => event.startsWith('data: {"error"')).length;

  it.each(['destroy', 'reset'] as const)('chat (%s): the chunks, then one upstream_unreachable error event, and the stream ends', async (how) => {
    llm.next(dieAfter(2, how));
    const res = await post(CHAT_STREAM.path, CHAT_STREAM.body());
    expect(res.status).toBe(200);
    expect(res.text).toBe(CHUNKS.slice(0, 2).join('') + chatErrorEvent(unreachableError('openai', 'ECONNRESET')));
    expect(countErrorEvents(res.text)).toBe(1);
    await expectStillServing();
  });

  it('chat, dying in the middle of an event: the event is closed off before the error event', async () => {
    llm.next(dieAfter(2, 'destroy', 12));
    const res = await post(CHAT_STREAM.path, CHAT_STREAM.body());
    expect(res.status).toBe(200);
    expect(res.text).toBe(`${CHUNKS.slice(0, 2).join('')}${CHUNKS[2]!.slice(0, 12)}\n\n${chatErrorEvent(unreachableError('openai', 'ECONNRESET'))}`);
    await expectStillServing();
  });

  it('responses: the events, then one `event: error` with the next sequence_number', async () => {
    const events = responseEvents('upstream-chat', ['Hel', 'lo']);
    llm.next(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(events.slice(0, 3).join(''));
      await sleep(30);
      res.socket!.destroy();
    });
    const res = await post('/v1/responses', { model: 'chat-faulty', input: 'Say hello', stream: true });
    expect(res.status).toBe(200);
    const error = { type: 'error', code: 'upstream_unreachable', message: 'The openai upstream could not be reached (ECONNRESET).', param: null, sequence_number: 3 };
    expect(res.text).toBe(`${events.slice(0, 3).join('')}event: error\ndata: ${JSON.stringify(error)}\n\n`);
    await expectStillServing();
  });
});

describe('9. no leaked sockets or timers', () => {
  it('a child process that ran failing and normal requests exits by itself after close()', async () => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', path.join(here, '../helpers/express-major.ts'), path.join(here, '../helpers/fault-exit-main.ts')], {
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let reportedAt = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (!reportedAt && stdout.includes('\n')) reportedAt = performance.now();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
      // a child that outlives its work by far has leaked something: stop it (only this one) and fail
      const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.once('exit', (code, signal) => {
        clearTimeout(guard);
        resolve({ code, signal, at: performance.now() });
      });
    });
    // nothing on stderr but, on some Node versions, the notice that module.register is experimental
    expect(stderr.split('\n').filter((line) => line !== '' && !/ExperimentalWarning|--trace-warnings/.test(line))).toEqual([]);
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(reportedAt).toBeGreaterThan(0);
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      results: Record<string, { status: number; code?: string; text?: string }>;
      afterGatewayClose: string[];
      resources: string[];
      expressVersion: string;
    };
    console.info(
      `[faults] leak child: ran ${(reportedAt - started).toFixed(0)} ms, exited ${(exit.at - reportedAt).toFixed(0)} ms after closing; active resources once the gateway closed ${JSON.stringify(report.afterGatewayClose)}, at the end ${JSON.stringify(report.resources)}; express ${report.expressVersion}`,
    );
    expect(report.expressVersion.split('.')[0]).toBe(process.env.GATEWAY_EXPRESS === '4' ? '4' : '5');
    // gateway closed, fakes still listening: only their three servers, no socket the gateway kept open, no timer
    expect(report.afterGatewayClose.filter((name) => /^(Timeout|TCPSocketWrap|TCPServerWrap)$/.test(name))).toEqual(['TCPServerWrap', 'TCPServerWrap', 'TCPServerWrap']);
    expect(report.resources.filter((name) => /^(Timeout|TCPSocketWrap|TCPServerWrap)$/.test(name))).toEqual([]);
    const stalledFirst = chatChunks('upstream-chat', ['a'])[0]!;
    expect(report.results).toEqual({
      'image silent': { status: 504, code: 'upstream_timeout' },
      'image silent b64': { status: 504, code: 'upstream_timeout' },
      'chat silent': { status: 504, code: 'upstream_timeout' },
      'chat stream silent': { status: 504, code: 'upstream_timeout' },
      'image ok': { status: 200 },
      'image ok b64': { status: 200 },
      'chat ok': { status: 200, text: JSON.stringify(chatCompletion('upstream-chat', 'Hello there')) },
      'chat stream ok': { status: 200, text: chatChunks('upstream-chat', ['Hel', 'lo', ' there']).join('') },
      'chat stream stalled': { status: 200, text: stalledFirst + chatErrorEvent(timeoutError('openai', 300)) },
    });
  }, 90_000);
});

describe('10. load: 200 concurrent requests to a slow upstream', () => {
  let slow: FakeUpstream;
  /** Answerable requests that reached the upstream (a silent one may time out before it gets there on a busy machine). */
  let arrivals = 0;
  let rssBefore = 0;
  beforeAll(async () => {
    // which requests go unanswered is decided by their content (the model), never by arrival order
    // or timing: a busy machine changes when requests arrive, not which ones are silent
    slow = await startFakeUpstream(async (request, res) => {
      if (/-silent"/.test(request.body.toString('utf8'))) return stall();
      arrivals += 1;
      await sleep(300);
      if (request.path === DASHSCOPE_PATH) sendJson(res, 200, dashscopeSuccess(['https://results.example/load.png'], 'ds-load'));
      else sendJson(res, 200, chatCompletion('upstream-chat', 'Hello there'));
    });
    rssBefore = process.memoryUsage().rss;
  });
  afterAll(() => slow.close());

  const SILENT_IMAGE: FaultRoute = { ...IMAGE, body: () => imageBody('x-image-2.0-silent') };
  const SILENT_CHAT: FaultRoute = { ...CHAT, body: () => chatBody('chat-silent') };

  /** 200 requests at once, alternating image and chat, every `silentEvery`-th one (0: none) to a model the upstream never answers. */
  async function burst(silentEvery: number): Promise<{ answers: Array<{ route: FaultRoute; silent: boolean; res: RawAnswer }>; ms: number }> {
    // fresh connections per burst: a keep-alive socket left idle by the previous burst may be closed
    // by the server (keepAliveTimeout) just as it is reused, an ECONNRESET that says nothing of the gateway
    const burstAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 200 }, async (_, index) => {
        const silent = silentEvery > 0 && index % silentEvery === silentEvery - 1;
        const route = index % 2 === 0 ? (silent ? SILENT_IMAGE : IMAGE) : silent ? SILENT_CHAT : CHAT;
        return { route, silent, res: await postJson(`${server.url}${route.path}`, route.body(), { key: KEY_A, agent: burstAgent, deadlineMs: 30_000 }) };
      }),
    ).finally(() => burstAgent.destroy());
    return { answers, ms: performance.now() - started };
  }

  function expectAnswered({ route, res }: { route: FaultRoute; res: RawAnswer }): void {
    if (route === IMAGE)
      expect(res.json).toEqual({ created: expect.any(Number), data: [{ url: 'https://results.example/load.png', b64_json: '', revised_prompt: '' }], extra: { request_id: 'ds-load' } });
    else expect(res.json).toEqual(chatCompletion('upstream-chat', 'Hello there'));
  }

  it('every request is answered 200, none hangs', async () => {
    pointAt(slow.origin, 15_000);
    arrivals = 0;
    const { answers, ms } = await burst(0);
    console.info(`[faults] load, all answered: 200 requests in ${ms.toFixed(0)} ms; RSS growth so far ${((process.memoryUsage().rss - rssBefore) / MiB).toFixed(1)} MiB`);
    expect(arrivals).toBe(200);
    expect(answers.map((answer) => answer.res.status)).toEqual(Array(200).fill(200));
    answers.forEach(expectAnswered);
    expect(ms).toBeLessThan(10_000);
    await expectStillServing();
  }, 60_000);

  // regression (was flaky): silence went by arrival order and the answered requests had the same 1 s
  // timeout as the silent ones, so on a busy machine a few 300 ms answers came too late ([147, 53])
  it('1 in 4 never answered (their timeoutMs 1 s): those 50 get 504, the other 150 get 200, none hangs, RSS bounded', async () => {
    pointAt(slow.origin, 5_000);
    arrivals = 0;
    const { answers, ms } = await burst(4);
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    console.info(`[faults] load, 1 in 4 silent: 200 requests in ${ms.toFixed(0)} ms; RSS growth over both bursts ${(rssGrowth / MiB).toFixed(1)} MiB`);
    expect(arrivals).toBe(150);
    const answered = answers.filter((answer) => !answer.silent);
    const silent = answers.filter((answer) => answer.silent);
    expect([answered.length, silent.length]).toEqual([150, 50]);
    expect(answered.map((answer) => answer.res.status)).toEqual(Array(150).fill(200));
    answered.forEach(expectAnswered);
    for (const { route, res } of silent) expect({ status: res.status, body: res.json }).toEqual({ status: 504, body: timeoutError(route.provider, SILENT_TIMEOUT_MS) });
    expect(ms).toBeLessThan(10_000);
    expect(rssGrowth).toBeLessThan(200 * MiB);
    await expectStillServing();
  }, 60_000);
});
