// POST /v1/chat/completions, /v1/responses and /api/v3/images/generations end to end: forwarding with
// the model renamed, SSE relayed chunk by chunk, mid-stream failures, disconnects, fallback.
import http from 'node:http';
import type { Socket } from 'node:net';
import express from 'express';
import request from 'supertest';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Upstream } from '../../lib/index.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { chatChunks, chatCompletion, responseEvents, responseObject, startFakeLlm, writeSlowly } from '../helpers/fake-llm.js';
import { KEY_A, listen } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { rawRequest } from '../helpers/raw-client.js';

const OPERATOR_KEY = 'sk-operator-llm-secret';
const chatBody = (extra: Record<string, unknown> = {}) => ({ model: 'chat-small', messages: [{ role: 'user', content: 'Say hello' }], ...extra });

const gateway = await gatewayWith({
  fakes: { llm: startFakeLlm, spare: startFakeLlm },
  resolve: ({ model, route }, { llm, spare }): Upstream | Upstream[] | null => {
    if (route === 'images.native') return { provider: 'ark', baseURL: `${llm.origin}/api/v3`, apiKey: OPERATOR_KEY, model: 'doubao-seedream-4-0-250828' };
    if (model === 'chat-small') return { provider: 'openai', baseURL: llm.baseURL, apiKey: OPERATOR_KEY, model: 'upstream-chat-small', timeoutMs: 1_000 };
    if (model === 'chat-fallback')
      return [
        { provider: 'openai', baseURL: llm.baseURL, apiKey: 'first' },
        { provider: 'openai', baseURL: spare.baseURL, apiKey: 'second' },
      ];
    if (model === 'qwen-plus') return { provider: 'dashscope', baseURL: `${llm.origin}/api/v1`, apiKey: OPERATOR_KEY };
    return null;
  },
  resetEach: true,
});
const { llm, spare } = gateway.fakes;

const JSON_POST = { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' };

/** Streams a POST through the gateway with the raw client, noting when each chunk arrived. */
function stream(path: string, body: unknown, onRequest?: (req: http.ClientRequest) => void) {
  return rawRequest(gateway.url, { path, headers: JSON_POST, body: JSON.stringify(body), onRequest });
}

describe('chat completions', () => {
  it('forwards with the model renamed and returns the upstream body as is', async () => {
    const res = await request(gateway.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send(chatBody({ temperature: 0.2, tools: [] }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual(chatCompletion('upstream-chat-small', 'Hello there'));
    const [sent] = llm.apiRequests();
    expect(sent?.path).toBe('/v1/chat/completions');
    expect(sent?.headers.authorization).toBe(`Bearer ${OPERATOR_KEY}`);
    expect(sent?.json).toEqual({ ...chatBody({ temperature: 0.2, tools: [] }), model: 'upstream-chat-small' });
    expect(gateway.usage.at(-1)).toMatchObject({ route: 'chat.completions', model: 'chat-small', provider: 'openai', status: 200, upstreamRequestId: 'llm-req-1' });
  });

  it('sends a DashScope upstream to its compatible-mode path', async () => {
    const res = await request(gateway.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ ...chatBody(), model: 'qwen-plus' });
    expect(res.status).toBe(200);
    expect(llm.apiRequests()[0]?.path).toBe('/compatible-mode/v1/chat/completions');
  });

  const invalid: Array<[string, unknown, string, string | undefined]> = [
    ['no model', { messages: [{ role: 'user', content: 'x' }] }, 'model is required', 'model'],
    ['no messages', { model: 'chat-small' }, 'messages is required', 'messages'],
    ['messages not a list', { model: 'chat-small', messages: 'hi' }, 'messages must be an array, got string', 'messages'],
    ['empty messages', { model: 'chat-small', messages: [] }, 'messages must have at least 1 item(s)', 'messages'],
    ['message without role', { model: 'chat-small', messages: [{ content: 'x' }] }, 'messages[0].role is required', 'messages[0].role'],
    ['content a number', { model: 'chat-small', messages: [{ role: 'user', content: 5 }] }, 'messages[0].content must be a string or an array or null, got number', 'messages[0].content'],
    ['stream not boolean', { ...chatBody(), stream: 'yes' }, 'stream must be a boolean, got string', 'stream'],
  ];
  it.each(invalid)('%s: 400, upstream not called', async (_name, body, message, param) => {
    const res = await request(gateway.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send(body as object);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param: param ?? null } });
    expect(llm.requests).toHaveLength(0);
  });

  it('relays a stream chunk by chunk: the first chunk arrives before the upstream sent the last', async () => {
    const result = await stream('/v1/chat/completions', chatBody({ stream: true }));
    expect(result.status).toBe(200);
    expect(result.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(result.headers['cache-control']).toBe('no-cache, no-transform');
    expect(result.headers['content-encoding']).toBeUndefined();
    expect(result.text).toBe(chatChunks('upstream-chat-small', ['Hel', 'lo', ' there']).join(''));
    expect(result.chunks.length).toBeGreaterThan(1);
    expect(result.chunks[0]!.at).toBeLessThan(llm.lastChunkSentAt);
    expect(llm.apiRequests()[0]?.headers.accept).toBe('text/event-stream');
  });

  it('sends the last event and the end of the stream in one write when the upstream sent them together', async () => {
    const chunks = chatChunks('m', ['a', 'b']);
    llm.next((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunks.slice(0, -1).join(''));
      // the last event and the end of the body in one write, so they reach the gateway in one read
      setTimeout(() => res.end(chunks.at(-1)), 20);
    });
    // what the gateway hands the kernel, write by write, on the client's connection (the host app's own socket)
    const writes: string[] = [];
    const host = express();
    host.use((req, _res, next) => {
      recordWrites(req.socket, writes);
      next();
    });
    host.use(gateway.router);
    const server = await listen(host);
    onTestFinished(() => server.close());
    const result = await rawRequest(server.url, { path: '/v1/chat/completions', headers: JSON_POST, body: JSON.stringify(chatBody({ stream: true })) });
    expect(result.text).toBe(chunks.join(''));
    // before: the last event in one write and the terminating chunk in another, one more packet per stream
    expect(writes.at(-1)).toContain('data: [DONE]');
    expect(writes.at(-1)?.endsWith('0\r\n\r\n')).toBe(true);
  });

  it('cuts the operator key out of a relayed stream, split across chunks, and relays an end that only began like it', async () => {
    llm.next((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: {"error":{"message":"bad key ${OPERATOR_KEY.slice(0, 9)}`);
      setTimeout(() => res.write(`${OPERATOR_KEY.slice(9)}"}}\n\n`), 20);
      // the stream's last bytes begin like the key: held back while the key might go on, sent at the end
      setTimeout(() => res.end(`data: [DONE]\n\n${OPERATOR_KEY.slice(0, 6)}`), 40);
    });
    const result = await stream('/v1/chat/completions', chatBody({ stream: true }));
    expect(result.text).toBe(`data: {"error":{"message":"bad key [redacted]"}}\n\ndata: [DONE]\n\n${OPERATOR_KEY.slice(0, 6)}`);
  });

  it('ends a stream whose upstream dies with an OpenAI error event', async () => {
    llm.next((_req, res) => writeSlowly(llm, res, chatChunks('m', ['a', 'b', 'c']), { dieAfter: 2 }));
    const result = await stream('/v1/chat/completions', chatBody({ stream: true }));
    const expectedStart = chatChunks('m', ['a', 'b', 'c']).slice(0, 2).join('');
    expect(result.text.startsWith(expectedStart)).toBe(true);
    const tail = result.text.slice(expectedStart.length);
    expect(tail).toMatch(/^data: \{"error":/);
    const event = JSON.parse(tail.slice('data: '.length).trim()) as { error: Record<string, unknown> };
    expect(event).toEqual({ error: { message: 'The openai upstream could not be reached (ECONNRESET).', type: 'upstream_error', param: null, code: 'upstream_unreachable' } });
    expect(tail.endsWith('\n\n')).toBe(true);
  });

  it('cuts a stream that stalls longer than the timeout with an error event', async () => {
    llm.next((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chatChunks('m', ['a'])[0]);
      return new Promise(() => {});
    });
    const result = await stream('/v1/chat/completions', chatBody({ stream: true }));
    expect(result.text).toContain('"code":"upstream_timeout"');
  });

  it('answers an upstream error before the stream with the JSON error object', async () => {
    llm.next((_req, res) => sendJson(res, 429, { error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, { 'x-request-id': 'llm-429' }));
    const res = await request(gateway.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send(chatBody({ stream: true }));
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      error: {
        message: 'The upstream is rate limiting requests: Rate limit reached (openai code rate_limit_exceeded, request id llm-429). Retry later.',
        type: 'rate_limit_error',
        code: 'rate_limit_exceeded',
        param: null,
      },
    });
  });

  it('aborts the upstream request when the client goes away mid-stream, before the upstream has sent it all', async () => {
    // a chunk a second: the whole stream would take eight seconds, so an upstream socket that closes
    // before the last chunk was written was closed by the gateway, not by the stream's own end
    llm.chunkDelayMs = 1_000;
    llm.lastChunkSentAt = 0;
    let upstreamClosed!: Promise<void>;
    llm.next((_req, res, raw) => {
      upstreamClosed = new Promise((resolve) => raw.socket.once('close', () => resolve()));
      return writeSlowly(llm, res, chatChunks('m', ['1', '2', '3', '4', '5', '6', '7', '8']));
    });
    await new Promise<void>((resolve) => {
      const onResponse = (res: http.IncomingMessage, req: http.ClientRequest) =>
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      // the client hangs up on purpose: the request's own failure is expected
      rawRequest(gateway.url, { path: '/v1/chat/completions', headers: JSON_POST, body: JSON.stringify(chatBody({ stream: true })), onResponse }).catch(() => undefined);
    });
    await upstreamClosed;
    llm.chunkDelayMs = 60;
    expect(llm.lastChunkSentAt).toBe(0);
  });

  it('falls back to the next upstream when the first fails before streaming', async () => {
    llm.next((_req, res) => sendJson(res, 503, { error: { message: 'overloaded', type: 'server_error', param: null, code: null } }));
    const result = await stream('/v1/chat/completions', { ...chatBody({ stream: true }), model: 'chat-fallback' });
    expect(result.status).toBe(200);
    expect(result.text).toContain('data: [DONE]');
    expect(llm.apiRequests()).toHaveLength(1);
    expect(spare.apiRequests()).toHaveLength(1);
  });

  it('never falls back once a stream began', async () => {
    llm.next((_req, res) => writeSlowly(llm, res, chatChunks('m', ['a', 'b']), { dieAfter: 1 }));
    const result = await stream('/v1/chat/completions', { ...chatBody({ stream: true }), model: 'chat-fallback' });
    expect(result.text).toContain('"code":"upstream_unreachable"');
    expect(spare.apiRequests()).toHaveLength(0);
  });

  it('does not fall back on a 4xx the caller caused', async () => {
    llm.next((_req, res) => sendJson(res, 400, { error: { message: 'bad messages', type: 'invalid_request_error', param: 'messages', code: null } }));
    const res = await request(gateway.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ ...chatBody(), model: 'chat-fallback' });
    expect(res.status).toBe(400);
    expect(spare.apiRequests()).toHaveLength(0);
  });
});

describe('responses', () => {
  it('forwards a plain request', async () => {
    const res = await request(gateway.app).post('/v1/responses').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'chat-small', input: 'Say hello' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(responseObject('upstream-chat-small', 'Hello'));
    expect(llm.apiRequests()[0]?.json).toEqual({ model: 'upstream-chat-small', input: 'Say hello' });
  });

  it('relays named events in order', async () => {
    const result = await stream('/v1/responses', { model: 'chat-small', input: 'Say hello', stream: true });
    expect(result.text).toBe(responseEvents('upstream-chat-small', ['Hel', 'lo']).join(''));
    expect(result.chunks[0]!.at).toBeLessThan(llm.lastChunkSentAt);
  });

  it('ends with a Responses error event that continues the sequence numbers', async () => {
    llm.next((_req, res) => writeSlowly(llm, res, responseEvents('m', ['a', 'b', 'c']), { dieAfter: 3 }));
    const result = await stream('/v1/responses', { model: 'chat-small', input: 'x', stream: true });
    const last = result.text.trimEnd().split('\n\n').at(-1)!;
    expect(last.split('\n')[0]).toBe('event: error');
    expect(JSON.parse(last.split('\n')[1]!.slice('data: '.length))).toEqual({
      type: 'error',
      code: 'upstream_unreachable',
      message: 'The openai upstream could not be reached (ECONNRESET).',
      param: null,
      sequence_number: 3,
    });
  });

  it('requires a model', async () => {
    const res = await request(gateway.app).post('/v1/responses').set('Authorization', `Bearer ${KEY_A}`).send({ input: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('model is required');
    expect(llm.requests).toHaveLength(0);
  });
});

describe('native image generation (Ark, /api/v3/images/generations)', () => {
  it('forwards to Ark with the model renamed', async () => {
    const body = { model: 'seedream', prompt: 'a cow on a roller coaster', size: '2K', watermark: false, response_format: 'url' };
    const res = await request(gateway.app).post('/api/v3/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      model: 'doubao-seedream-4-0-250828',
      created: 1757323224,
      data: [{ url: 'https://ark.example/img.jpeg', size: '2048x2048' }],
      usage: { generated_images: 1, output_tokens: 16280, total_tokens: 16280 },
    });
    const [sent] = llm.apiRequests();
    expect(sent?.path).toBe('/api/v3/images/generations');
    expect(sent?.json).toEqual({ ...body, model: 'doubao-seedream-4-0-250828' });
  });

  it('normalizes the Ark error envelope', async () => {
    llm.next((_req, res) =>
      sendJson(res, 400, { error: { code: 'InvalidParameter', message: 'One or more parameters specified in the request are not valid. Request id: 0217', param: 'size', type: 'BadRequest' } }),
    );
    const res = await request(gateway.app).post('/api/v3/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'seedream', prompt: 'x', size: '2K' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: {
        message: 'The upstream rejected the request: One or more parameters specified in the request are not valid. Request id: 0217 (ark code InvalidParameter)',
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        param: 'size',
      },
    });
  });

  it('maps Ark sensitive-content and rate-limit codes', async () => {
    llm.next((_req, res) => sendJson(res, 400, { error: { code: 'InputTextSensitiveContentDetected', message: 'sensitive', param: '', type: 'BadRequest' } }));
    const policy = await request(gateway.app).post('/api/v3/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'seedream', prompt: 'x' });
    llm.next((_req, res) => sendJson(res, 429, { error: { code: 'RateLimitExceeded.EndpointRPMExceeded', message: 'rpm', param: '', type: 'TooManyRequests' } }));
    const limited = await request(gateway.app).post('/api/v3/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'seedream', prompt: 'x' });
    expect([policy.status, policy.body.error.code]).toEqual([400, 'content_policy_violation']);
    expect([limited.status, limited.body.error.code]).toEqual([429, 'rate_limit_exceeded']);
  });

  it("a size the upstream model's row does not take is a 400 naming the caller's name, before the upstream", async () => {
    const res = await request(gateway.app).post('/api/v3/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'seedream', prompt: 'x', size: '9K' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'size' });
    expect(res.body.error.message).toContain("model 'seedream'");
    expect(llm.requests).toHaveLength(0);
  });

  it('requires a prompt', async () => {
    const res = await request(gateway.app).post('/api/v3/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'seedream' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message: 'prompt is required', type: 'invalid_request_error', code: 'invalid_request_error', param: 'prompt' } });
    expect(llm.requests).toHaveLength(0);
  });
});

/** Records each write a socket makes (one system call each: Node's _write and _writev), as text. */
function recordWrites(socket: Socket, writes: string[]): void {
  const target = socket as unknown as {
    _write(chunk: Buffer | string, encoding: BufferEncoding, callback: (error?: Error | null) => void): void;
    _writev(chunks: Array<{ chunk: Buffer | string }>, callback: (error?: Error | null) => void): void;
  };
  const write = target._write.bind(socket);
  const writev = target._writev.bind(socket);
  target._write = (chunk, encoding, callback) => {
    writes.push(String(chunk));
    write(chunk, encoding, callback);
  };
  target._writev = (chunks, callback) => {
    writes.push(chunks.map(({ chunk }) => String(chunk)).join(''));
    writev(chunks, callback);
  };
}
