// Observability (docs/observability.md "Traces and metrics") with the real OpenTelemetry SDK in-process: the span
// tree of an image request with a fallback, a streamed chat, a video task from create to callback;
// `traceparent` reaching the upstream and the callback receiver; metric values after a known
// sequence; and no key or prompt in any attribute unless the host opts in to prompt capture.
import type { ServerResponse } from 'node:http';
import * as otelApi from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import request from 'supertest';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { type Upstream, memoryTaskStore } from '../../lib/index.js';
import type { OtelApi } from '../../lib/telemetry/otel-api.js';
import { startCallbackReceiver } from '../helpers/callback-receiver.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { dashscopeError, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { pointsOf, registerOtelSdk, totalOf } from '../helpers/otel-sdk.js';

// the module itself satisfies the option's structural type (checked by tsc)
const API: OtelApi = otelApi;
const SDK = registerOtelSdk();
afterAll(() => SDK.shutdown());

const KEYS = { first: 'sk-upstream-first-0123456789', second: 'sk-upstream-second-0123456789', llm: 'sk-upstream-llm-0123456789', ark: 'sk-upstream-ark-0123456789' };
const IMAGE_PROMPT = 'a lighthouse on a cliff at dawn, oil painting';
const CHAT_PROMPT = 'tell me about lighthouses of Brittany';
const VIDEO_PROMPT = 'waves breaking on the lighthouse rocks';
const SERVER = otelApi.SpanKind.SERVER;
const CLIENT = otelApi.SpanKind.CLIENT;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

const store = memoryTaskStore();
const receiver = await startCallbackReceiver();
afterAll(() => receiver.close());
const gateway = await gatewayWith({
  fakes: { first: startFakeDashscope, second: startFakeDashscope, llm: startFakeLlm, ark: startFakeArk },
  store,
  callbacks: { allowLocal: true, pollIntervalsMs: { video: [30] }, retryBaseMs: 20, retryMaxMs: 40 },
  limits: { inFlightPerCaller: 1 },
  resolve: ({ route }, { first, second, llm, ark }): Upstream | Upstream[] | null => {
    if (route === 'chat.completions') return { provider: 'openai', baseURL: llm.baseURL, apiKey: KEYS.llm, model: 'upstream-chat' };
    if (route === 'video.tasks') return { provider: 'ark', baseURL: ark.baseURL, apiKey: KEYS.ark, model: 'doubao-seedance-1-5-pro-251215' };
    return [
      { provider: 'dashscope', baseURL: first.baseURL, apiKey: KEYS.first },
      { provider: 'dashscope', baseURL: second.baseURL, apiKey: KEYS.second },
    ];
  },
  resetEach: true,
});
const { first, second, llm, ark } = gateway.fakes;

beforeEach(() => {
  SDK.exporter.reset();
});

const generate = (app = gateway.app) =>
  request(app)
    .post('/v1/images/generations')
    .set('Authorization', `Bearer ${KEY_A}`)
    .send({ model: 'x-image-2.0', input: { messages: [{ role: 'user', content: [{ text: IMAGE_PROMPT }] }] } });

const serverSpan = (route: string) => (spans: ReadableSpan[]) => spans.find((span) => span.kind === SERVER && span.attributes['image_gateway.route'] === route);
const childrenOf = (parent: ReadableSpan) => SDK.spans().filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId);

/** Every attribute value of every finished span (and of their events and links), as text. */
function allAttributeText(): string {
  return JSON.stringify(SDK.spans().map((span) => [span.name, span.attributes, span.events.map((event) => event.attributes), span.links.map((link) => link.attributes)]));
}

describe('an image request with a fallback', () => {
  it('is one server span with two client spans as its children; the failed one has error.type; each attempt carried its traceparent', async () => {
    first.next((_req, res) => dashscopeError(res, 503, 'ServiceUnavailable', 'The service is temporarily unavailable'));
    const res = await generate();
    expect(res.status).toBe(200);

    const server = await SDK.waitFor(serverSpan('images.generations'));
    expect(server.name).toBe('POST /v1/images/generations');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/images/generations',
      'http.response.status_code': 200,
      'image_gateway.outcome': 'success',
      'gen_ai.request.model': 'x-image-2.0',
      'gen_ai.provider.name': 'alibaba.dashscope',
    });
    expect(server.attributes['error.type']).toBeUndefined();

    const attempts = childrenOf(server).sort((a, b) => Number(a.attributes['image_gateway.attempt']) - Number(b.attributes['image_gateway.attempt']));
    expect(attempts.map((span) => span.kind)).toEqual([CLIENT, CLIENT]);
    for (const span of attempts) {
      expect(span.spanContext().traceId).toBe(server.spanContext().traceId);
      expect(span.attributes).toMatchObject({
        'gen_ai.operation.name': 'generate_content',
        'gen_ai.provider.name': 'alibaba.dashscope',
        'gen_ai.output.type': 'image',
        'server.address': '127.0.0.1',
      });
    }
    expect(attempts[0]!.attributes['error.type']).toBe('upstream_error');
    expect(attempts[0]!.status.code).toBe(otelApi.SpanStatusCode.ERROR);
    expect(attempts[1]!.attributes['error.type']).toBeUndefined();

    // the upstream received the W3C context of the attempt that called it
    const sentFirst = TRACEPARENT.exec(String(first.apiRequests()[0]?.headers.traceparent));
    const sentSecond = TRACEPARENT.exec(String(second.apiRequests()[0]?.headers.traceparent));
    expect(sentFirst?.slice(1)).toEqual([server.spanContext().traceId, attempts[0]!.spanContext().spanId]);
    expect(sentSecond?.slice(1)).toEqual([server.spanContext().traceId, attempts[1]!.spanContext().spanId]);
  });

  it('a caller error is a server span with the error code and no client span', async () => {
    const res = await request(gateway.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'x-image-2.0', input: { prompt: IMAGE_PROMPT } });
    expect(res.status).toBe(400);
    const server = await SDK.waitFor(serverSpan('images.generations'));
    expect(server.attributes).toMatchObject({ 'http.response.status_code': 400, 'image_gateway.outcome': 'client_error', 'error.type': res.body.error.code });
    // a 4xx is the caller's mistake: the server span is not an error
    expect(server.status.code).not.toBe(otelApi.SpanStatusCode.ERROR);
    expect(childrenOf(server)).toEqual([]);
  });
});

describe('a streamed chat', () => {
  it('is a server span with one chat client span; the upstream got traceparent', async () => {
    const res = await request(gateway.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'chat-small', stream: true, n: 2, messages: [{ role: 'user', content: CHAT_PROMPT }] });
    expect(res.status).toBe(200);
    expect(res.text).toContain('data: [DONE]');

    const server = await SDK.waitFor(serverSpan('chat.completions'));
    expect(server.attributes).toMatchObject({ 'http.response.status_code': 200, 'gen_ai.request.model': 'chat-small', 'gen_ai.provider.name': 'openai' });
    const [attempt, ...others] = childrenOf(server);
    expect(others).toEqual([]);
    expect(attempt?.name).toBe('chat upstream-chat');
    expect(attempt?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'upstream-chat',
      'gen_ai.output.type': 'text',
      'gen_ai.request.choice.count': 2,
    });
    const sent = TRACEPARENT.exec(String(llm.apiRequests().at(-1)?.headers.traceparent));
    expect(sent?.slice(1)).toEqual([server.spanContext().traceId, attempt!.spanContext().spanId]);
  });

  it('a non-streamed chat reports the response model and the token usage', async () => {
    const res = await request(gateway.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'chat-small', messages: [{ role: 'user', content: CHAT_PROMPT }] });
    expect(res.status).toBe(200);
    const server = await SDK.waitFor(serverSpan('chat.completions'));
    const [attempt] = childrenOf(server);
    const usage = res.body.usage as { prompt_tokens: number; completion_tokens: number };
    expect(attempt?.attributes).toMatchObject({ 'gen_ai.response.model': res.body.model, 'gen_ai.usage.input_tokens': usage.prompt_tokens, 'gen_ai.usage.output_tokens': usage.completion_tokens });
  });
});

describe('a video task from create to callback', () => {
  it('stores the create context, links every poll to it and continues its trace in each callback', async () => {
    receiver.deliveries.length = 0;
    const created = await request(gateway.app)
      .post('/api/v3/contents/generations/tasks')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'seedance', content: [{ type: 'text', text: VIDEO_PROMPT }], callback_url: receiver.url });
    expect(created.status).toBe(200);
    const accepted = await receiver.accepted(3);

    const server = await SDK.waitFor(serverSpan('video.tasks'));
    const traceId = server.spanContext().traceId;
    const record = await store.getTask(created.body.id as string);
    expect(record?.trace).toEqual({ traceId, spanId: server.spanContext().spanId, traceFlags: 1 });
    const [create] = childrenOf(server);
    expect(create?.attributes).toMatchObject({ 'gen_ai.provider.name': 'volcengine.ark', 'gen_ai.output.type': 'video', 'gen_ai.request.model': 'doubao-seedance-1-5-pro-251215' });

    // background polls: their own traces, linked to the create's
    const polls = await SDK.waitFor((spans) => {
      const found = spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'get_task');
      return found.length >= 3 ? found : undefined;
    });
    for (const poll of polls) {
      expect(poll.kind).toBe(CLIENT);
      expect(poll.links.map((link) => link.context.traceId)).toEqual([traceId]);
      expect(poll.attributes['gen_ai.provider.name']).toBe('volcengine.ark');
    }
    // Ark's task reads carried the poll's context
    const pollIds = new Set(polls.map((poll) => poll.spanContext().spanId));
    for (const get of ark.taskGets()) expect(pollIds.has(TRACEPARENT.exec(String(get.headers.traceparent))?.[2] ?? '')).toBe(true);

    // every callback continues the create's trace, from a delivery span that is the create's child
    const deliveries = await SDK.waitFor((spans) => {
      const found = spans.filter((span) => span.name === 'POST callback');
      return found.length >= 3 ? found : undefined;
    });
    for (const delivery of accepted) {
      const [, sentTrace, sentSpan] = TRACEPARENT.exec(String(delivery.headers.traceparent)) ?? [];
      expect(sentTrace).toBe(traceId);
      const span = deliveries.find((candidate) => candidate.spanContext().spanId === sentSpan);
      expect(span?.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    }
  });
});

describe('metrics', () => {
  it('count a known sequence: requests by route and outcome, upstream attempts, images, refusals, task transitions, video seconds, callbacks', async () => {
    receiver.deliveries.length = 0;
    const before = await SDK.collect();
    // two successful images (one after a fallback), one caller error
    first.next((_req, res) => dashscopeError(res, 503, 'ServiceUnavailable', 'The service is temporarily unavailable'));
    expect((await generate()).status).toBe(200);
    expect((await generate()).status).toBe(200);
    expect(
      (
        await request(gateway.app)
          .post('/v1/images/generations')
          .set('Authorization', `Bearer ${KEY_A}`)
          .send({ model: 'x-image-2.0', input: { prompt: 'x' } })
      ).status,
    ).toBe(400);
    // one refusal by the in-flight cap (1): a request held upstream, a second one refused
    let release: () => void = () => {};
    first.next((_req, res: ServerResponse) => new Promise<void>((resolve) => (release = resolve)).then(() => dashscopeError(res, 400, 'InvalidParameter', 'held')));
    const held = generate();
    const heldDone = held.then((res) => res);
    await SDK.waitFor(() => (first.apiRequests().length >= 3 ? true : undefined));
    const refused = await generate();
    expect(refused.status).toBe(429);
    release();
    expect((await heldDone).status).toBe(400);
    // one video task to its end (queued, running, succeeded: three callbacks, 5 s of video)
    await request(gateway.app)
      .post('/api/v3/contents/generations/tasks')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'seedance', content: [{ type: 'text', text: VIDEO_PROMPT }], callback_url: receiver.url });
    await receiver.accepted(3);
    await SDK.waitFor((spans) => (spans.filter((span) => span.name === 'POST callback').length >= 3 ? true : undefined));
    await SDK.waitFor(serverSpan('video.tasks'));

    const after = await SDK.collect();
    const delta = (name: string, match: Record<string, unknown> = {}) => totalOf(after, name, match) - totalOf(before, name, match);
    const images = { 'image_gateway.route': 'images.generations' };
    expect(delta('image_gateway.request.duration', { ...images, 'image_gateway.outcome': 'success' })).toBe(2);
    expect(delta('image_gateway.request.duration', { ...images, 'image_gateway.outcome': 'client_error' })).toBe(3);
    expect(delta('image_gateway.request.duration', { ...images, 'http.response.status_code': 429, 'error.type': 'rate_limit_exceeded' })).toBe(1);
    expect(delta('image_gateway.images.generated', { ...images, 'gen_ai.provider.name': 'alibaba.dashscope' })).toBe(2);
    expect(delta('image_gateway.limit.refusals', { 'image_gateway.limit': 'in-flight', ...images })).toBe(1);
    const dashscope = { 'gen_ai.provider.name': 'alibaba.dashscope', 'gen_ai.operation.name': 'generate_content' };
    expect(delta('gen_ai.client.operation.duration', dashscope)).toBe(4);
    expect(delta('gen_ai.client.operation.duration', { ...dashscope, 'error.type': 'upstream_error' })).toBe(1);
    for (const status of ['queued', 'running', 'succeeded']) expect(delta('image_gateway.task.transitions', { 'image_gateway.task.status': status })).toBe(1);
    expect(delta('image_gateway.video.seconds', { 'gen_ai.provider.name': 'volcengine.ark' })).toBe(5);
    expect(delta('image_gateway.callback.deliveries', { 'image_gateway.outcome': 'delivered' })).toBe(3);

    // upstream durations go to 600 s: image and video jobs run far past the conventions' 82 s
    const [point] = pointsOf(after, 'gen_ai.client.operation.duration', dashscope);
    expect((point?.value as { buckets: { boundaries: number[] } }).buckets.boundaries.at(-1)).toBe(600);
    // an absent attribute is left out, not written as an empty label
    for (const metric of after) for (const dataPoint of metric.dataPoints) expect(Object.values(dataPoint.attributes)).not.toContain(undefined);
    // no tenant or key as a metric attribute (cardinality, and secrets)
    const text = JSON.stringify(after.map((metric) => metric.dataPoints.map((dataPoint) => dataPoint.attributes)));
    for (const secret of [KEY_A, 'tenant-a', ...Object.values(KEYS)]) expect(text).not.toContain(secret);
  });
});

describe('what attributes never hold', () => {
  it('no key (caller or upstream) and no prompt in any attribute of any span', async () => {
    first.next((_req, res) => dashscopeError(res, 503, 'ServiceUnavailable', 'The service is temporarily unavailable'));
    await generate();
    await request(gateway.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'chat-small', messages: [{ role: 'user', content: CHAT_PROMPT }] });
    await request(gateway.app)
      .post('/api/v3/contents/generations/tasks')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'seedance', content: [{ type: 'text', text: VIDEO_PROMPT }] });
    await SDK.waitFor(serverSpan('video.tasks'));
    await SDK.waitFor(serverSpan('chat.completions'));
    const text = allAttributeText();
    expect(SDK.spans().length).toBeGreaterThanOrEqual(7);
    for (const secret of [KEY_A, ...Object.values(KEYS), IMAGE_PROMPT, CHAT_PROMPT, VIDEO_PROMPT, 'lighthouse']) expect(text).not.toContain(secret);
  });

  it('with capturePrompts the attempt spans carry the prompt text (and still no key)', async () => {
    const capturing = gateway.variant({ telemetry: { api: API, capturePrompts: true } });
    await generate(capturing.app);
    await request(capturing.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({
        model: 'chat-small',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: CHAT_PROMPT },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ],
          },
        ],
      });
    await SDK.waitFor(serverSpan('chat.completions'));
    const prompts = SDK.spans().map((span) => span.attributes['gen_ai.input.messages']);
    expect(prompts).toContain(IMAGE_PROMPT);
    expect(prompts).toContain(CHAT_PROMPT);
    const text = allAttributeText();
    for (const secret of [KEY_A, ...Object.values(KEYS), 'iVBORw0KGgo']) expect(text).not.toContain(secret);
  });

  it('an Idempotency-Key replay marks its server span image_gateway.idempotent_replay, and calls no upstream', async () => {
    const keyed = () => generate().set('Idempotency-Key', 'telemetry-replay-1');
    expect((await keyed()).status).toBe(200);
    const calls = first.requests.length + second.requests.length;
    const replay = await keyed();
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(first.requests.length + second.requests.length).toBe(calls);
    const servers = await SDK.waitFor((spans) => {
      const found = spans.filter((span) => span.kind === SERVER && span.attributes['image_gateway.route'] === 'images.generations');
      return found.length === 2 ? found : undefined;
    });
    expect(servers.map((span) => span.attributes['image_gateway.idempotent_replay'] === true)).toEqual([false, true]);
    // the replay made no upstream attempt: its server span has no client children
    expect(childrenOf(servers[1]!)).toEqual([]);
  });
});
