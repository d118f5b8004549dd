// Redis given once (docs/configuration.md "redis", docs/deployment.md "Several instances"): two gateway
// instances on one `redis` share task records, Idempotency-Keys, quota counters, upstream health,
// strikes and the task scheduler, each under its namespace of the one prefix; a concern given a store
// or a prefix of its own uses that instead; the default prefix `gw:` writes the keys each concern
// always wrote. The fake image upstream's count of paid work is checked against the usage events.
// Runs when REDIS_URL is set (.ci/run always sets it).
import { createHash, randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import request from 'supertest';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type GatewayOptions, type ModerationPolicy, type ResolveUpstream, type UsageEvent, memoryIdempotencyStore, memoryScheduler, memoryTaskStore, staticKeys } from '../../lib/index.js';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.js';
import { type FakePaidImages, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { removeRedisKeys } from '../helpers/redis-keys.js';

const REDIS_URL = process.env.REDIS_URL;
const image = { model: 'x-image-2.0', prompt: 'a lighthouse' };
const chat = { model: 'x-chat', messages: [{ role: 'user', content: 'hi' }] };
const fakes = { images: startFakePaidImages, llm: startFakeLlm };

// images to DashScope's multimodal generation, chat to an OpenAI-compatible upstream
const resolve = ({ route }: Parameters<ResolveUpstream>[0], { images, llm }: { images: FakePaidImages; llm: FakeLlm }): ReturnType<ResolveUpstream> => {
  if (route.startsWith('images.')) return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-2.0' };
  if (route === 'chat.completions') return { provider: 'openai', baseURL: llm.baseURL, apiKey: 'sk-operator', model: 'up-chat' };
  return null;
};
const accountDisabled = (_request: unknown, res: ServerResponse) => sendJson(res, 403, { error: { message: 'account disabled', type: 'invalid_request_error', param: null, code: null } });
const moderation: ModerationPolicy = {
  check: ({ text }) => (/forbidden/.test(text ?? '') ? { flagged: true, categories: ['house-rules'] } : { flagged: false, categories: [] }),
  maxStrikes: 2,
};
// the test gateways turn the breaker off; these specs share its states
const routing = { breaker: { failures: 5 } };

/** A client of this test, disconnected when it ends (the gateway never closes it). */
function client(): Redis {
  const made = new Redis(REDIS_URL!, { maxRetriesPerRequest: 1 });
  onTestFinished(() => {
    made.disconnect();
  });
  return made;
}

/** A prefix of this test's own, its keys removed when it ends. */
function testPrefix(): string {
  const prefix = `gwtest:shared-${randomBytes(4).toString('hex')}:`;
  onTestFinished(() => removeRedisKeys(REDIS_URL!, [`${prefix}*`]));
  return prefix;
}

/** The namespaces of the keys under `prefix`: `task`, `idem`, `quota`, ..., and `bull` for BullMQ's. */
async function namespacesUnder(prefix: string): Promise<string[]> {
  const keys = await client().keys(`${prefix}*`);
  return [...new Set(keys.map((key) => /^(bull|[a-z-]+:)/.exec(key.slice(prefix.length))?.[1] ?? key))].sort();
}

const imagesOf = (events: UsageEvent[]): number => events.reduce((sum, event) => sum + event.images, 0);
const post = (app: Parameters<typeof request>[0], path: string, key = KEY_A) => request(app).post(path).set('Authorization', `Bearer ${key}`);

describe.runIf(Boolean(REDIS_URL))('Redis given once: the redis option', () => {
  it('two instances on one redis share tasks, Idempotency-Keys, quotas, strikes, upstream health and the scheduler', async () => {
    const prefix = testPrefix();
    const shared = (redis: Redis): Partial<GatewayOptions> => ({ redis: { client: redis, prefix }, tenancy: { quotas: { limits: { imagesPerMinute: 4 } } }, moderation, routing });
    const gw = await gatewayWith({ fakes, resolve, ...shared(client()) });
    const otherClient = client();
    const other = gw.variant(shared(otherClient));
    const { images, llm } = gw.fakes;

    // a task made on one instance is answered by the other, to its owner only
    const task = await post(gw.app, '/v1/images/generations').set('Prefer', 'respond-async').send(image);
    expect(task.status).toBe(202);
    await expect.poll(async () => (await request(other.app).get(`/v1/images/tasks/${task.body.id}`).set('Authorization', `Bearer ${KEY_A}`)).body.status, { timeout: 10_000 }).toBe('succeeded');
    expect((await request(other.app).get(`/v1/images/tasks/${task.body.id}`).set('Authorization', `Bearer ${KEY_B}`)).status).toBe(404);

    // an Idempotency-Key taken on one instance replays on the other: the upstream is called once
    const first = await post(gw.app, '/v1/images/generations').set('Idempotency-Key', 'shared-key-1').send(image);
    const replay = await post(other.app, '/v1/images/generations').set('Idempotency-Key', 'shared-key-1').send(image);
    expect([first.status, replay.status, replay.headers['idempotent-replayed']]).toEqual([200, 200, 'true']);
    expect(replay.body).toEqual(first.body);
    expect(images.started()).toBe(2);

    // one quota budget: both instances count the same two images, and the fifth image is refused
    const remaining = async (router: typeof gw.router) => (await router.quota({ id: 'tenant-a' })).find((state) => state.name === 'images')?.remaining;
    expect([await remaining(gw.router), await remaining(other.router)]).toEqual([2, 2]);
    expect((await post(other.app, '/v1/images/generations').send(image)).status).toBe(200);
    expect((await post(gw.app, '/v1/images/generations').send(image)).status).toBe(200);
    const refused = await post(other.app, '/v1/images/generations').send(image);
    expect([refused.status, refused.body.error?.code]).toEqual([429, 'rate_limit_exceeded']);
    expect(images.started()).toBe(4);

    // strikes: one flagged prompt on each instance suspends the tenant on both
    expect((await post(gw.app, '/v1/images/generations', KEY_B).send({ ...image, prompt: 'forbidden one' })).status).toBe(400);
    expect((await post(other.app, '/v1/images/generations', KEY_B).send({ ...image, prompt: 'forbidden two' })).status).toBe(400);
    const suspended = await post(gw.app, '/v1/images/generations', KEY_B).send(image);
    expect([suspended.status, suspended.body.error?.code]).toEqual([403, 'tenant_suspended']);
    expect(images.started()).toBe(4);

    // upstream health: an account refusal seen by one instance keeps the other's requests off it
    expect((await post(other.app, '/v1/chat/completions').send(chat)).status).toBe(200);
    llm.next(accountDisabled);
    expect((await post(gw.app, '/v1/chat/completions').send(chat)).status).toBe(502);
    await expect.poll(() => other.router.health().find((entry) => entry.upstream.baseURL === llm.baseURL)?.state, { timeout: 15_000 }).toBe('open');
    const unavailable = await post(other.app, '/v1/chat/completions').send(chat);
    expect([unavailable.status, unavailable.body.error?.code]).toEqual([503, 'upstream_unavailable']);
    expect(llm.apiRequests()).toHaveLength(2);

    // the books: every image the upstream made is in one usage event, on one instance or the other
    await expect.poll(() => imagesOf([...gw.usage, ...other.usage])).toBe(images.imagesMade());
    expect(images.imagesMade()).toBe(4);

    // every concern under the one prefix, the scheduler's BullMQ queue included
    expect(await namespacesUnder(prefix)).toEqual(['bull', 'health:', 'idem:', 'quota:', 'strikes:', 'task:']);
    expect(await otherClient.keys(`${prefix}bull:gateway-tasks:*`)).not.toEqual([]);

    // the gateway closes what it opened, never the client it was given
    await other.close();
    expect([otherClient.status, await otherClient.ping()]).toEqual(['ready', 'PONG']);
  }, 60_000);

  it("a concern given its own store or prefix uses it, not the redis option's", async () => {
    const prefix = testPrefix();
    const quotaPrefix = `${prefix}own-quota:`;
    const strikePrefix = `${prefix}own-strikes:`;
    const overridden = (redis: Redis): Partial<GatewayOptions> => ({
      redis: { client: redis, prefix },
      store: memoryTaskStore(),
      idempotency: { store: memoryIdempotencyStore() },
      callbacks: { scheduler: memoryScheduler() },
      tenancy: { quotas: { limits: { imagesPerMinute: 10 }, prefix: quotaPrefix } },
      moderation: { ...moderation, prefix: strikePrefix },
    });
    const gw = await gatewayWith({ fakes, resolve, ...overridden(client()) });
    const other = gw.variant(overridden(client()));
    const { images } = gw.fakes;

    // each instance's own task store: the other does not know the task
    const task = await post(gw.app, '/v1/images/generations').set('Prefer', 'respond-async').send(image);
    expect(task.status).toBe(202);
    await expect.poll(async () => (await request(gw.app).get(`/v1/images/tasks/${task.body.id}`).set('Authorization', `Bearer ${KEY_A}`)).body.status, { timeout: 10_000 }).toBe('succeeded');
    expect((await request(other.app).get(`/v1/images/tasks/${task.body.id}`).set('Authorization', `Bearer ${KEY_A}`)).status).toBe(404);

    // each instance's own Idempotency-Keys: the same key runs on each
    const first = await post(gw.app, '/v1/images/generations').set('Idempotency-Key', 'own-key-1').send(image);
    const second = await post(other.app, '/v1/images/generations').set('Idempotency-Key', 'own-key-1').send(image);
    expect([first.status, second.status, second.headers['idempotent-replayed']]).toEqual([200, 200, undefined]);
    expect(images.started()).toBe(3);

    // quotas and strikes still on the shared client, under the prefixes given
    const remaining = async (router: typeof gw.router) => (await router.quota({ id: 'tenant-a' })).find((state) => state.name === 'images')?.remaining;
    expect([await remaining(gw.router), await remaining(other.router)]).toEqual([7, 7]);
    expect((await post(other.app, '/v1/images/generations', KEY_B).send({ ...image, prompt: 'forbidden' })).status).toBe(400);
    expect(await client().get(`${strikePrefix}tenant-b`)).toBe('1');

    await expect.poll(() => imagesOf([...gw.usage, ...other.usage])).toBe(images.imagesMade());
    expect(images.imagesMade()).toBe(3);
    expect(await namespacesUnder(prefix)).toEqual(['own-quota:', 'own-strikes:']);
  }, 60_000);

  it("the default prefix 'gw:' writes the keys each concern always wrote", async () => {
    // a tenant of this run's own: its keys are told apart from any other run's on this Redis
    const tenant = `tenant-${randomBytes(4).toString('hex')}`;
    const redis = client();
    const gw = await gatewayWith({
      fakes,
      resolve,
      verifyKey: staticKeys({ [KEY_A]: { id: tenant } }),
      redis: { client: redis },
      // BullMQ's default queue on this Redis would be joined by any other run of this spec: polls here stay in this process
      callbacks: { scheduler: memoryScheduler() },
      tenancy: { quotas: { limits: { imagesPerMinute: 10 } } },
      moderation,
      routing,
    });
    const { llm } = gw.fakes;
    const idempotencyKey = `gw:idem:${createHash('sha256').update(`${tenant}\0images.generations\0default-key-1`).digest('base64url')}`;
    let taskKey = '';
    let healthField: string | undefined;
    onTestFinished(async () => {
      await removeRedisKeys(REDIS_URL!, [`gw:*${tenant}*`, taskKey || 'gw:task:none', idempotencyKey]);
      if (healthField) await redis.hdel('gw:health:state', healthField);
    });

    const task = await post(gw.app, '/v1/images/generations').set('Prefer', 'respond-async').send(image);
    expect(task.status).toBe(202);
    taskKey = `gw:task:${task.body.id}`;
    expect((await post(gw.app, '/v1/images/generations').set('Idempotency-Key', 'default-key-1').send(image)).status).toBe(200);
    expect((await post(gw.app, '/v1/images/generations').send({ ...image, prompt: 'forbidden' })).status).toBe(400);
    llm.next(accountDisabled);
    expect((await post(gw.app, '/v1/chat/completions').send(chat)).status).toBe(502);

    expect(await redis.exists(taskKey, idempotencyKey, `gw:quota:images:${tenant}`, `gw:strikes:${tenant}`)).toBe(4);
    await expect
      .poll(async () => {
        const states = await redis.hgetall('gw:health:state');
        healthField = Object.keys(states).find((field) => states[field]!.includes(llm.baseURL));
        return healthField !== undefined;
      })
      .toBe(true);
  }, 60_000);

  it('a redis prefix that is empty is refused at creation, with the fix', () => {
    const make = () => gatewayWith({ redis: { client: client(), prefix: '' } });
    return expect(make()).rejects.toThrow(/^options\.redis\.prefix must be a non-empty string\.\nFix: redis: \{ client, prefix: 'images-eu:' \}$/);
  });
});
