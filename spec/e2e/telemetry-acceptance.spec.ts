// Acceptance of OpenTelemetry (docs/observability.md "Traces and metrics"), black-box through HTTP:
// the real SDK in-process (in-memory exporter, a collecting metric reader, a processor that sees every
// span START so a span left open is caught), fakes on port 0. What it proves: the span tree of an
// image request with a fallback, of a streamed chat and of a video task from create to callback;
// traceparent to the upstream and into the callback; metric values after a known sequence; every
// request's span ends (401, 400, 413, 415, 404, 429, a client that left, an upstream that died);
// interleaved requests keep their own parents; no key, prompt or URL query in any attribute; no tenant
// in any metric attribute; a caller's invented model names do not become metric series.
import http from 'node:http';
import { SpanKind, SpanStatusCode, context, propagation } from '@opentelemetry/api';
import { type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';
import { type ReadableSpan, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { type Upstream } from '../../lib/index.js';
import { startCallbackReceiver } from '../helpers/callback-receiver.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { dashscopeError, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { chatChunks, startFakeLlm, writeSlowly } from '../helpers/fake-llm.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { pointsOf, registerOtelSdk, totalOf } from '../helpers/otel-sdk.js';

// ---- the real SDK, registered globally as a host's NodeSDK.start() would ----
/** Every span started and not yet ended: a span left open forever stays here. */
const open = new Map<string, Span>();
const tracking: SpanProcessor = {
  onStart: (span) => void open.set(span.spanContext().spanId, span),
  onEnd: (span) => void open.delete(span.spanContext().spanId),
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};
const SDK = registerOtelSdk({ spanProcessors: [tracking] });
const exporter = SDK.exporter;
afterAll(() => SDK.shutdown());

const SERVER = SpanKind.SERVER;
const CLIENT = SpanKind.CLIENT;
const ERROR = SpanStatusCode.ERROR;
const UPSTREAM_KEY = 'sk-operator-upstream-key-7f3a9c';
const ARK_KEY = 'ark-operator-key-9d8e7f';
const PROMPT = 'a secret-ish prompt about a lighthouse at dawn';

const collect = (): Promise<MetricData[]> => SDK.collect();
const points = pointsOf;
const total = totalOf;
async function waitFor<T>(find: () => T | undefined, timeoutMs = 8_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined && found !== false) return found;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}
const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
const serverSpans = (route: string) => spans().filter((span) => span.kind === SERVER && span.attributes['image_gateway.route'] === route);
const childrenOf = (parent: ReadableSpan) => spans().filter((span) => parentOf(span) === parent.spanContext().spanId);
/** Every string an exporter would ship about a span: name, attributes, status message, events, links. */
const shipped = (span: ReadableSpan): string => JSON.stringify({ name: span.name, attributes: span.attributes, status: span.status, events: span.events, links: span.links });

const gateway = await gatewayWith({
  fakes: { dashscope: startFakeDashscope, llm: startFakeLlm, ark: startFakeArk, receiver: () => startCallbackReceiver() },
  resolve: ({ model, route }, { dashscope, llm, ark }) => {
    if (route === 'video.tasks') return { provider: 'ark', baseURL: ark.baseURL, apiKey: ARK_KEY, model: 'doubao-seedance-1-5-pro-251215' };
    if (model === 'x-image-fallback')
      return [
        // two models whose catalogue row takes n 2
        { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: UPSTREAM_KEY, model: 'qwen-image-2.0-pro' },
        { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: UPSTREAM_KEY, model: 'qwen-image-2.0' },
      ] satisfies Upstream[];
    if (model === 'x-image-plus') return { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: UPSTREAM_KEY, model: 'qwen-image-plus' };
    if (model.startsWith('chat-')) return { provider: 'openai', baseURL: llm.baseURL, apiKey: UPSTREAM_KEY, model: 'gpt-upstream' };
    // a pass-through resolver: the caller's model goes upstream as it is (the upstream rejects the unknown ones)
    if (model.startsWith('any-')) return { provider: 'openai', baseURL: llm.baseURL, apiKey: UPSTREAM_KEY };
    return null;
  },
  callbacks: { allowLocal: true, pollIntervalsMs: { video: [30] }, retryBaseMs: 20, retryMaxMs: 40 },
  limits: { jsonBodyBytes: 4096 },
});
const { dashscope, llm, ark, receiver } = gateway.fakes;
beforeEach(() => {
  exporter.reset();
  for (const fake of [dashscope, llm, ark, receiver]) fake.requests.length = 0;
  receiver.deliveries.length = 0;
});

const post = (path: string, body: unknown, key = KEY_A) =>
  request(gateway.app)
    .post(path)
    .set('Authorization', `Bearer ${key}`)
    .send(body as object);

describe('spans: an image request with a fallback', () => {
  it('is one SERVER span with two CLIENT children on the GenAI conventions, the first failed; each attempt sends its own traceparent', async () => {
    dashscope.next((_request, res) => dashscopeError(res, 429, 'Throttling.RateQuota', `Requests rate limit exceeded for key ${UPSTREAM_KEY}`));
    const res = await post('/v1/images/generations', { model: 'x-image-fallback', prompt: PROMPT, n: 2, response_format: 'url' });
    expect(res.status).toBe(200);
    const server = await waitFor(() => serverSpans('images.generations')[0]);
    expect(server.kind).toBe(SERVER);
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/images/generations',
      'http.response.status_code': 200,
      'gen_ai.request.model': 'x-image-fallback',
      'gen_ai.provider.name': 'alibaba.dashscope',
    });
    const attempts = childrenOf(server).sort((a, b) => Number(a.attributes['image_gateway.attempt']) - Number(b.attributes['image_gateway.attempt']));
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) {
      expect(attempt.kind).toBe(CLIENT);
      expect(attempt.spanContext().traceId).toBe(server.spanContext().traceId);
      expect(attempt.attributes).toMatchObject({
        'gen_ai.operation.name': 'generate_content',
        'gen_ai.provider.name': 'alibaba.dashscope',
        'gen_ai.output.type': 'image',
        'gen_ai.request.choice.count': 2,
        'server.address': '127.0.0.1',
      });
    }
    expect(attempts[0]!.attributes['gen_ai.request.model']).toBe('qwen-image-2.0-pro');
    expect(attempts[0]!.attributes['error.type']).toBe('rate_limit_exceeded');
    expect(attempts[0]!.status.code).toBe(ERROR);
    expect(attempts[1]!.attributes['gen_ai.request.model']).toBe('qwen-image-2.0');
    expect(attempts[1]!.attributes['error.type']).toBeUndefined();
    // the upstream got each attempt's own span as parent
    const sent = dashscope.apiRequests().map((r) => String(r.headers.traceparent));
    expect(sent).toEqual(attempts.map((a) => `00-${a.spanContext().traceId}-${a.spanContext().spanId}-01`));
    // no key, prompt or signed-URL query anywhere
    for (const span of spans()) {
      const text = shipped(span);
      for (const secret of [UPSTREAM_KEY, KEY_A, PROMPT, 'Signature=', 'Expires=']) expect(text).not.toContain(secret);
    }
  });
});

describe('spans: a streamed chat', () => {
  it('has a SERVER span that ends with the stream and a chat CLIENT child, in one trace', async () => {
    const res = await post('/v1/chat/completions', { model: 'chat-a', stream: true, messages: [{ role: 'user', content: PROMPT }] });
    expect(res.status).toBe(200);
    expect(res.text).toContain('[DONE]');
    const server = await waitFor(() => serverSpans('chat.completions')[0]);
    expect(server.attributes).toMatchObject({ 'http.response.status_code': 200, 'image_gateway.outcome': 'success', 'gen_ai.request.model': 'chat-a', 'gen_ai.provider.name': 'openai' });
    const [attempt] = childrenOf(server);
    expect(attempt?.kind).toBe(CLIENT);
    expect(attempt?.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-upstream', 'server.address': '127.0.0.1' });
    // the request span covers the whole stream: it ends after the attempt span
    expect(server.endTime[0] * 1e9 + server.endTime[1]).toBeGreaterThanOrEqual(attempt!.endTime[0] * 1e9 + attempt!.endTime[1]);
    expect(llm.requests[0]?.headers.traceparent).toBe(`00-${attempt!.spanContext().traceId}-${attempt!.spanContext().spanId}-01`);
    for (const span of spans()) expect(shipped(span)).not.toContain(PROMPT);
  });

  it('a plain chat reports the response model and token usage', async () => {
    await post('/v1/chat/completions', { model: 'chat-b', messages: [{ role: 'user', content: 'hi' }] }).expect(200);
    const server = await waitFor(() => serverSpans('chat.completions')[0]);
    expect(childrenOf(server)[0]?.attributes).toMatchObject({ 'gen_ai.response.model': 'gpt-upstream', 'gen_ai.usage.input_tokens': 5, 'gen_ai.usage.output_tokens': 2 });
  });
});

describe('spans: a video task from create to callback', () => {
  it('create is SERVER + CLIENT; polls are linked to the create trace; the callback continues it and carries traceparent', async () => {
    const res = await post('/api/v3/contents/generations/tasks', { model: 'seedance', content: [{ type: 'text', text: PROMPT }], duration: 5, callback_url: receiver.url });
    expect(res.status).toBe(200);
    const deliveries = await receiver.accepted(3);
    const create = await waitFor(() => serverSpans('video.tasks').find((span) => span.attributes['http.request.method'] === 'POST'));
    const traceId = create.spanContext().traceId;
    const [attempt] = childrenOf(create);
    expect(attempt?.attributes).toMatchObject({
      'gen_ai.operation.name': 'generate_content',
      'gen_ai.output.type': 'video',
      'gen_ai.provider.name': 'volcengine.ark',
      'gen_ai.request.model': 'doubao-seedance-1-5-pro-251215',
    });
    const polls = await waitFor(() => {
      const found = spans().filter((span) => span.attributes['gen_ai.operation.name'] === 'get_task');
      return found.length >= 3 ? found : undefined;
    });
    for (const poll of polls) {
      expect(poll.kind).toBe(CLIENT);
      expect(poll.attributes['gen_ai.provider.name']).toBe('volcengine.ark');
      expect(poll.links.map((link) => link.context.traceId)).toContain(traceId);
    }
    const callbacks = await waitFor(() => {
      const found = spans().filter((span) => span.name === 'POST callback');
      return found.length >= 3 ? found : undefined;
    });
    for (const callback of callbacks) {
      expect(callback.spanContext().traceId).toBe(traceId);
      expect(parentOf(callback)).toBe(create.spanContext().spanId);
    }
    for (const delivery of deliveries) expect(String(delivery.headers.traceparent)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    for (const span of spans()) for (const secret of [ARK_KEY, KEY_A, PROMPT, 'X-Tos-Expires']) expect(shipped(span)).not.toContain(secret);
  });

  it('a background poll starts its own trace (README): it is not a child of the long-ended create span', async () => {
    await post('/api/v3/contents/generations/tasks', { model: 'seedance', content: [{ type: 'text', text: 'x' }], duration: 5, callback_url: receiver.url }).expect(200);
    await receiver.accepted(3);
    const create = await waitFor(() => serverSpans('video.tasks')[0]);
    const polls = await waitFor(() => {
      const found = spans().filter((span) => span.attributes['gen_ai.operation.name'] === 'get_task');
      return found.length >= 3 ? found : undefined;
    });
    for (const poll of polls) {
      expect(parentOf(poll)).toBeUndefined();
      expect(poll.spanContext().traceId).not.toBe(create.spanContext().traceId);
    }
  });
});

describe('baggage', () => {
  it("the host's request baggage goes to the upstream, never into a background callback to the tenant", async () => {
    // a host middleware puts request-scoped baggage in the context, as an HTTP instrumentation would
    const host = express();
    host.use((_req, _res, next) => {
      const bag = propagation.createBaggage({ 'internal.user': { value: 'operator-only-7731' } });
      context.with(propagation.setBaggage(context.active(), bag), next);
    });
    host.use(gateway.router);
    const res = await request(host)
      .post('/api/v3/contents/generations/tasks')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'seedance', content: [{ type: 'text', text: 'x' }], duration: 5, callback_url: receiver.url });
    expect(res.status).toBe(200);
    const deliveries = await receiver.accepted(3);
    expect(String(ark.requests[0]?.headers.baggage)).toContain('operator-only-7731');
    for (const delivery of deliveries) expect(delivery.headers.baggage).toBeUndefined();
    for (const poll of ark.taskGets()) expect(poll.headers.baggage).toBeUndefined();
  });
});

describe('metrics after a known sequence', () => {
  it('count requests by route and outcome, images, video seconds, task transitions, callbacks, upstream duration with 600 s buckets', async () => {
    const before = await collect();
    await post('/v1/images/generations', { model: 'x-image-plus', prompt: 'p', response_format: 'url' }).expect(200);
    await post('/v1/images/generations', { model: 'x-image-plus', prompt: 'p', response_format: 'url' }).expect(200);
    await post('/v1/images/generations', { model: 'x-image-plus', prompt: 'p' }, 'sk-wrong').expect(401);
    const created = await post('/api/v3/contents/generations/tasks', { model: 'seedance', content: [{ type: 'text', text: 'x' }], duration: 5, callback_url: receiver.url });
    expect(created.status).toBe(200);
    await receiver.accepted(3);
    await waitFor(() => spans().filter((span) => span.name === 'POST callback').length >= 3);
    const after = await collect();
    const delta = (name: string, match: Record<string, unknown> = {}) => total(after, name, match) - total(before, name, match);
    expect(delta('image_gateway.request.duration', { 'image_gateway.route': 'images.generations', 'image_gateway.outcome': 'success' })).toBe(2);
    expect(delta('image_gateway.request.duration', { 'image_gateway.route': 'images.generations', 'image_gateway.outcome': 'client_error', 'http.response.status_code': 401 })).toBe(1);
    expect(delta('image_gateway.images.generated', { 'image_gateway.route': 'images.generations', 'gen_ai.provider.name': 'alibaba.dashscope' })).toBe(2);
    expect(delta('gen_ai.client.operation.duration', { 'gen_ai.provider.name': 'alibaba.dashscope', 'gen_ai.request.model': 'qwen-image-plus' })).toBe(2);
    expect(delta('image_gateway.video.seconds', { 'gen_ai.provider.name': 'volcengine.ark' })).toBe(5);
    for (const status of ['queued', 'running', 'succeeded']) expect(delta('image_gateway.task.transitions', { 'image_gateway.task.status': status })).toBeGreaterThanOrEqual(1);
    expect(delta('image_gateway.callback.deliveries', { 'image_gateway.outcome': 'delivered' })).toBeGreaterThanOrEqual(3);
    const [histogram] = points(after, 'gen_ai.client.operation.duration');
    expect((histogram!.value as Histogram).buckets.boundaries.at(-1)).toBe(600);
    const [requestHistogram] = points(after, 'image_gateway.request.duration');
    expect((requestHistogram!.value as Histogram).buckets.boundaries.at(-1)).toBe(600);
  });

  it('a limit refusal is counted by limit and route; no tenant id or key is a metric attribute', async () => {
    const limited = gateway.variant({ tenancy: { quotas: { limits: { requestsPerMinute: 1 } } } });
    const before = await collect();
    await request(limited.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_B}`)
      .send({ model: 'chat-q', messages: [{ role: 'user', content: 'a' }] })
      .expect(200);
    await request(limited.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_B}`)
      .send({ model: 'chat-q', messages: [{ role: 'user', content: 'a' }] })
      .expect(429);
    const after = await collect();
    expect(
      total(after, 'image_gateway.limit.refusals', { 'image_gateway.limit': 'requests', 'image_gateway.route': 'chat.completions' }) -
        total(before, 'image_gateway.limit.refusals', { 'image_gateway.limit': 'requests' }),
    ).toBe(1);
    const labels = JSON.stringify(after.map((metric) => metric.dataPoints.map((point) => point.attributes)));
    for (const secret of ['tenant-a', 'tenant-b', KEY_A, KEY_B, UPSTREAM_KEY, ARK_KEY]) expect(labels).not.toContain(secret);
  });

  it("a caller's invented model names do not become metric series (the upstream rejects them)", async () => {
    for (let index = 0; index < 30; index += 1) {
      llm.next((_request, res) => sendJson(res, 404, { error: { message: 'The model does not exist', type: 'invalid_request_error', code: 'model_not_found', param: null } }));
      await post('/v1/chat/completions', { model: `any-${index}-${Math.random().toString(36).slice(2)}`, messages: [{ role: 'user', content: 'a' }] });
    }
    const after = await collect();
    const invented = new Set<string>();
    for (const metric of after)
      for (const point of metric.dataPoints) for (const value of Object.values(point.attributes)) if (typeof value === 'string' && value.startsWith('any-')) invented.add(value);
    expect(invented.size).toBe(0);
    // the failures are still counted, as `_OTHER`; a pass-through model the upstream answered keeps its name
    expect(total(after, 'gen_ai.client.operation.duration', { 'gen_ai.request.model': '_OTHER' })).toBeGreaterThanOrEqual(30);
    await post('/v1/chat/completions', { model: 'any-real', messages: [{ role: 'user', content: 'a' }] }).expect(200);
    expect(total(await collect(), 'gen_ai.client.operation.duration', { 'gen_ai.request.model': 'any-real' })).toBe(1);
  });
});

describe('every request ends its span', () => {
  const raw = (path: string, headers: Record<string, string>, body: string | Buffer) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(`${gateway.url}${path}`, { method: 'POST', headers }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      });
      req.once('error', reject);
      req.end(body);
    });

  it.each([
    ['401 no key', {}, '{"model":"chat-a","messages":[]}', 401],
    ['400 unparsable JSON', { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' }, '{"model":', 400],
    ['413 too large', { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' }, JSON.stringify({ model: 'chat-a', pad: 'x'.repeat(8000) }), 413],
    ['415 wrong type', { authorization: `Bearer ${KEY_A}`, 'content-type': 'text/plain' }, 'hello', 415],
    ['404 unknown model', { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' }, '{"model":"nobody-serves-this","messages":[{"role":"user","content":"a"}]}', 404],
  ])('%s', async (_name, headers, body, status) => {
    expect(await raw('/v1/chat/completions', headers as Record<string, string>, body)).toBe(status);
    const server = await waitFor(() => serverSpans('chat.completions')[0]);
    expect(server.attributes['http.response.status_code']).toBe(status);
    expect(server.attributes['image_gateway.outcome']).toBe('client_error');
    expect(server.status.code).not.toBe(ERROR);
    await waitFor(() => open.size === 0);
  });

  it('a 429 from the in-flight cap, and the held request, both end', async () => {
    const capped = gateway.variant({ limits: { inFlightPerCaller: 1 } });
    const refusedBefore = total(await collect(), 'image_gateway.limit.refusals', { 'image_gateway.limit': 'in-flight', 'image_gateway.route': 'chat.completions' });
    const server = await new Promise<http.Server>((resolve) => {
      const s = capped.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const first = request(url)
        .post('/v1/chat/completions')
        .set('Authorization', `Bearer ${KEY_A}`)
        .send({ model: 'chat-a', stream: true, messages: [{ role: 'user', content: 'a' }] });
      const firstDone = first.then((r) => r.status);
      await waitFor(() => llm.requests.length >= 1);
      const second = await request(url)
        .post('/v1/chat/completions')
        .set('Authorization', `Bearer ${KEY_A}`)
        .send({ model: 'chat-a', messages: [{ role: 'user', content: 'a' }] });
      expect(second.status).toBe(429);
      expect(total(await collect(), 'image_gateway.limit.refusals', { 'image_gateway.limit': 'in-flight', 'image_gateway.route': 'chat.completions' })).toBe(refusedBefore + 1);
      expect(await firstDone).toBe(200);
      const servers = await waitFor(() => (serverSpans('chat.completions').length >= 2 ? serverSpans('chat.completions') : undefined));
      expect(servers.map((span) => span.attributes['http.response.status_code']).sort()).toEqual([200, 429]);
      await waitFor(() => open.size === 0);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a client that leaves mid-stream: 499, client_closed, every span ended', async () => {
    await new Promise<void>((resolve, reject) => {
      const req = http.request(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' } }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.once('error', () => undefined);
      req.end(JSON.stringify({ model: 'chat-a', stream: true, messages: [{ role: 'user', content: 'a' }] }));
      setTimeout(() => reject(new Error('no first byte')), 5_000).unref();
    });
    const server = await waitFor(() => serverSpans('chat.completions')[0]);
    expect(server.attributes['http.response.status_code']).toBe(499);
    expect(server.attributes['image_gateway.outcome']).toBe('client_closed');
    await waitFor(() => open.size === 0);
  });

  it('a client that leaves during its upload: the span ends (499)', async () => {
    await new Promise<void>((resolve) => {
      const req = http.request(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', 'content-length': '2000' },
      });
      req.once('error', () => resolve());
      req.write('{"model":"chat-a","messages":');
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100);
    });
    const server = await waitFor(() => serverSpans('chat.completions')[0]);
    expect(server.attributes['http.response.status_code']).toBe(499);
    await waitFor(() => open.size === 0);
    expect(llm.requests).toHaveLength(0);
  });

  it('an upstream that dies mid-stream: the request is not counted a success', async () => {
    llm.next((_request, res) => writeSlowly(llm, res, chatChunks('gpt-upstream', ['a', 'b', 'c', 'd']), { dieAfter: 2 }));
    const res = await post('/v1/chat/completions', { model: 'chat-a', stream: true, messages: [{ role: 'user', content: 'a' }] });
    expect(res.status).toBe(200);
    const server = await waitFor(() => serverSpans('chat.completions')[0]);
    await waitFor(() => open.size === 0);
    expect(server.attributes['error.type']).toBeDefined();
    expect(server.attributes['image_gateway.outcome']).not.toBe('success');
    expect(server.status.code).toBe(ERROR);
  });
});

describe('what a caller controls', () => {
  it('a huge model name is clipped on every span (names and attributes), not copied whole into the trace backend', async () => {
    const model = `any-${'m'.repeat(3000)}`;
    llm.next((_request, res) => sendJson(res, 404, { error: { message: 'The model does not exist', type: 'invalid_request_error', code: 'model_not_found', param: null } }));
    await post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'a' }] });
    const server = await waitFor(() => serverSpans('chat.completions')[0]);
    const [attempt] = childrenOf(server);
    for (const span of [server, attempt!]) {
      expect(span.name.length).toBeLessThanOrEqual(300);
      for (const value of Object.values(span.attributes)) expect(String(value).length).toBeLessThanOrEqual(300);
    }
    expect(String(server.attributes['gen_ai.request.model'])).toMatch(/^any-m+/);
  });
});

describe('context', () => {
  it('two interleaved requests: each upstream attempt is a child of its own request span', async () => {
    llm.chunkDelayMs = 40;
    const [one, two] = await Promise.all([
      post('/v1/chat/completions', { model: 'chat-one', stream: true, messages: [{ role: 'user', content: 'a' }] }),
      post('/v1/chat/completions', { model: 'chat-two', stream: true, messages: [{ role: 'user', content: 'b' }] }),
    ]);
    llm.chunkDelayMs = 60;
    expect([one.status, two.status]).toEqual([200, 200]);
    const servers = await waitFor(() => (serverSpans('chat.completions').length >= 2 ? serverSpans('chat.completions') : undefined));
    for (const server of servers) {
      const children = childrenOf(server);
      expect(children).toHaveLength(1);
      expect(children[0]!.spanContext().traceId).toBe(server.spanContext().traceId);
      const model = server.attributes['gen_ai.request.model'];
      const sent = llm.requests.find((r) => String((r.json as { messages: Array<{ content: string }> }).messages[0]!.content) === (model === 'chat-one' ? 'a' : 'b'));
      expect(String(sent?.headers.traceparent)).toContain(children[0]!.spanContext().spanId);
    }
    expect(servers[0]!.spanContext().traceId).not.toBe(servers[1]!.spanContext().traceId);
  });

  it("a tenant's own traceparent does not make the gateway join the tenant's trace (no host propagation set up)", async () => {
    const hostile = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await request(gateway.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .set('traceparent', hostile)
      .send({ model: 'chat-a', messages: [{ role: 'user', content: 'a' }] })
      .expect(200);
    const server = await waitFor(() => serverSpans('chat.completions')[0]);
    expect(server.spanContext().traceId).not.toBe('0af7651916cd43dd8448eb211c80319c');
    expect(String(llm.requests[0]?.headers.traceparent)).not.toContain('0af7651916cd43dd8448eb211c80319c');
  });
});

describe('prompt capture', () => {
  it('an opted-in prompt is cut to 8192 characters on every route (a video text item too)', async () => {
    const capturing = gateway.variant({ telemetry: { capturePrompts: true }, limits: { jsonBodyBytes: 65_536 } });
    await request(capturing.app)
      .post('/api/v3/contents/generations/tasks')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'seedance', content: [{ type: 'text', text: 'v'.repeat(20_000) }], duration: 5 })
      .expect(200);
    const create = await waitFor(() => serverSpans('video.tasks')[0]);
    const [attempt] = childrenOf(create);
    const captured = String(attempt?.attributes['gen_ai.input.messages']);
    expect(captured).toMatch(/^v+$/);
    expect(captured.length).toBeLessThanOrEqual(8192);
  });

  it('puts the text (never an image) on the attempt span only when the host opts in', async () => {
    const capturing = gateway.variant({ telemetry: { capturePrompts: true } });
    const image = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    await request(capturing.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({
        model: 'chat-a',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: PROMPT },
              { type: 'image_url', image_url: { url: image } },
            ],
          },
        ],
      })
      .expect(200);
    const server = await waitFor(() => serverSpans('chat.completions')[0]);
    const [attempt] = childrenOf(server);
    expect(String(attempt?.attributes['gen_ai.input.messages'])).toContain(PROMPT);
    for (const span of spans()) expect(shipped(span)).not.toContain('iVBORw0KGgo');
    for (const span of spans()) expect(shipped(span)).not.toContain(UPSTREAM_KEY);
  });
});
