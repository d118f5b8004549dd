// No tenant can starve another (docs/security.md "Tenants are isolated"): a per-caller in-flight cap (429 with Retry-After),
// a bounded upstream pool that fails fast (503) instead of queueing without bound, and clients that
// stop reading cut after limits.clientStallMs. One shared fake upstream decides by request content
// whether it answers, holds the request forever, streams forever or sends a huge answer.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayLimits, Upstream } from '../../lib/index.js';
import { DASHSCOPE_PATH, dashscopeSuccess } from '../helpers/fake-dashscope.js';
import { type FakeUpstream, sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';
import { chatCompletion } from '../helpers/fake-llm.js';
import { type StreamedBody, streamUntilClosed } from '../helpers/faulty-servers.js';
import { KEY_A, KEY_B, type TestGateway, createTestGateway } from '../helpers/gateway-app.js';
import { TINY_PNG } from '../helpers/images.js';
import { type RawAnswer, postJson, rawRequest, rawSocket } from '../helpers/raw-client.js';

const UPSTREAM_KEY = 'sk-upstream-isolation-secret-0000';
const MiB = 1024 * 1024;
/** Generous: only a broken gateway takes this long, a working one is far faster. */
const EVENTUALLY_MS = 10_000;

/** What the fake upstream does, chosen by the text of the request's (first) message. */
const HOLD = 'hold: never answer';
const STREAM_FOREVER = 'stream until the reader hangs up';
const HUGE_ANSWER = 'answer with 12 MiB of JSON';
const BIG_IMAGE_BYTES = 24 * MiB;

let upstream: FakeUpstream;
/** Requests the upstream holds without answering. */
let held = 0;
/** Streams the upstream wrote until the gateway hung up. */
const streams: StreamedBody[] = [];

const chat = (text: string, extra: Record<string, unknown> = {}) => ({ model: 'chat', messages: [{ role: 'user', content: text }], ...extra });
// a real PNG's bytes first, so the gateway takes it for an image
const bigImage = Buffer.concat([TINY_PNG, Buffer.alloc(BIG_IMAGE_BYTES - TINY_PNG.length, 0x5a)]);

beforeAll(async () => {
  upstream = await startFakeUpstream(async (request, res) => {
    if (request.method === 'GET' && request.path === '/big.png') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': bigImage.length });
      res.end(bigImage);
      return;
    }
    if (request.path === DASHSCOPE_PATH) {
      sendJson(res, 200, dashscopeSuccess([`${upstream.origin}/big.png`], 'ds-big'));
      return;
    }
    const text = String((request.json as { messages?: Array<{ content?: unknown }> } | undefined)?.messages?.[0]?.content);
    if (text === HOLD) {
      held += 1;
      return new Promise<void>(() => {});
    }
    if (text === STREAM_FOREVER) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      streams.push(await streamUntilClosed(res, Number.POSITIVE_INFINITY, Buffer.from(`data: ${JSON.stringify({ pad: 'x'.repeat(16 * 1024) })}\n\n`)));
      return;
    }
    if (text === HUGE_ANSWER) {
      sendJson(res, 200, chatCompletion('upstream-chat', 'x'.repeat(12 * MiB)));
      return;
    }
    sendJson(res, 200, chatCompletion('upstream-chat', 'Hello there'));
  });
});

afterAll(() => upstream.close());

interface Running {
  gateway: TestGateway;
  server: http.Server;
  url: string;
  agent: http.Agent;
  warnings: Array<{ message: string; fields?: Record<string, unknown> }>;
  /** Clients to tear down after the test. */
  sockets: Socket[];
}
let running: Running | undefined;

async function start(limits: Partial<GatewayLimits>): Promise<Running> {
  const warnings: Running['warnings'] = [];
  const gateway = createTestGateway({
    limits,
    // the fake serves the result image on 127.0.0.1
    allow: { privateResultUrls: true },
    logger: { warn: (fields, message) => warnings.push({ message, fields }) },
    resolveUpstream: ({ model }): Upstream | null => {
      if (model === 'chat') return { provider: 'openai', baseURL: `${upstream.origin}/v1`, apiKey: UPSTREAM_KEY, model: 'upstream-chat', timeoutMs: 30_000 };
      if (model === 'x-image-2.0') return { provider: 'dashscope', baseURL: `${upstream.origin}/api/v1`, apiKey: UPSTREAM_KEY, timeoutMs: 30_000 };
      return null;
    },
  });
  const server = gateway.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  running = { gateway, server, url, agent: new http.Agent({ keepAlive: true }), warnings, sockets: [] };
  return running;
}

afterEach(async () => {
  held = 0;
  streams.length = 0;
  upstream.requests.length = 0;
  if (!running) return;
  const { gateway, server, agent, sockets } = running;
  running = undefined;
  for (const socket of sockets) socket.destroy();
  agent.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await gateway.close();
});

function post(gw: Running, key: string, body: unknown): Promise<RawAnswer> {
  return postJson(`${gw.url}/v1/chat/completions`, body, { key, agent: gw.agent });
}

/** A request left open: whether it has been answered, and a way for the client to give up on it. */
interface Pending {
  promise: Promise<RawAnswer>;
  settled: boolean;
  abort(): void;
}

function pending(gw: Running, key: string, body: unknown): Pending {
  const controller = new AbortController();
  const entry: Pending = { settled: false, abort: () => controller.abort(), promise: Promise.resolve() as unknown as Promise<RawAnswer> };
  // a connection of its own (agent: false), so holding it open never delays another request
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  entry.promise = rawRequest(gw.url, { path: '/v1/chat/completions', agent: false, signal: controller.signal, headers, body: JSON.stringify(body) });
  entry.promise.then(
    () => (entry.settled = true),
    () => (entry.settled = true),
  );
  // an aborted request rejects; that is the point of aborting it
  entry.promise.catch(() => undefined);
  return entry;
}

/** Sends one JSON POST over a raw socket and never reads a byte of the answer. */
async function neverReading(gw: Running, path: string, body: unknown): Promise<Socket> {
  const { host } = new URL(gw.url);
  const text = JSON.stringify(body);
  const head = `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${KEY_A}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n`;
  const socket = await rawSocket(gw.url, head + text, { paused: true });
  gw.sockets.push(socket);
  return socket;
}

function openConnections(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = EVENTUALLY_MS): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const capError = (limit: number) => ({
  error: {
    message: `This API key already has ${limit} requests in flight, the most allowed at once. Retry when one of them has finished.`,
    type: 'rate_limit_error',
    code: 'rate_limit_exceeded',
    param: null,
  },
});

describe('the per-caller in-flight cap (limits.inFlightPerCaller)', () => {
  it('tenant A at its cap gets 429 rate_limit_exceeded with Retry-After at once, the upstream untouched; tenant B is served 200 while A is pending', async () => {
    // four upstream sockets, three for A: without the cap A's fourth request would take B's socket
    const gw = await start({ inFlightPerCaller: 3, upstreamSockets: 4, upstreamQueue: 100 });
    const holding = Array.from({ length: 3 }, () => pending(gw, KEY_A, chat(HOLD)));
    await until(() => held === 3, "the upstream to hold A's three requests");

    const refused = await post(gw, KEY_A, chat('Say hello'));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json).toEqual(capError(3));
    expect(upstream.requests).toHaveLength(3);

    const served = await post(gw, KEY_B, chat('Say hello'));
    expect(served.status).toBe(200);
    expect(served.json).toEqual(chatCompletion('upstream-chat', 'Hello there'));
    expect(holding.map((request) => request.settled)).toEqual([false, false, false]);
  });

  it('a slot is released exactly once when the response finishes, fails, or the client aborts', async () => {
    const gw = await start({ inFlightPerCaller: 2 });
    // finished (200) and failed (404 model_not_found) responses, more than the cap, one after another
    for (let round = 0; round < 3; round += 1) {
      expect((await post(gw, KEY_A, chat('Say hello'))).status).toBe(200);
      expect((await post(gw, KEY_A, { ...chat('Say hello'), model: 'no-such-model' })).status).toBe(404);
    }
    // client aborts: both slots come back once the gateway has seen the connections close
    const first = [pending(gw, KEY_A, chat(HOLD)), pending(gw, KEY_A, chat(HOLD))];
    await until(() => held === 2, 'the upstream to hold two requests');
    for (const request of first) request.abort();
    await until(() => gw.gateway.usage.filter((event) => event.status === 499).length === 2, 'the gateway to see both clients leave');
    // exactly two slots again: a double release would let a third through
    const second = [pending(gw, KEY_A, chat(HOLD)), pending(gw, KEY_A, chat(HOLD))];
    await until(() => held === 4, 'the upstream to hold two more requests');
    const refused = await post(gw, KEY_A, chat('Say hello'));
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual(capError(2));
    expect(second.map((request) => request.settled)).toEqual([false, false]);
  });
});

describe('the upstream pool (limits.upstreamSockets, limits.upstreamQueue)', () => {
  it('2 sockets and 2 waiting: the 5th concurrent request gets 503 upstream_busy at once and never reaches the upstream', async () => {
    const gw = await start({ upstreamSockets: 2, upstreamQueue: 2 });
    const five = Array.from({ length: 5 }, () => pending(gw, KEY_A, chat(HOLD)));
    const first = await Promise.race(five.map((request) => request.promise));
    expect(first.status).toBe(503);
    expect(first.headers['retry-after']).toBe('1');
    expect(first.json).toEqual({
      error: {
        message: 'The upstream is busy: all 2 connections to it are in use and 2 requests are already waiting for one. Retry shortly.',
        type: 'upstream_error',
        code: 'upstream_busy',
        param: null,
      },
    });
    expect(five.filter((request) => request.settled)).toHaveLength(1);
    await until(() => held === 2, 'the upstream to hold the two requests that got a socket');
    expect(upstream.requests).toHaveLength(2);
    // the pool recovers once the clients give up
    for (const request of five) request.abort();
    await until(async () => (await post(gw, KEY_A, chat('Say hello'))).status === 200, 'a request to be served again');
  });
});

describe('clients that stop reading (limits.clientStallMs)', () => {
  const stallWarning = (route: string) => ({ message: 'the client stopped reading; response cut', fields: { requestId: expect.any(String) as string, caller: 'tenant-a', route, stallMs: 300 } });

  /** The gateway closed the connection, logged why, and A's only slot is free again. */
  async function expectCut(gw: Running, route: string): Promise<void> {
    await until(async () => (await openConnections(gw.server)) === 0, 'the gateway to close the stalled connection');
    expect(gw.warnings).toEqual([stallWarning(route)]);
    const next = await post(gw, KEY_A, chat('Say hello'));
    expect(next.status).toBe(200);
  }

  it('a stream: the client is cut, the upstream stream aborted (its socket closed), the slot freed', async () => {
    const gw = await start({ clientStallMs: 300, inFlightPerCaller: 1 });
    await neverReading(gw, '/v1/chat/completions', chat(STREAM_FOREVER, { stream: true }));
    await until(() => streams.length === 1, 'the upstream to see its stream closed');
    console.info(`[isolation] stalled stream: the upstream wrote ${(streams[0]!.written / MiB).toFixed(1)} MiB before the gateway hung up`);
    await expectCut(gw, 'chat.completions');
  });

  it('a 12 MiB JSON answer: the client is cut, the slot freed', async () => {
    const gw = await start({ clientStallMs: 300, inFlightPerCaller: 1 });
    await neverReading(gw, '/v1/chat/completions', chat(HUGE_ANSWER));
    await expectCut(gw, 'chat.completions');
  });

  it('a b64_json answer (24 MiB image): the client is cut, the slot freed', async () => {
    const gw = await start({ clientStallMs: 300, inFlightPerCaller: 1 });
    await neverReading(gw, '/v1/images/generations', {
      model: 'x-image-2.0',
      input: { messages: [{ role: 'user', content: [{ text: 'a red square' }] }] },
      response_format: 'b64_json',
    });
    await expectCut(gw, 'images.generations');
  });
});
