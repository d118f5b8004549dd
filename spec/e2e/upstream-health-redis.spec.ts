// Upstream health shared between instances (docs/routing-and-health.md "Several instances"): two
// gateways on one real Redis (`routing.store`); an account refusal seen by one keeps the other's
// requests off that upstream too. A Redis that cannot be reached (a client pointed at a closed port)
// leaves each instance with its own health: requests keep being answered. Runs when REDIS_URL is set.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Redis, type RedisOptions } from 'ioredis';
import request from 'supertest';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Upstream } from '../../lib/index.js';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { removeRedisKeys } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.REDIS_URL;
const ask = { model: 'x-chat', messages: [{ role: 'user', content: 'hi' }] };

const upstreamOf = (fake: FakeLlm, apiKey: string): Upstream => ({ provider: 'openai', baseURL: fake.baseURL, apiKey, model: 'up-chat' });
const forbidden = (_request: unknown, res: ServerResponse) => sendJson(res, 403, { error: { message: 'account disabled', type: 'invalid_request_error', param: null, code: null } });
const chat = (app: Parameters<typeof request>[0], key = KEY_A) => request(app).post('/v1/chat/completions').set('authorization', `Bearer ${key}`).send(ask);

/** A client the test closes when it ends. */
function client(url: string, options: RedisOptions = {}): Redis {
  const made = new Redis(url, { maxRetriesPerRequest: 1, ...options });
  made.on('error', () => {});
  onTestFinished(() => {
    made.disconnect();
  });
  return made;
}

describe.runIf(Boolean(REDIS_URL))('upstream health on Redis', () => {
  it("two instances on one Redis: an account refusal seen by one keeps the other's requests off that upstream", async () => {
    const prefix = `gw:test:health:${randomBytes(4).toString('hex')}:`;
    onTestFinished(() => removeRedisKeys(REDIS_URL!, [`${prefix}*`]));
    const gateway = await gatewayWith({
      fakes: { a: startFakeLlm, b: startFakeLlm },
      resolve: (_input, { a, b }) => [upstreamOf(a, 'sk-operator-a'), upstreamOf(b, 'sk-operator-b')],
      routing: { store: client(REDIS_URL!), prefix },
    });
    const other = gateway.variant({ routing: { store: client(REDIS_URL!), prefix } });
    const { a, b } = gateway.fakes;
    // the other instance has subscribed: it answers through a first while a is healthy
    expect((await chat(other.app)).status).toBe(200);
    expect(a.apiRequests()).toHaveLength(1);

    a.next(forbidden);
    expect((await chat(gateway.app)).status).toBe(200);
    expect(a.apiRequests()).toHaveLength(2);
    await expect.poll(() => other.router.health().find((entry) => entry.upstream.baseURL === a.baseURL)?.state, { timeout: 15_000 }).toBe('open');
    for (let call = 0; call < 5; call++) expect((await chat(other.app, KEY_B)).status).toBe(200);
    expect(a.apiRequests()).toHaveLength(2);
    expect(b.apiRequests()).toHaveLength(6);

    // an instance that starts later reads the open state from the hash
    const late = gateway.variant({ routing: { store: client(REDIS_URL!), prefix } });
    await expect.poll(() => late.router.health().find((entry) => entry.upstream.baseURL === a.baseURL)?.state, { timeout: 15_000 }).toBe('open');
  });

  it('Redis down (a client pointed at a closed port): requests are answered, health stays per instance', async () => {
    const down = client('redis://127.0.0.1:9', { maxRetriesPerRequest: 0, retryStrategy: () => 1000 });
    const gateway = await gatewayWith({
      fakes: { a: startFakeLlm, b: startFakeLlm },
      resolve: (_input, { a, b }) => [upstreamOf(a, 'sk-operator-a'), upstreamOf(b, 'sk-operator-b')],
      routing: { store: down },
    });
    const { a, b } = gateway.fakes;
    expect((await chat(gateway.app)).status).toBe(200);
    a.next(forbidden);
    expect((await chat(gateway.app)).status).toBe(200);
    for (let call = 0; call < 3; call++) expect((await chat(gateway.app)).status).toBe(200);
    expect(a.apiRequests()).toHaveLength(2);
    expect(b.apiRequests()).toHaveLength(4);
    expect(gateway.router.health().find((entry) => entry.upstream.baseURL === a.baseURL)?.state).toBe('open');
  });
});
