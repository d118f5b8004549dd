// The delivery log (docs/video-tasks-and-callbacks.md "Delivery log"), over real HTTP: image tasks call
// back a real receiver on port 0 that fails and then takes them; every delivery and attempt is then
// read by its tenant (GET /v1/deliveries) and the operator (router.deliveries), nothing secret in it,
// and replayed with the same webhook-id, a fresh signature and `webhook-replay: true`.
import type { ServerResponse } from 'node:http';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { type GatewayOptions, type Logger, memoryTaskStore, type TaskStore } from '../../lib/index.js';
import { OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { type FakeUpstream, type RecordedRequest, startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { type GatewayFixture, gatewayWith } from '../helpers/gateway-with.js';

const MODEL = 'x-image-2.0';
const SECRET = 'whsec_' + Buffer.from('delivery-log-signing-secret-0123456789').toString('base64');
const RECEIVER_TOKEN = 'receiver-own-token-5f2a';
const LONG_ANSWER = 'x'.repeat(2_000);

type Fixture = GatewayFixture<{ images: typeof startFakePaidImages }>;

function start(options: Partial<GatewayOptions> = {}): Promise<Fixture> {
  return gatewayWith(
    {
      fakes: { images: startFakePaidImages },
      resolve: (_input, { images }) => ({ provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-2.0' }),
      callbacks: { signingSecret: SECRET, allowLocal: true, retryBaseMs: 10, retryMaxMs: 40, maxAttempts: 3 },
    },
    options,
  );
}

/** A receiver that fails the first `failures[status]` deliveries of each task state with a 500 and a long body, then answers 200. */
interface Receiver extends FakeUpstream {
  failures: Record<string, number>;
  /** Fail everything while true (an endpoint that is down). */
  down: boolean;
  url: string;
  /** The requests answered 2xx. */
  taken(): RecordedRequest[];
}

async function startReceiver(failures: Record<string, number> = {}): Promise<Receiver> {
  const answered = new Map<RecordedRequest, number>();
  // eslint-disable-next-line prefer-const -- assigned once, after the server it is read from exists
  let receiver: Receiver | undefined;
  const fake = await startFakeUpstream((req: RecordedRequest, res: ServerResponse) => {
    const status = String((req.json as { status?: unknown } | undefined)?.status);
    const left = receiver!.failures[status] ?? 0;
    if (receiver!.down || left > 0) {
      if (left > 0) receiver!.failures[status] = left - 1;
      answered.set(req, 500);
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(LONG_ANSWER);
      return;
    }
    answered.set(req, 200);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
  receiver = Object.assign(fake, {
    failures: { ...failures },
    down: false,
    url: `${fake.origin}/hooks/image?token=${RECEIVER_TOKEN}`,
    taken: () => fake.requests.filter((req) => answered.get(req) === 200),
  });
  return receiver;
}

const auth = (key = KEY_A) => ({ Authorization: `Bearer ${key}` });

async function submitTask(gw: Fixture, callbackUrl: string, key = KEY_A): Promise<string> {
  const res = await request(gw.app).post(OPENAI_IMAGES).set(auth(key)).set('Prefer', 'respond-async').send({ model: MODEL, prompt: 'a lighthouse', callback_url: callbackUrl });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

interface ListBody {
  object: string;
  data: Array<Record<string, unknown> & { id: string; state: string; event: string }>;
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

async function listOf(gw: Fixture, query = '', key = KEY_A): Promise<ListBody> {
  const res = await request(gw.app).get(`/v1/deliveries${query}`).set(auth(key));
  expect(res.status).toBe(200);
  return res.body as ListBody;
}

/** Waits until every delivery of the task is in a settled state (not pending). */
async function settled(gw: Fixture, taskId: string, count: number): Promise<ListBody> {
  let list: ListBody | undefined;
  await expect
    .poll(
      async () => {
        list = await listOf(gw, `?task_id=${taskId}`);
        return list.data.length === count && list.data.every((delivery) => delivery.state !== 'pending');
      },
      { timeout: 10_000, interval: 20 },
    )
    .toBe(true);
  return list!;
}

const headersOf = (req: RecordedRequest): Record<string, string> => Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)]));

describe('recording', () => {
  it('records each delivery and every attempt: status codes, 1 KB of each answer, durations; the query string and the secret never shown', async () => {
    const receiver = await startReceiver({ succeeded: 2 });
    try {
      const gw = await start();
      const taskId = await submitTask(gw, receiver.url);
      const list = await settled(gw, taskId, 2);
      expect(list).toMatchObject({ object: 'list', has_more: false });
      expect(list.first_id).toBe(list.data[0]!.id);
      expect(list.last_id).toBe(list.data.at(-1)!.id);
      expect(list.data.map((delivery) => delivery.event).sort()).toEqual(['running', 'succeeded']);

      const succeeded = list.data.find((delivery) => delivery.event === 'succeeded')!;
      const res = await request(gw.app).get(`/v1/deliveries/${succeeded.id}`).set(auth());
      expect(res.status).toBe(200);
      const sent = receiver.requests.filter((req) => req.headers['webhook-id'] === succeeded.id);
      expect(sent).toHaveLength(3);
      expect(res.body).toMatchObject({
        object: 'delivery',
        id: succeeded.id,
        task_id: taskId,
        tenant: 'tenant-a',
        event: 'succeeded',
        url: `${receiver.origin}/hooks/image`,
        state: 'delivered',
        attempt_count: 3,
        body: sent[0]!.json,
      });
      const attempts = res.body.attempts as Array<Record<string, unknown>>;
      expect(attempts.map((attempt) => attempt.status_code)).toEqual([500, 500, 200]);
      expect(attempts[0]!.response).toBe(LONG_ANSWER.slice(0, 1024));
      expect(attempts[2]!.response).toBe('ok');
      for (const attempt of attempts) {
        expect(attempt).toMatchObject({ error: null, replay: false });
        expect(typeof attempt.duration_ms).toBe('number');
        expect(typeof attempt.attempted_at).toBe('number');
      }
      expect(res.body.last_attempt).toStrictEqual(attempts[2]);

      const running = list.data.find((delivery) => delivery.event === 'running')!;
      expect(running).toMatchObject({ state: 'delivered', attempt_count: 1 });
      // nothing secret, in the tenant's view or the operator's
      const operator = await gw.router.deliveries.get(succeeded.id);
      expect(operator).toStrictEqual(res.body);
      for (const shown of [JSON.stringify(res.body), JSON.stringify(list), JSON.stringify(operator)]) {
        expect(shown).not.toContain(RECEIVER_TOKEN);
        expect(shown).not.toContain(SECRET.slice('whsec_'.length));
        expect(shown).not.toContain('sk-up');
      }
    } finally {
      await receiver.close();
    }
  });

  it('an attempt that got no answer records the error, without the query string', async () => {
    const gw = await start({ callbacks: { signingSecret: SECRET, allowLocal: true, retryBaseMs: 10, retryMaxMs: 40, maxAttempts: 2 } });
    // a port nothing listens on: connection refused
    const receiver = await startReceiver();
    const closedUrl = receiver.url;
    await receiver.close();
    const taskId = await submitTask(gw, closedUrl);
    const list = await settled(gw, taskId, 2);
    const succeeded = list.data.find((delivery) => delivery.event === 'succeeded')!;
    expect(succeeded.state).toBe('failed');
    const detail = (await request(gw.app).get(`/v1/deliveries/${succeeded.id}`).set(auth())).body as { attempts: Array<Record<string, unknown>> };
    expect(detail.attempts).toHaveLength(2);
    for (const attempt of detail.attempts) {
      expect(attempt.status_code).toBeNull();
      expect(attempt.response).toBeNull();
      expect(typeof attempt.error).toBe('string');
      expect(String(attempt.error)).not.toContain(RECEIVER_TOKEN);
    }
  });
});

describe("a tenant's own deliveries only", () => {
  it("another tenant's delivery is 404 to read or replay, an after that is not its own is 400, bad limits and states are 400; nothing is sent", async () => {
    const receiver = await startReceiver();
    try {
      const gw = await start();
      const taskId = await submitTask(gw, receiver.url);
      const list = await settled(gw, taskId, 2);
      const id = list.data[0]!.id;
      const before = receiver.requests.length;

      expect((await listOf(gw, '', KEY_B)).data).toStrictEqual([]);
      const notFound = { error: { message: 'No such delivery', type: 'invalid_request_error', code: 'not_found', param: null } };
      for (const res of [
        await request(gw.app).get(`/v1/deliveries/${id}`).set(auth(KEY_B)),
        await request(gw.app).post(`/v1/deliveries/${id}/replay`).set(auth(KEY_B)),
        await request(gw.app).get('/v1/deliveries/evt_unknown').set(auth()),
        await request(gw.app)
          .get(`/v1/deliveries/${'x'.repeat(300)}`)
          .set(auth()),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toStrictEqual(notFound);
      }
      const bad = async (query: string, param: string, key = KEY_A): Promise<void> => {
        const res = await request(gw.app).get(`/v1/deliveries${query}`).set(auth(key));
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request_error', param });
      };
      await bad(`?after=${id}`, 'after', KEY_B);
      await bad('?after=evt_unknown', 'after');
      for (const limit of ['0', '101', 'abc', '1.5', '-1', '']) await bad(`?limit=${limit}`, 'limit');
      await bad('?limit=1&limit=2', 'limit');
      await bad('?state=lost', 'state');
      const bulk = await request(gw.app).post('/v1/deliveries/replay').set(auth()).send({ state: 'lost' });
      expect(bulk.status).toBe(400);
      expect(bulk.body.error.param).toBe('state');
      const noState = await request(gw.app).post('/v1/deliveries/replay').set(auth()).send({});
      expect(noState.status).toBe(400);
      expect(noState.body.error.param).toBe('state');
      const badSince = await request(gw.app).post('/v1/deliveries/replay').set(auth()).send({ state: 'failed', since: 'yesterday' });
      expect(badSince.status).toBe(400);
      expect(badSince.body.error.param).toBe('since');
      expect((await request(gw.app).get('/v1/deliveries')).status).toBe(401);
      expect(receiver.requests).toHaveLength(before);
    } finally {
      await receiver.close();
    }
  });

  it('pages newest first with limit and after, OpenAI style', async () => {
    const receiver = await startReceiver();
    try {
      const gw = await start();
      const tasks = [await submitTask(gw, receiver.url), await submitTask(gw, receiver.url)];
      for (const taskId of tasks) await settled(gw, taskId, 2);
      const all = await listOf(gw);
      expect(all.data).toHaveLength(4);
      const created = all.data.map((delivery) => delivery.created_at as number);
      expect([...created].sort((a, b) => b - a)).toStrictEqual(created);
      const first = await listOf(gw, '?limit=3');
      expect(first).toMatchObject({ has_more: true, first_id: all.data[0]!.id, last_id: all.data[2]!.id });
      const second = await listOf(gw, `?limit=3&after=${first.last_id}`);
      expect(second).toMatchObject({ has_more: false, data: [all.data[3]] });
      expect((await listOf(gw, `?state=delivered&task_id=${tasks[0]}`)).data.map((delivery) => delivery.task_id)).toStrictEqual([tasks[0], tasks[0]]);
      expect((await listOf(gw, '?state=failed')).data).toStrictEqual([]);
    } finally {
      await receiver.close();
    }
  });
});

describe('replays', () => {
  it('a replay sends the recorded body with the same webhook-id, a fresh timestamp and signature and webhook-replay: true, recorded as a new attempt', async () => {
    const receiver = await startReceiver();
    try {
      const gw = await start();
      const taskId = await submitTask(gw, receiver.url);
      const list = await settled(gw, taskId, 2);
      // the `running` state: the task has long moved past it, and a replay sends it all the same
      const running = list.data.find((delivery) => delivery.event === 'running')!;
      const original = receiver.requests.find((req) => req.headers['webhook-id'] === running.id)!;

      const res = await request(gw.app).post(`/v1/deliveries/${running.id}/replay`).set(auth());
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ id: running.id, state: 'pending' });
      await expect.poll(() => receiver.requests.filter((req) => req.headers['webhook-id'] === running.id).length).toBe(2);
      const replayed = receiver.requests.filter((req) => req.headers['webhook-id'] === running.id)[1]!;
      expect(replayed.body.equals(original.body)).toBe(true);
      expect(replayed.headers['webhook-replay']).toBe('true');
      expect(original.headers['webhook-replay']).toBeUndefined();
      // signed when it was sent: the timestamp is the replay's own (whole seconds, so it may equal the first's)
      expect(Number(replayed.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(Number(original.headers['webhook-timestamp']));
      expect(() => new Webhook(SECRET).verify(replayed.body.toString('utf8'), headersOf(replayed))).not.toThrow();

      await expect.poll(async () => (await gw.router.deliveries.get(running.id))?.state).toBe('delivered');
      const detail = (await gw.router.deliveries.get(running.id))!;
      expect(detail.attempts.map((attempt) => [attempt.status_code, attempt.replay])).toStrictEqual([
        [200, false],
        [200, true],
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('an endpoint down for a while: its deliveries become dead letters, and one bulk replay sends each once per webhook-id', async () => {
    const receiver = await startReceiver();
    try {
      const gw = await start();
      receiver.down = true;
      const tasks = [await submitTask(gw, receiver.url), await submitTask(gw, receiver.url)];
      for (const taskId of tasks) await settled(gw, taskId, 2);
      const failed = (await listOf(gw, '?state=failed')).data;
      // every terminal state is a dead letter; a `running` one failed or was dropped once its task moved on
      expect(failed.filter((delivery) => delivery.event === 'succeeded')).toHaveLength(2);
      expect(receiver.taken()).toHaveLength(0);

      receiver.down = false;
      const res = await request(gw.app).post('/v1/deliveries/replay').set(auth()).send({ state: 'failed' });
      expect(res.status).toBe(202);
      expect(res.body).toStrictEqual({ object: 'delivery.replay', state: 'failed', queued: failed.length });
      // asked again at once: they are pending (queued) now, so nothing is queued twice
      const again = await request(gw.app).post('/v1/deliveries/replay').set(auth()).send({ state: 'failed' });
      expect(again.body).toStrictEqual({ object: 'delivery.replay', state: 'failed', queued: 0 });
      for (const state of ['pending', 'paused']) {
        const refused = await request(gw.app).post('/v1/deliveries/replay').set(auth()).send({ state });
        expect(refused.status).toBe(400);
        expect(refused.body.error).toMatchObject({ code: 'invalid_request_error', param: 'state' });
      }
      await expect.poll(() => receiver.taken().length).toBe(failed.length);
      const ids = receiver.taken().map((req) => req.headers['webhook-id']);
      expect(new Set(ids).size).toBe(failed.length);
      expect([...ids].sort()).toStrictEqual(failed.map((delivery) => delivery.id).sort());
      await expect.poll(async () => (await listOf(gw, '?state=failed')).data.length).toBe(0);
      // tenant B's bulk replay finds none of A's
      const other = await request(gw.app).post('/v1/deliveries/replay').set(auth(KEY_B)).send({ state: 'delivered' });
      expect(other.body.queued).toBe(0);
    } finally {
      await receiver.close();
    }
  });

  it("the operator lists every tenant's deliveries by page with opaque cursors, and replayAll resends by tenant and state", async () => {
    const receiver = await startReceiver();
    try {
      const gw = await start();
      receiver.down = true;
      const a = await submitTask(gw, receiver.url, KEY_A);
      const b = await submitTask(gw, receiver.url, KEY_B);
      await settled(gw, a, 2);
      await expect.poll(async () => (await gw.router.deliveries.list({ taskId: b })).data.every((delivery) => delivery.state !== 'pending')).toBe(true);

      const everyone = await gw.router.deliveries.list();
      expect(new Set(everyone.data.map((delivery) => delivery.tenant))).toStrictEqual(new Set(['tenant-a', 'tenant-b']));
      const pages: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await gw.router.deliveries.list({ limit: 1, ...(cursor ? { cursor } : {}) });
        pages.push(...page.data.map((delivery) => delivery.id));
        cursor = page.nextCursor ?? undefined;
        if (cursor) expect(cursor).not.toContain('evt_');
      } while (cursor);
      expect(pages).toStrictEqual(everyone.data.map((delivery) => delivery.id));
      await expect(gw.router.deliveries.list({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ status: 400, param: 'cursor' });

      receiver.down = false;
      const onlyB = (await gw.router.deliveries.list({ tenant: 'tenant-b', state: 'failed' })).data;
      expect(onlyB.length).toBeGreaterThan(0);
      expect(await gw.router.deliveries.replayAll({ tenant: 'tenant-b', state: 'failed' })).toStrictEqual({ queued: onlyB.length });
      await expect.poll(() => receiver.taken().length).toBe(onlyB.length);
      expect(receiver.taken().every((req) => (req.json as { id: string }).id === b)).toBe(true);
      expect(await gw.router.deliveries.replay('evt_unknown')).toBeUndefined();
    } finally {
      await receiver.close();
    }
  });
});

describe('without the log', () => {
  it('a host store without the delivery methods: one warning at start, deliveries still made, the routes answer 404', async () => {
    const receiver = await startReceiver();
    try {
      const warnings: string[] = [];
      const logger: Logger = { info: () => undefined, warn: (_fields, message) => warnings.push(String(message)), error: () => undefined };
      const full = memoryTaskStore();
      const store: TaskStore = {
        createTask: (record) => full.createTask(record),
        getTask: (id) => full.getTask(id),
        updateTask: (id, version, changes) => full.updateTask(id, version, changes),
        putAsset: (record) => full.putAsset(record),
        getAsset: (id) => full.getAsset(id),
      };
      const gw = await start({ store, logger });
      expect(warnings.filter((message) => message.includes('delivery log'))).toHaveLength(1);
      await submitTask(gw, receiver.url);
      await expect.poll(() => receiver.taken().length).toBe(2);
      // nothing of the tenant's own to find: a 404 on every tenant route, whatever the body
      const noLog = { error: { message: 'This gateway keeps no delivery log: the operator turned it off', type: 'invalid_request_error', code: 'not_found', param: null } };
      for (const res of [
        await request(gw.app).get('/v1/deliveries').set(auth()),
        await request(gw.app).get('/v1/deliveries/evt_x').set(auth()),
        await request(gw.app).post('/v1/deliveries/evt_x/replay').set(auth()),
        await request(gw.app).post('/v1/deliveries/replay').set(auth()).send({ state: 'failed' }),
        await request(gw.app).post('/v1/deliveries/endpoints/enable').set(auth()).send({ url: receiver.url }),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body).toStrictEqual(noLog);
      }
    } finally {
      await receiver.close();
    }
  });

  it('deliveries: false records nothing and warns of nothing', async () => {
    const receiver = await startReceiver();
    try {
      const warnings: string[] = [];
      const gw = await start({ deliveries: false, logger: { warn: (_fields: unknown, message: string) => warnings.push(message) } });
      await submitTask(gw, receiver.url);
      await expect.poll(() => receiver.taken().length).toBe(2);
      expect(warnings).toStrictEqual([]);
      expect((await request(gw.app).get('/v1/deliveries').set(auth())).status).toBe(404);
    } finally {
      await receiver.close();
    }
  });
});

describe('a bulk replay of 10,000', () => {
  it('queues through the scheduler: every delivery is sent once, never more at once than one endpoint may take, and the router keeps answering promptly', async () => {
    let open = 0;
    let most = 0;
    const receiver = await startFakeUpstream((_req, res) => {
      open += 1;
      most = Math.max(most, open);
      // answered on a later turn, so attempts that run together overlap here
      setImmediate(() => {
        open -= 1;
        res.writeHead(204);
        res.end();
      });
    });
    try {
      const store = memoryTaskStore();
      const now = Date.now();
      const ids: string[] = [];
      for (let i = 0; i < 10_000; i += 1) {
        const id = `evt_bulk_${String(i).padStart(5, '0')}`;
        ids.push(id);
        await store.createDelivery!(
          {
            id,
            taskId: `imgtask_bulk_${i}`,
            owner: 'tenant-a',
            event: 'succeeded',
            url: `${receiver.origin}/hook`,
            body: `{"id":"imgtask_bulk_${i}","status":"succeeded"}`,
            state: 'failed',
            createdAt: now - i,
            expiresAt: now + 86_400_000,
            attempts: [],
          },
          { maxEntries: 20_000 },
        );
      }
      const gw = await start({ store });
      const replaying = gw.router.deliveries.replayAll({ tenant: 'tenant-a', state: 'failed' });
      // the router answers promptly while the replays are queued and sent (a generous bound: it answers in ms)
      for (let i = 0; i < 5; i += 1) {
        const asked = performance.now();
        expect((await request(gw.app).get('/v1/models').set(auth())).status).toBe(200);
        expect(performance.now() - asked).toBeLessThan(1_000);
      }
      expect(await replaying).toStrictEqual({ queued: 10_000 });
      await expect.poll(() => receiver.requests.length, { timeout: 120_000, interval: 200 }).toBe(10_000);
      expect(new Set(receiver.requests.map((req) => req.headers['webhook-id'])).size).toBe(10_000);
      // one endpoint: never more than deliveries.perEndpointInFlight (2) at once
      expect(most).toBeLessThanOrEqual(2);
      await expect.poll(async () => (await gw.router.deliveries.list({ state: 'delivered', limit: 1 })).data.length, { timeout: 30_000 }).toBe(1);
      await expect.poll(async () => (await gw.router.deliveries.list({ state: 'pending', limit: 1 })).data.length, { timeout: 30_000 }).toBe(0);
    } finally {
      await receiver.close();
    }
  }, 180_000);
});
