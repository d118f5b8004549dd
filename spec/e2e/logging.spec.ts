// The operator's log (docs/observability.md "Logs"): a real pino writing to a stream, as most hosts run it. Fields
// arrive as fields (pino's `(fields, message)` order), every 5xx is one line with route, provider,
// status, upstream request id and latency, every failed upstream attempt is one line, and no line
// holds a key (the caller's or the operator's) or image bytes.
import { Redis } from 'ioredis';
import request from 'supertest';
import { pino } from 'pino';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Upstream, UsageEvent } from '../../lib/index.js';
import { bullmqScheduler } from '../../lib/redis.js';
import { dashscopeError, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { refusedOrigin } from '../helpers/faulty-servers.js';
import { chatChunks, startFakeLlm, writeSlowly } from '../helpers/fake-llm.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG_DATA_URL } from '../helpers/images.js';

const OPERATOR_KEY_1 = 'sk-operator-first-5f1c9a7e3b';
const OPERATOR_KEY_2 = 'sk-operator-second-8d2e4b6a0c';
const BASE64 = TINY_PNG_DATA_URL.slice(TINY_PNG_DATA_URL.indexOf(',') + 1);

interface Line {
  level: number;
  msg: string;
  [field: string]: unknown;
}
const lines: Line[] = [];
const WARN = 40;
const ERROR = 50;

const gw = await gatewayWith({
  fakes: { first: startFakeDashscope, second: startFakeDashscope },
  resetEach: true,
  // pino's own destination contract: anything with write(line)
  logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) }),
  resolve: ({ model }, { first, second }): Upstream | Upstream[] | null => {
    const one: Upstream = { provider: 'dashscope', baseURL: first.baseURL, apiKey: OPERATOR_KEY_1 };
    if (model === 'x-image-2.0') return one;
    if (model === 'x-image-2.0-pair') return [one, { provider: 'dashscope', baseURL: second.baseURL, apiKey: OPERATOR_KEY_2 }];
    if (model === 'x-image-2.0-broken') throw new Error('the routing table is unavailable');
    if (model === 'x-image-2.0-quoting') throw new Error(`no tenant route for ${KEY_A}, config ${OPERATOR_KEY_1} unusable`);
    return null;
  },
});

beforeEach(() => {
  lines.length = 0;
});

/** A generation with a reference image as a Data URL: its bytes must never reach the log. */
function generate(model: string) {
  const body = { model, input: { messages: [{ role: 'user', content: [{ image: TINY_PNG_DATA_URL }, { text: 'a lighthouse' }] }] } };
  return request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
}

/** An upstream error whose message quotes what it got, key and image bytes included, as some upstreams do. */
function failsQuoting(status: number, code: string, requestId: string) {
  return (_request: unknown, res: Parameters<typeof dashscopeError>[0]) => dashscopeError(res, status, code, `bad request from Bearer ${OPERATOR_KEY_1}: image ${TINY_PNG_DATA_URL}`, requestId);
}

function expectNothingSecret(): void {
  const text = JSON.stringify(lines);
  for (const secret of [KEY_A, OPERATOR_KEY_1, OPERATOR_KEY_2, BASE64, BASE64.slice(0, 24)]) expect(text).not.toContain(secret);
}

describe('the logger contract: pino as it is', () => {
  it('fields arrive as fields, under the child the gateway asked for', async () => {
    gw.fakes.first.next(failsQuoting(500, 'InternalError', 'ds-fields-1'));
    const res = await generate('x-image-2.0');
    expect(res.status).toBe(502);
    const line = lines.find((entry) => entry.level === ERROR)!;
    expect(line).toMatchObject({ component: 'express-image-gateway', msg: 'request answered 502', route: 'images.generations', status: 502 });
    expect(typeof line.msg).toBe('string');
    expectNothingSecret();
  });

  it('lifecycle events are info: the task scheduler started, the gateway closed', async () => {
    const own = await gatewayWith({ logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) }) });
    await vi.waitFor(() => expect(lines.map((entry) => entry.msg)).toContain('task scheduler started'));
    await own.close();
    expect(lines.filter((entry) => entry.level === 30).map((entry) => entry.msg)).toEqual(['task scheduler started', 'gateway closed: task scheduler stopped, upstream sockets freed']);
  });
});

describe('every 5xx once', () => {
  it('an upstream 500: one error line with route, provider, status, upstream request id and latency; the usage event names the code', async () => {
    gw.fakes.first.next(failsQuoting(500, 'InternalError', 'ds-5xx-1'));
    const res = await generate('x-image-2.0');
    expect(res.status).toBe(502);
    expect(lines.filter((entry) => entry.level === ERROR)).toEqual([
      {
        level: ERROR,
        time: expect.any(Number),
        pid: process.pid,
        hostname: expect.any(String),
        component: 'express-image-gateway',
        requestId: res.headers['x-request-id'],
        route: 'images.generations',
        model: 'x-image-2.0',
        provider: 'dashscope',
        caller: 'tenant-a',
        status: 502,
        code: 'upstream_error',
        upstreamRequestId: 'ds-5xx-1',
        latencyMs: expect.any(Number),
        msg: 'request answered 502',
      },
    ]);
    await vi.waitFor(() => expect(gw.usage).toHaveLength(1));
    expect(gw.usage[0]).toMatchObject({ status: 502, errorCode: 'upstream_error' });
    expectNothingSecret();
  });

  it('a resolver that throws: its cause once, the 500 once', async () => {
    const res = await generate('x-image-2.0-broken');
    expect(res.status).toBe(500);
    const errors = lines.filter((entry) => entry.level === ERROR);
    expect(errors.map((entry) => entry.msg)).toEqual(['resolveUpstream threw; answering 500', 'request answered 500']);
    expect(errors[1]).toMatchObject({ route: 'images.generations', status: 500, code: 'internal_error', latencyMs: expect.any(Number) });
    // both lines name the request, by the id its answer carries
    expect(errors.map((entry) => entry.requestId)).toEqual([res.headers['x-request-id'], res.headers['x-request-id']]);
    expectNothingSecret();
  });

  it('a 4xx is not an operator failure: nothing at error level, but the usage event names the code', async () => {
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'x-image-2.0' });
    expect(res.status).toBe(400);
    await vi.waitFor(() => expect(gw.usage).toHaveLength(1));
    expect(gw.usage[0]).toMatchObject({ status: 400, errorCode: res.body.error.code });
    expect(lines.filter((entry) => entry.level >= WARN)).toEqual([]);
  });
});

describe('every failed upstream attempt once', () => {
  it('a fallback list: the refused first attempt and the failed last one, one line each, then the 5xx', async () => {
    gw.fakes.first.next(failsQuoting(503, 'ServiceUnavailable', 'ds-first-1'));
    gw.fakes.second.next(failsQuoting(500, 'InternalError', 'ds-second-1'));
    const res = await generate('x-image-2.0-pair');
    expect(res.status).toBe(502);
    const attempts = lines.filter((entry) => entry.level === WARN);
    expect(attempts).toEqual([
      expect.objectContaining({ msg: 'upstream failed, trying the next one', provider: 'dashscope', status: 502, code: 'upstream_error', upstreamRequestId: 'ds-first-1', attempt: 1, of: 2 }),
      expect.objectContaining({ msg: 'upstream failed', provider: 'dashscope', status: 502, code: 'upstream_error', upstreamRequestId: 'ds-second-1', attempt: 2, of: 2 }),
    ]);
    expect(lines.filter((entry) => entry.level === ERROR)).toEqual([expect.objectContaining({ msg: 'request answered 502', upstreamRequestId: 'ds-second-1' })]);
    expectNothingSecret();
  });

  it('a fallback that succeeds: the failed attempt once, no error', async () => {
    gw.fakes.first.next(failsQuoting(429, 'Throttling.RateQuota', 'ds-first-2'));
    const res = await generate('x-image-2.0-pair');
    expect(res.status).toBe(200);
    expect(lines.filter((entry) => entry.level >= WARN)).toEqual([
      expect.objectContaining({ msg: 'upstream failed, trying the next one', status: 429, code: 'rate_limit_exceeded', upstreamRequestId: 'ds-first-2', attempt: 1, of: 2 }),
    ]);
    expectNothingSecret();
  });

  it('a last attempt that fails with a 4xx is still logged (the operator sees it; no 5xx line)', async () => {
    gw.fakes.first.next(failsQuoting(400, 'DataInspectionFailed', 'ds-policy-1'));
    const res = await generate('x-image-2.0');
    expect(res.status).toBe(400);
    expect(lines.filter((entry) => entry.level >= WARN)).toEqual([
      expect.objectContaining({ msg: 'upstream failed', status: 400, code: 'content_policy_violation', upstreamRequestId: 'ds-policy-1', attempt: 1, of: 1 }),
    ]);
    expectNothingSecret();
  });
});

describe('a Redis outage does not flood the log', () => {
  it("BullMQ's reconnect errors: one warn line per kind, not one per retry", async () => {
    const port = Number(new URL(await refusedOrigin()).port);
    // nothing listens there: BullMQ's queue and worker connections fail, and retry, over and over
    const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: null, retryStrategy: () => 20 });
    const own = await gatewayWith({
      callbacks: { scheduler: bullmqScheduler({ connection: client }) },
      logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) }),
    });
    const outageLines = (): Line[] => lines.filter((entry) => entry.msg === 'the task scheduler cannot reach Redis; BullMQ keeps retrying');
    // the first failure is logged however slow the machine is; then, at a retry every 20 ms, a second
    // more is some fifty failed reconnects of each connection, none of which may add a line
    await vi.waitFor(() => expect(outageLines().length).toBeGreaterThan(0), { timeout: 10_000, interval: 50 });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const outage = outageLines();
    // each kind (connection and message: refused, closed) once in the window, never once per retry
    const kinds = outage.map((entry) => `${String(entry.source)}: ${String(entry.error)}`);
    expect(new Set(kinds).size).toBe(kinds.length);
    expect(outage.length).toBeLessThanOrEqual(4);
    expect(outage[0]).toMatchObject({ level: WARN, queueName: 'gateway-tasks', source: expect.stringMatching(/^(queue|worker)$/), error: expect.stringContaining('ECONNREFUSED') });
    await own.close();
    client.disconnect();
  }, 15_000);
});

describe('a stream that fails after it began', () => {
  it('is told to the client as an error event and logged once, with its code in the usage event', async () => {
    const usage: UsageEvent[] = [];
    const own = await gatewayWith({
      fakes: { llm: startFakeLlm },
      onUsage: (event) => usage.push(event),
      logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) }),
      resolve: (_input, { llm }): Upstream => ({ provider: 'openai', baseURL: llm.baseURL, apiKey: OPERATOR_KEY_1 }),
    });
    // two chunks, then the upstream connection dies
    own.fakes.llm.next((_request, res) => writeSlowly(own.fakes.llm, res, chatChunks('m', ['Hel', 'lo', ' there']), { dieAfter: 2 }));
    const res = await request(own.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    expect(res.text).toContain('"code":"upstream_');
    await vi.waitFor(() => expect(usage).toHaveLength(1));
    const failures = lines.filter((entry) => entry.level === ERROR);
    expect(failures).toEqual([expect.objectContaining({ msg: 'request failed after its response began; response cut', route: 'chat.completions', provider: 'openai' })]);
    expect(usage[0]).toMatchObject({ route: 'chat.completions', status: 200, errorCode: failures[0]!.code });
    expectNothingSecret();
    await own.close();
  });
});

describe('a host error that quotes keys', () => {
  it("resolveUpstream throwing with the caller's and an operator key in its message: logged, redacted", async () => {
    const res = await generate('x-image-2.0-quoting');
    expect(res.status).toBe(500);
    const cause = lines.find((entry) => entry.msg === 'resolveUpstream threw; answering 500');
    expect(cause).toMatchObject({ level: ERROR, error: 'no tenant route for [redacted], config [redacted] unusable' });
    expectNothingSecret();
  });
});
