// The fallback rule (docs/architecture.md "Errors", docs/errors.md "Which failures are retried upstream"): the next upstream of a list is tried
// only when the failed one certainly did not start the work (refused, unreachable, DNS, a connect
// that never completed, 429, 503). After a timeout, a reset or a 5xx the work may be under way and
// paid for: the caller gets the error and the next upstream is never called, for images and for
// Ark video tasks alike.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { Upstream } from '../../lib/index.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { dashscopeError, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { refusedOrigin, startResettingServer, startTcpFault } from '../helpers/faulty-servers.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';

type Scenario = 'live' | 'refused' | 'reset' | 'connect-timeout' | 'tls-fails';

// A listener whose accept queue is full: the kernel drops further SYNs, so a connect to it never
// completes and the request is certainly never written. Node accepts every connection itself, so a
// few lines of Python hold the socket (the suite already runs python3 for the signer reference).
const FULL_BACKLOG = `
import socket, sys
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(0)
c = socket.create_connection(s.getsockname())
print(s.getsockname()[1], flush=True)
sys.stdin.read()
`;

/** Spawns the full-backlog listener; closing it ends the process. */
async function startFullBacklog(): Promise<{ origin: string; close(): Promise<void> }> {
  const child = spawn('python3', ['-c', FULL_BACKLOG]);
  const [port] = (await once(child.stdout, 'data')) as [Buffer];
  return {
    origin: `http://127.0.0.1:${port.toString().trim()}`,
    close: () => {
      child.stdin.end();
      child.kill();
      return Promise.resolve();
    },
  };
}

const refused = await refusedOrigin();
const fakes = {
  first: startFakeDashscope,
  second: startFakeDashscope,
  arkFirst: startFakeArk,
  arkSecond: startFakeArk,
  resetting: startResettingServer,
  // answers a TLS ClientHello with plain HTTP: the handshake fails before the request is written
  notTls: () => startTcpFault((socket) => socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n'))),
  unconnectable: startFullBacklog,
};
type Started = { [K in keyof typeof fakes]: Awaited<ReturnType<(typeof fakes)[K]>> };

function firstOrigin(scenario: Scenario, live: string, { resetting, notTls, unconnectable }: Started): string {
  switch (scenario) {
    case 'refused':
      return refused;
    case 'reset':
      return resetting.origin;
    case 'connect-timeout':
      return unconnectable.origin;
    case 'tls-fails':
      return notTls.origin.replace('http:', 'https:');
    default:
      return live;
  }
}

const gateway = await gatewayWith({
  fakes,
  resolve: ({ route, req }, started): Upstream[] => {
    const scenario = (req?.headers['x-scenario'] as Scenario | undefined) ?? 'live';
    if (route === 'video.tasks') {
      return [
        { provider: 'ark', baseURL: `${firstOrigin(scenario, started.arkFirst.origin, started)}/api/v3`, apiKey: 'first', timeoutMs: 2_000 },
        { provider: 'ark', baseURL: started.arkSecond.baseURL, apiKey: 'second' },
      ];
    }
    return [
      { provider: 'dashscope', baseURL: `${firstOrigin(scenario, started.first.origin, started)}/api/v1`, apiKey: 'first', timeoutMs: 2_000 },
      { provider: 'dashscope', baseURL: started.second.baseURL, apiKey: 'second' },
    ];
  },
  // forgets what the fakes recorded after each test
  resetEach: true,
});
const { first, second, arkFirst, arkSecond, notTls } = gateway.fakes;

const generate = (scenario: Scenario = 'live') =>
  request(gateway.app)
    .post('/v1/images/generations')
    .set('Authorization', `Bearer ${KEY_A}`)
    .set('x-scenario', scenario)
    .send({ model: 'x-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'a lighthouse' }] }] } });

const createTask = (scenario: Scenario = 'live') =>
  request(gateway.app)
    .post('/api/v3/contents/generations/tasks')
    .set('Authorization', `Bearer ${KEY_A}`)
    .set('x-scenario', scenario)
    .send({ model: 'seedance', content: [{ type: 'text', text: 'a lighthouse at dusk' }] });

const hang = (): void => {};

describe('images: falls back only when the first upstream certainly did not start', () => {
  it('connection refused: the second upstream serves', async () => {
    const res = await generate('refused');
    expect(res.status).toBe(200);
    expect(second.apiRequests().map((r) => r.headers.authorization)).toEqual(['Bearer second']);
  });

  it('a connect that never completes (no socket yet): the second upstream serves', async () => {
    const res = await generate('connect-timeout');
    expect(res.status).toBe(200);
    expect(second.apiRequests()).toHaveLength(1);
  });

  it('a TLS handshake that fails before the request is written: the second upstream serves', async () => {
    const res = await generate('tls-fails');
    expect(res.status).toBe(200);
    expect(notTls.connections).not.toHaveLength(0);
    expect(second.apiRequests()).toHaveLength(1);
  });

  it.each([
    [429, 'Throttling.RateQuota', 'Requests rate limit exceeded'],
    [503, 'ServiceUnavailable', 'The service is temporarily unavailable'],
  ])('upstream %i before processing: the second upstream serves', async (status, code, message) => {
    first.next((_req, res) => dashscopeError(res, status, code, message));
    const res = await generate();
    expect(res.status).toBe(200);
    expect(first.apiRequests()).toHaveLength(1);
    expect(second.apiRequests()).toHaveLength(1);
  });

  it('a timeout after the request was sent: 504, the second upstream is never called', async () => {
    first.next(hang);
    const res = await generate();
    expect(res.status).toBe(504);
    expect(res.body).toEqual({
      error: {
        message: "The dashscope upstream did not answer within 2000 ms. Retry, or raise the upstream's timeoutMs for slow jobs.",
        type: 'upstream_error',
        code: 'upstream_timeout',
        param: null,
      },
    });
    expect(first.apiRequests()).toHaveLength(1);
    expect(second.requests).toHaveLength(0);
  });

  it('upstream 500: 502, the second upstream is never called', async () => {
    first.next((_req, res) => dashscopeError(res, 500, 'InternalError', 'An internal error has occured'));
    const res = await generate();
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
    expect(second.requests).toHaveLength(0);
  });

  it('a reset after the request was sent: 502, the second upstream is never called', async () => {
    const res = await generate('reset');
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: { message: 'The dashscope upstream could not be reached (ECONNRESET).', type: 'upstream_error', code: 'upstream_unreachable', param: null } });
    expect(second.requests).toHaveLength(0);
  });
});

describe('video tasks: a task is never created twice', () => {
  it('a timeout on create: 504, no second Ark task', async () => {
    arkFirst.next(hang);
    const res = await createTask();
    expect(res.status).toBe(504);
    expect(arkFirst.requests).toHaveLength(1);
    expect(arkSecond.requests).toHaveLength(0);
  });

  it('Ark 500 on create: 502, no second Ark task', async () => {
    arkFirst.next((_req, res) => sendJson(res, 500, { error: { code: 'InternalServiceError', message: 'internal error', param: '', type: 'InternalServerError' } }));
    const res = await createTask();
    expect(res.status).toBe(502);
    expect(arkSecond.requests).toHaveLength(0);
  });

  it('connection refused on create: the second Ark creates the task', async () => {
    const res = await createTask('refused');
    expect(res.status).toBe(200);
    expect(res.body.id).toMatch(/^task_/);
    expect(arkSecond.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('Ark 429 on create: the second Ark creates the task', async () => {
    arkFirst.next((_req, res) => sendJson(res, 429, { error: { code: 'RateLimitExceeded.EndpointRPMExceeded', message: 'rate limited', param: '', type: 'TooManyRequests' } }));
    const res = await createTask();
    expect(res.status).toBe(200);
    expect(arkSecond.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });
});
