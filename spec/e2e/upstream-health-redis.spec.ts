// Upstream health shared between instances (docs/routing-and-health.md "Several instances"): two
// gateways on one real Redis (`routing.store`); an account refusal seen by one keeps the other's
// requests off that upstream too; after a shared open, one trial goes to it for the whole cluster while
// the other instance's requests go elsewhere. A Redis that cannot be reached (a client pointed at a closed port)
// leaves each instance with its own health: requests keep being answered. Runs when REDIS_URL is set.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Redis, type RedisOptions } from 'ioredis';
import request from 'supertest';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Upstream } from '../../lib/index.js';
import { type FakeLlm, chatCompletion, startFakeLlm } from '../helpers/fake-llm.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { removeRedisKeys } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.REDIS_URL;
const ask = { model: 'x-chat', messages: [{ role: 'user', content: 'hi' }] };

const upstreamOf = (fake: FakeLlm, apiKey: string): Upstream => ({ provider: 'openai', baseURL: fake.baseURL, apiKey, model: 'up-chat' });
// DashScope's compatible mode: a vendor without a free read, whose trial is a caller's request ("The trial")
const compatibleOf = (fake: FakeLlm, apiKey: string): Upstream => ({ provider: 'dashscope', baseURL: fake.origin, apiKey, model: 'up-chat' });
const unavailable = (_request: unknown, res: ServerResponse) => sendJson(res, 503, { error: { message: 'scripted 503', type: 'server_error', param: null, code: null } });
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

/**
 * Waits until `count` instances listen on the prefix's channel: a state published before an instance
 * subscribed never reaches it (its subscription is made when the router is created, and completes later).
 */
async function subscribed(prefix: string, count = 2): Promise<void> {
  const reader = client(REDIS_URL!);
  await expect.poll(async () => Number(((await reader.call('PUBSUB', 'NUMSUB', `${prefix}changes`)) as [string, number])[1]), { timeout: 15_000, interval: 20 }).toBeGreaterThanOrEqual(count);
}

/** Two gateway instances sharing health through one Redis prefix, in front of two fake upstreams a and b. */
async function twoInstancesOnOneRedis() {
  const prefix = `gw:test:health:${randomBytes(4).toString('hex')}:`;
  onTestFinished(() => removeRedisKeys(REDIS_URL!, [`${prefix}*`]));
  const gateway = await gatewayWith({
    fakes: { a: startFakeLlm, b: startFakeLlm },
    resolve: (_input, { a, b }) => [upstreamOf(a, 'sk-operator-a'), upstreamOf(b, 'sk-operator-b')],
    routing: { store: client(REDIS_URL!), prefix },
  });
  const other = gateway.variant({ routing: { store: client(REDIS_URL!), prefix } });
  await subscribed(prefix);
  return { gateway, other, prefix };
}

describe.runIf(Boolean(REDIS_URL))('upstream health on Redis', () => {
  it("two instances on one Redis: an account refusal seen by one keeps the other's requests off that upstream", async () => {
    const { gateway, other, prefix } = await twoInstancesOnOneRedis();
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

  it('after a shared open, the half-open trial of a vendor without a free read is one request for the whole cluster; its success closes the upstream on both instances', async () => {
    const prefix = `gw:test:health:${randomBytes(4).toString('hex')}:`;
    onTestFinished(() => removeRedisKeys(REDIS_URL!, [`${prefix}*`]));
    // one clock the spec moves, for both instances: the cooldown ends on both at once
    let time = Date.UTC(2026, 0, 1);
    const now = () => time;
    // one caller's 503s open it for everyone here (minCallers 1): the spec is about the trial
    const routing = (store: Redis) => ({ store, prefix, now, breaker: { failures: 2, cooldownSeconds: 30, minCallers: 1 } });
    const gateway = await gatewayWith({
      fakes: { a: startFakeLlm, b: startFakeLlm },
      resolve: (_input, { a, b }) => [compatibleOf(a, 'sk-operator-a'), compatibleOf(b, 'sk-operator-b')],
      routing: routing(client(REDIS_URL!)),
    });
    const other = gateway.variant({ routing: routing(client(REDIS_URL!)) });
    await subscribed(prefix);
    const { a, b } = gateway.fakes;
    const stateOf = (instance: typeof other) => instance.router.health().find((entry) => entry.upstream.baseURL === a.origin)?.state;
    expect((await chat(other.app)).status).toBe(200);
    expect(a.apiRequests()).toHaveLength(1);

    // two 503s on the first instance open a there; the other instance hears it
    a.next(unavailable);
    a.next(unavailable);
    for (let call = 0; call < 2; call++) expect((await chat(gateway.app)).status).toBe(200);
    expect(a.apiRequests()).toHaveLength(3);
    await expect.poll(() => stateOf(other), { timeout: 15_000 }).toBe('open');

    // the trial is held at a until the spec lets it answer
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    a.next(async (_request, res) => {
      await held;
      sendJson(res, 200, chatCompletion('up-chat', 'recovered'));
    });
    // the cooldown ends: requests on the two instances in turn, until one of them is the trial at a
    time += 30_000;
    let sent = 0;
    let trial: Promise<request.Response> | undefined;
    await expect
      .poll(
        async () => {
          const reply = chat([gateway, other][sent++ % 2]!.app, KEY_B).then((response) => response);
          const first = await Promise.race([
            reply,
            expect
              .poll(() => a.apiRequests().length, { timeout: 10_000 })
              .toBe(4)
              .then(() => undefined),
          ]);
          if (first === undefined && a.apiRequests().length === 4) trial = reply;
          else expect(first?.status).toBe(200);
          return a.apiRequests().length;
        },
        { timeout: 15_000, interval: 50 },
      )
      .toBe(4);
    // while it runs, both instances send everything else to b: one trial for the cluster
    for (let call = 0; call < 6; call++) expect((await chat([gateway, other][call % 2]!.app, KEY_B)).status).toBe(200);
    expect(a.apiRequests()).toHaveLength(4);
    expect(b.apiRequests()).toHaveLength(2 + sent - 1 + 6);
    answer();
    expect((await trial)?.status).toBe(200);
    // the trial answered: closed on both instances, and the other one never sent a trial of its own
    await expect.poll(() => [stateOf(gateway), stateOf(other)], { timeout: 15_000 }).toEqual(['closed', 'closed']);
    expect(a.apiRequests()).toHaveLength(4);

    // both instances use a again
    for (const instance of [gateway, other]) expect((await chat(instance.app)).status).toBe(200);
    expect(a.apiRequests()).toHaveLength(6);
    expect(b.apiRequests()).toHaveLength(2 + sent - 1 + 6);
  });

  it('with a free read, the trial is one GET /models for the whole cluster, made by the gateway; its success closes the upstream on both instances', async () => {
    const prefix = `gw:test:health:${randomBytes(4).toString('hex')}:`;
    onTestFinished(() => removeRedisKeys(REDIS_URL!, [`${prefix}*`]));
    let time = Date.UTC(2026, 0, 1);
    const now = () => time;
    const routing = (store: Redis) => ({ store, prefix, now, breaker: { failures: 2, cooldownSeconds: 30, minCallers: 1 } });
    const gateway = await gatewayWith({
      fakes: { a: startFakeLlm, b: startFakeLlm },
      resolve: (_input, { a, b }) => [upstreamOf(a, 'sk-operator-a'), upstreamOf(b, 'sk-operator-b')],
      routing: routing(client(REDIS_URL!)),
    });
    const other = gateway.variant({ routing: routing(client(REDIS_URL!)) });
    await subscribed(prefix);
    const { a } = gateway.fakes;
    const stateOf = (instance: typeof other) => instance.router.health().find((entry) => entry.upstream.baseURL === a.baseURL)?.state;
    const reads = () => a.requests.filter((recorded) => recorded.method === 'GET' && recorded.path === '/v1/models');
    // both instances have called a (each holds its key for a read)
    for (const instance of [gateway, other]) expect((await chat(instance.app)).status).toBe(200);
    a.next(unavailable);
    a.next(unavailable);
    for (let call = 0; call < 2; call++) expect((await chat(gateway.app)).status).toBe(200);
    await expect.poll(() => stateOf(other), { timeout: 15_000 }).toBe('open');

    time += 30_000;
    // requests on both instances at once: one read for the cluster, every request answered
    const replies = await Promise.all([0, 1, 2, 3].map((index) => chat([gateway, other][index % 2]!.app)));
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200]);
    await expect.poll(() => [stateOf(gateway), stateOf(other)], { timeout: 15_000 }).toEqual(['closed', 'closed']);
    expect(reads()).toHaveLength(1);
  });

  it("one caller's own failures open the upstream for that caller alone, on every instance; the other tenants still reach it", async () => {
    const { gateway, other, prefix } = await twoInstancesOnOneRedis();
    const { a, b } = gateway.fakes;
    const healthOfA = (instance: typeof other) => instance.router.health().find((entry) => entry.upstream.baseURL === a.baseURL);
    // the other instance has subscribed and knows a
    expect((await chat(other.app, KEY_B)).status).toBe(200);
    expect(a.apiRequests()).toHaveLength(1);

    const serverError = (_request: unknown, res: ServerResponse) => sendJson(res, 500, { error: { message: 'scripted 500', type: 'server_error', param: null, code: null } });
    for (let failure = 0; failure < 5; failure++) a.next(serverError);
    for (let call = 0; call < 5; call++) expect((await chat(gateway.app, KEY_A)).status).toBe(502);
    await expect.poll(() => healthOfA(other)?.openFor?.map((entry) => entry.caller), { timeout: 15_000 }).toEqual(['tenant-a']);
    for (const instance of [gateway, other]) {
      expect(healthOfA(instance)?.state).toBe('closed');
      // tenant-a goes to b on both instances; tenant-b still reaches a on both
      expect((await chat(instance.app, KEY_A)).status).toBe(200);
      expect((await chat(instance.app, KEY_B)).status).toBe(200);
    }
    expect(a.apiRequests()).toHaveLength(8);
    expect(b.apiRequests()).toHaveLength(2);
    // nothing was written to the shared hash: no instance starting later reads a as open
    expect(await client(REDIS_URL!).hgetall(`${prefix}state`)).toEqual({});
  });

  it.each([
    { name: 'a claim that lapsed and was taken by another instance is left to that instance', takenMeanwhile: true },
    { name: 'a claim still its own is freed once the trial answered', takenMeanwhile: false },
  ])('the trial claim is freed by compare-and-delete: $name', async ({ takenMeanwhile }) => {
    const prefix = `gw:test:health:${randomBytes(4).toString('hex')}:`;
    onTestFinished(() => removeRedisKeys(REDIS_URL!, [`${prefix}*`]));
    let time = Date.UTC(2026, 0, 1);
    const gateway = await gatewayWith({
      fakes: { a: startFakeLlm, b: startFakeLlm },
      resolve: (_input, { a, b }) => [upstreamOf(a, 'sk-operator-a'), upstreamOf(b, 'sk-operator-b')],
      routing: { store: client(REDIS_URL!), prefix, now: () => time },
    });
    const { a } = gateway.fakes;
    const redis = client(REDIS_URL!);
    // the instance's messages, in the order its one connection sent them: once its 'closed' is heard,
    // the command that freed (or kept) the claim, sent before it, has run
    const listener = client(REDIS_URL!);
    const heard: string[] = [];
    listener.on('message', (_channel: string, message: string) => heard.push(message));
    await listener.subscribe(`${prefix}changes`);

    // an account refusal opens a; once its cooldown is over, the instance claims the trial
    a.next(forbidden);
    expect((await chat(gateway.app)).status).toBe(200);
    time += 300_000;
    let arrived!: () => void;
    const atA = new Promise<'a'>((resolve) => (arrived = () => resolve('a')));
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    a.next(async (_request, res) => {
      arrived();
      await held;
      sendJson(res, 200, chatCompletion('up-chat', 'recovered'));
    });
    // requests go to b until Redis has answered the claim; then one is the trial, held at a
    let trial: Promise<request.Response> | undefined;
    for (let sent = 0; sent < 100 && !trial; sent++) {
      const reply = chat(gateway.app).then((response) => response);
      if ((await Promise.race([reply.then(() => 'b' as const), atA])) === 'a') trial = reply;
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(trial).toBeDefined();
    const [claimKey] = await redis.keys(`${prefix}trial:*`);
    expect(claimKey).toBeDefined();
    // its lease ran out and another instance claimed the trial meanwhile
    if (takenMeanwhile) await redis.set(claimKey!, 'another-instance', 'PX', 60_000);
    answer();
    expect((await trial)?.status).toBe(200);
    await expect.poll(() => heard.some((message) => (JSON.parse(message) as { state: string }).state === 'closed'), { timeout: 15_000 }).toBe(true);
    expect(await redis.get(claimKey!)).toBe(takenMeanwhile ? 'another-instance' : null);
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
