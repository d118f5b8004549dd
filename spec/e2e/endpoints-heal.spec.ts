// Endpoints that heal (docs/video-tasks-and-callbacks.md "Endpoints that heal"), over real HTTP: image
// tasks call back a real receiver on port 0 that goes down; the tenant's endpoint is disabled after
// `deliveries.disableAfter`, the operator's hook is told once, new deliveries are kept `paused`, and one
// call enables the endpoint again: what was paused arrives once each, oldest first, one after another,
// and one bulk replay sends the dead letters, so the receiver ends with every state it missed.
import type { ServerResponse } from 'node:http';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { type EndpointDisabledEvent, type GatewayOptions, memoryTaskStore } from '../../lib/index.js';
import { OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { type FakeUpstream, type RecordedRequest, startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { type GatewayFixture, gatewayWith } from '../helpers/gateway-with.js';

const MODEL = 'x-image-2.0';
const RECEIVER_TOKEN = 'receiver-own-token-77c1';
const CLOCK = Symbol.for('express-image-gateway.clock');

type Fixture = GatewayFixture<{ images: typeof startFakePaidImages }>;

function start(options: Partial<GatewayOptions> = {}): Promise<Fixture> {
  return gatewayWith(
    {
      fakes: { images: startFakePaidImages },
      resolve: (_input, { images }) => ({ provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-2.0' }),
      callbacks: { allowLocal: true, retryBaseMs: 10, retryMaxMs: 20, maxAttempts: 2 },
    },
    options,
  );
}

interface Receiver extends FakeUpstream {
  /** Answer 503 to everything while true. */
  down: boolean;
  /** The callback URL, its query carrying the receiver's own token. */
  url: string;
  /** The requests answered 2xx, in the order they arrived. */
  taken(): RecordedRequest[];
  /** Most requests open at once while up. */
  mostOpen: number;
}

/** A receiver that answers after a short pause, so attempts sent side by side would overlap here. */
async function startReceiver(): Promise<Receiver> {
  const taken: RecordedRequest[] = [];
  let open = 0;
  // eslint-disable-next-line prefer-const -- assigned once, after the server it is read from exists
  let receiver: Receiver | undefined;
  const fake = await startFakeUpstream((req: RecordedRequest, res: ServerResponse) => {
    if (receiver!.down) {
      res.writeHead(503);
      res.end('deploying');
      return;
    }
    open += 1;
    receiver!.mostOpen = Math.max(receiver!.mostOpen, open);
    setTimeout(() => {
      open -= 1;
      taken.push(req);
      res.writeHead(204);
      res.end();
    }, 15);
  });
  receiver = Object.assign(fake, { down: false, url: `${fake.origin}/hooks/image?token=${RECEIVER_TOKEN}`, taken: () => taken, mostOpen: 0 });
  return receiver;
}

const auth = (key = KEY_A) => ({ Authorization: `Bearer ${key}` });

async function submitTask(gw: Fixture, callbackUrl: string, key = KEY_A): Promise<string> {
  const res = await request(gw.app).post(OPENAI_IMAGES).set(auth(key)).set('Prefer', 'respond-async').send({ model: MODEL, prompt: 'a lighthouse', callback_url: callbackUrl });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

type Listed = { id: string; task_id: string; event: string; state: string };

async function deliveriesOf(gw: Fixture, query = '', key = KEY_A): Promise<Listed[]> {
  const res = await request(gw.app).get(`/v1/deliveries?limit=100${query}`).set(auth(key));
  expect(res.status).toBe(200);
  return res.body.data as Listed[];
}

/** Waits until the task's two deliveries (running, succeeded) are recorded and none is pending. */
async function settled(gw: Fixture, taskId: string, key = KEY_A): Promise<Listed[]> {
  let list: Listed[] = [];
  await expect
    .poll(
      async () => {
        list = await deliveriesOf(gw, `&task_id=${taskId}`, key);
        return list.length === 2 && list.every((delivery) => delivery.state !== 'pending');
      },
      { timeout: 10_000, interval: 20 },
    )
    .toBe(true);
  return list;
}

const idOf = (req: RecordedRequest): string => String(req.headers['webhook-id']);

describe('an endpoint down for an hour heals', () => {
  it('failures disable it, the hook is told once, new deliveries are paused, one call enables it, the paused arrive once each in order, one bulk replay sends the rest', async () => {
    const receiver = await startReceiver();
    try {
      const events: EndpointDisabledEvent[] = [];
      // a hook that fails (a pager that is down) changes nothing
      const onEndpointDisabled = (event: EndpointDisabledEvent): void => {
        events.push(event);
        throw new Error('pager down');
      };
      const gw = await start({ deliveries: { disableAfter: { attempts: 4 } }, onEndpointDisabled });

      // down: each task's succeeded state fails both attempts, and four failures in a row disable the endpoint
      receiver.down = true;
      const failedTasks: string[] = [];
      while (events.length === 0 && failedTasks.length < 4) {
        const taskId = await submitTask(gw, receiver.url);
        failedTasks.push(taskId);
        await settled(gw, taskId);
      }
      expect(events).toHaveLength(1);
      const endpoint = `${receiver.origin}/hooks/image`;
      expect(events[0]).toMatchObject({ url: endpoint, origin: receiver.origin, path: '/hooks/image', tenant: 'tenant-a', reason: 'attempts', failures: 4, lastSuccessAt: null });
      expect(JSON.stringify(events[0])).not.toContain(RECEIVER_TOKEN);

      // back up, but disabled for tenant A: its new states are recorded paused and not sent; tenant B's go through
      receiver.down = false;
      const pausedTasks = [await submitTask(gw, receiver.url), await submitTask(gw, receiver.url)];
      for (const taskId of pausedTasks) expect((await settled(gw, taskId)).map((delivery) => delivery.state)).toStrictEqual(['paused', 'paused']);
      const otherTenant = await submitTask(gw, receiver.url, KEY_B);
      const isSucceededOf = (taskId: string) => (req: RecordedRequest) => (req.json as { id: string }).id === taskId && (req.json as { status: string }).status === 'succeeded';
      await expect.poll(() => receiver.taken().filter(isSucceededOf(otherTenant)).length, { timeout: 10_000 }).toBe(1);
      expect(receiver.taken().filter((req) => pausedTasks.includes((req.json as { id: string }).id))).toStrictEqual([]);
      // oldest first; a retry of the hour it was down that was queued when the endpoint was disabled is paused too
      const paused = (await deliveriesOf(gw, '&state=paused')).reverse();
      expect(paused.filter((delivery) => pausedTasks.includes(delivery.task_id))).toHaveLength(4);
      expect(paused.every((delivery) => [...failedTasks, ...pausedTasks].includes(delivery.task_id))).toBe(true);

      // tenant B enabling the same URL touches only its own endpoint, which was never disabled
      const notB = await request(gw.app).post('/v1/deliveries/endpoints/enable').set(auth(KEY_B)).send({ url: receiver.url });
      expect(notB.status).toBe(200);
      expect(notB.body).toStrictEqual({ object: 'delivery.endpoint', url: endpoint, state: 'enabled', was_disabled: false, queued: 0 });
      expect(await deliveriesOf(gw, '&state=paused')).toHaveLength(paused.length);

      // one call heals it: the paused arrive once each, oldest first, one after another
      await settled(gw, otherTenant, KEY_B);
      receiver.mostOpen = 0;
      const before = receiver.taken().length;
      const enabled = await request(gw.app).post('/v1/deliveries/endpoints/enable').set(auth()).send({ url: receiver.url });
      expect(enabled.status).toBe(200);
      expect(enabled.body).toStrictEqual({ object: 'delivery.endpoint', url: endpoint, state: 'enabled', was_disabled: true, queued: paused.length });
      await expect.poll(() => receiver.taken().length - before, { timeout: 10_000 }).toBe(paused.length);
      expect(receiver.taken().slice(before).map(idOf)).toStrictEqual(paused.map((delivery) => delivery.id));
      expect(
        receiver
          .taken()
          .slice(before)
          .every((req) => req.headers['webhook-replay'] === undefined),
      ).toBe(true);
      expect(receiver.mostOpen).toBe(1);
      await expect.poll(async () => (await deliveriesOf(gw, '&state=paused')).length).toBe(0);
      // again: nothing to do
      const again = await request(gw.app).post('/v1/deliveries/endpoints/enable').set(auth()).send({ url: endpoint });
      expect(again.body).toMatchObject({ was_disabled: false, queued: 0 });

      // the dead letters of the hour it was down: one bulk replay
      const failed = await deliveriesOf(gw, '&state=failed');
      const pausedIds = new Set(paused.map((delivery) => delivery.id));
      const missed = (await deliveriesOf(gw)).filter((delivery) => failedTasks.includes(delivery.task_id) && delivery.event === 'succeeded' && !pausedIds.has(delivery.id));
      expect(failed.filter((delivery) => delivery.event === 'succeeded')).toStrictEqual(missed);
      const replay = await request(gw.app).post('/v1/deliveries/replay').set(auth()).send({ state: 'failed' });
      expect(replay.body).toMatchObject({ queued: failed.length });
      await expect.poll(async () => (await deliveriesOf(gw, '&state=failed')).length + (await deliveriesOf(gw, '&state=pending')).length, { timeout: 10_000 }).toBe(0);

      // the receiver has every state of tenant A's tasks, each webhook-id once
      const owed = (await deliveriesOf(gw)).filter((delivery) => delivery.state !== 'superseded');
      const counts = new Map<string, number>();
      for (const req of receiver.taken()) counts.set(idOf(req), (counts.get(idOf(req)) ?? 0) + 1);
      for (const delivery of owed) expect([delivery.id, counts.get(delivery.id)]).toStrictEqual([delivery.id, 1]);
      for (const taskId of [...failedTasks, ...pausedTasks]) {
        expect(receiver.taken().filter(isSucceededOf(taskId))).toHaveLength(1);
      }
      expect(events).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('no success for disableAfter.hours while attempts fail disables it, on the gateway clock; the other key keeps its default', async () => {
    let offset = 0;
    const global = globalThis as { [CLOCK]?: unknown };
    const saved = global[CLOCK];
    global[CLOCK] = {
      now: () => Date.now() + offset,
      after: (ms: number, run: () => void) => {
        const timer = setTimeout(run, ms);
        return () => clearTimeout(timer);
      },
    };
    const receiver = await startReceiver();
    try {
      const events: EndpointDisabledEvent[] = [];
      const gw = await start({ deliveries: { disableAfter: { hours: 1 } }, onEndpointDisabled: async (event) => void events.push(event) });
      receiver.down = true;
      const first = await submitTask(gw, receiver.url);
      await settled(gw, first);
      expect(events).toStrictEqual([]);
      // an hour and a minute later, still failing
      offset += 61 * 60_000;
      const second = await submitTask(gw, receiver.url);
      await settled(gw, second);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ tenant: 'tenant-a', reason: 'hours' });
      expect(events[0]!.disabledAt - events[0]!.failingSince).toBeGreaterThanOrEqual(3_600_000);
      expect(events[0]!.failures).toBeLessThan(100);
      // the operator enables it for every tenant by URL alone
      expect(await gw.router.deliveries.enable(receiver.url)).toMatchObject({ url: `${receiver.origin}/hooks/image`, enabled: 1 });
    } finally {
      if (saved === undefined) delete global[CLOCK];
      else global[CLOCK] = saved;
      await receiver.close();
    }
  });

  it('enable: a missing or invalid url, or a body that is not a JSON object, is a 400 naming it; no key is a 401', async () => {
    const gw = await start();
    const enable = (body: unknown) =>
      request(gw.app)
        .post('/v1/deliveries/endpoints/enable')
        .set(auth())
        .send(body as object);
    const bad = (message: string, param: string | null) => ({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param } });
    const badUrl = bad('url must be an http or https URL: the callback URL whose endpoint to enable', 'url');
    for (const [body, expected] of [
      [{}, bad('url is required: the callback URL whose endpoint to enable', 'url')],
      [{ url: 'not a url' }, badUrl],
      [{ url: 'ftp://hooks.example.com/x' }, badUrl],
      [{ url: 42 }, badUrl],
      [['https://hooks.example.com/x'], bad('The request body must be a JSON object', null)],
    ] as const) {
      const res = await enable(body);
      expect(res.status).toBe(400);
      expect(res.body).toStrictEqual(expected);
    }
    expect((await request(gw.app).post('/v1/deliveries/endpoints/enable').send({ url: 'https://hooks.example.com/x' })).status).toBe(401);
    await expect(gw.router.deliveries.enable('not a url')).rejects.toMatchObject({ status: 400, param: 'url' });
  });
});

describe('a chain lost with its scheduler', () => {
  it('enabling an endpoint that is no longer disabled still sends what stayed paused, once each', async () => {
    const receiver = await startReceiver();
    try {
      const store = memoryTaskStore();
      const gw = await start({ store, deliveries: { disableAfter: { attempts: 2 } } });
      receiver.down = true;
      const failedTasks: string[] = [];
      while ((await deliveriesOf(gw, '&state=paused')).length === 0 && failedTasks.length < 4) {
        const failing = await submitTask(gw, receiver.url);
        failedTasks.push(failing);
        await settled(gw, failing);
      }
      receiver.down = false;
      const pausedTask = await submitTask(gw, receiver.url);
      expect((await settled(gw, pausedTask)).map((delivery) => delivery.state)).toStrictEqual(['paused', 'paused']);
      const paused = await deliveriesOf(gw, '&state=paused');
      // the endpoint enabled in the store, its chain never started (a scheduler that forgot its job)
      const endpoint = `${receiver.origin}/hooks/image`;
      expect(await store.enableEndpoint!({ tenant: 'tenant-a', url: endpoint }, { keepMs: 60_000 })).toBe(true);
      const before = receiver.taken().length;

      const enabled = await request(gw.app).post('/v1/deliveries/endpoints/enable').set(auth()).send({ url: receiver.url });
      expect(enabled.body).toStrictEqual({ object: 'delivery.endpoint', url: endpoint, state: 'enabled', was_disabled: false, queued: paused.length });
      await expect.poll(() => receiver.taken().length - before, { timeout: 10_000 }).toBe(paused.length);
      expect(new Set(receiver.taken().slice(before).map(idOf))).toStrictEqual(new Set(paused.map((delivery) => delivery.id)));
      await expect.poll(async () => (await deliveriesOf(gw, '&state=paused')).length).toBe(0);
      const again = await request(gw.app).post('/v1/deliveries/endpoints/enable').set(auth()).send({ url: receiver.url });
      expect(again.body).toMatchObject({ was_disabled: false, queued: 0 });
    } finally {
      await receiver.close();
    }
  });
});
