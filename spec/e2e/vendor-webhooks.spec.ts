// Vendor webhooks (docs/video-tasks-and-callbacks.md "Vendor webhooks"): with `vendorWebhooks` on, fal is
// given a `fal_webhook` and Replicate a `webhook` on the submit, each naming the gateway's own route with
// a per-task token; a signed call there reads the task from the vendor and its callback goes out without
// waiting for the next poll (the polls here wait ten minutes). Forged calls (a wrong token, a signature
// by another key) are 401s that move nothing, and a flood of bad tokens costs no store write (counted
// by a wrapping task store). A call and polls racing move the task once. The route is outside
// verifyKey and afterAuthentication.
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryTaskStore, type TaskStore } from '../../lib/index.js';
import { startCallbackReceiver } from '../helpers/callback-receiver.js';
import { FAL_KEY, startFakeFal } from '../helpers/fake-fal.js';
import { REPLICATE_TOKEN, REPLICATE_WEBHOOK_SECRET, startFakeReplicate } from '../helpers/fake-replicate.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { falWebhookBody, replicateHeadersFor, startFakeFalKeys, webhookPathOf } from '../helpers/vendor-webhook-signers.js';

const PUBLIC_BASE = 'https://gw.example.com';
const SECRET = 'vendor-webhook-secret-0123456789-abcdefgh';
const TASKS = '/api/v3/contents/generations/tasks';
const KLING = 'fal-ai/kling-video/v2.1/standard/text-to-video';
const FLUX = 'black-forest-labs/flux-1.1-pro';
const auth = { Authorization: `Bearer ${KEY_A}` };
const WRITES = new Set(['createTask', 'updateTask', 'putAsset', 'deleteTask', 'createDelivery', 'updateDelivery']);

/** The store's writes, by method, and each write that made a task terminal. */
const writes: string[] = [];
const terminalWrites: string[] = [];
function countingStore(store: TaskStore): TaskStore {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        if (WRITES.has(String(name))) writes.push(String(name));
        const result = (value as (...given: unknown[]) => unknown).apply(target, args);
        if (name === 'updateTask') {
          const [id, , changes] = args as [string, number, { status?: string }];
          if (changes.status === 'succeeded') void (result as Promise<unknown>).then((updated) => updated && terminalWrites.push(id));
        }
        return result;
      };
    },
  });
}

const keys = await startFakeFalKeys();
const receiver = await startCallbackReceiver();
afterAll(async () => {
  await receiver.close();
  await keys.close();
});
let hostMiddlewareRuns = 0;

const gw = await gatewayWith({
  fakes: { fal: startFakeFal, replicate: startFakeReplicate },
  resolve: ({ model }, { fal, replicate }) =>
    model.startsWith('fal-ai/') ? { provider: 'fal', baseURL: fal.origin, apiKey: FAL_KEY, model } : { provider: 'replicate', baseURL: replicate.baseURL, apiKey: REPLICATE_TOKEN, model },
  store: countingStore(memoryTaskStore()),
  // polls wait ten minutes (forty with vendor webhooks on): a callback within the test came from a vendor call
  callbacks: { allowLocal: true, retryBaseMs: 10, retryMaxMs: 50, pollIntervalsMs: { video: [600_000], image: [600_000] } },
  vendorWebhooks: { publicBaseUrl: PUBLIC_BASE, secret: SECRET, falJwksUrl: keys.jwksUrl },
  tenancy: {
    afterAuthentication: (_req, _res, next) => {
      hostMiddlewareRuns += 1;
      next();
    },
  },
});
const { fal, replicate } = gw.fakes;
fal.setQueueReads(0);

/** A fal video task with a callback, held running at fal: its id, and the webhook URL fal was given. */
async function falTask(): Promise<{ id: string; webhook: string; requestId: string }> {
  fal.setRunning(true);
  const created = await request(gw.url)
    .post(TASKS)
    .set(auth)
    .send({ model: KLING, content: [{ type: 'text', text: 'a paper boat drifts' }], callback_url: receiver.url });
  expect(created.status).toBe(200);
  const submit = fal.requests.filter((entry) => entry.method === 'POST').at(-1)!;
  const webhook = new URL(submit.path, 'http://fal.local').searchParams.get('fal_webhook') ?? '';
  return { id: String(created.body.id), webhook, requestId: fal.inputs().at(-1)!.requestId };
}

function callFal(path: string, requestId: string, how: { forged?: boolean } = {}): request.Test {
  const body = falWebhookBody(requestId);
  return request(gw.url)
    .post(path)
    .set(keys.headersFor(body, requestId, how))
    .send(body);
}

describe('fal', () => {
  it('is given the task’s own webhook URL, and its signed call brings the task to its callback without waiting for a poll', async () => {
    const task = await falTask();
    expect(task.webhook).toMatch(new RegExp(`^${PUBLIC_BASE}/v1/vendor-webhooks/fal/${task.id}/[A-Za-z0-9_-]{43}$`));
    fal.setRunning(false);
    const before = receiver.deliveries.length;
    const runs = hostMiddlewareRuns;
    const answer = await callFal(webhookPathOf(task.webhook), task.requestId);
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ received: true });
    await receiver.accepted(before + 1);
    const delivered = JSON.parse(receiver.deliveries.at(-1)!.body) as Record<string, unknown>;
    expect(delivered).toMatchObject({ id: task.id, status: 'succeeded' });
    // no gateway key, and the host's middleware after authentication never ran
    expect(hostMiddlewareRuns).toBe(runs);
  });

  it('a call with a wrong token, or with a signature by another key, is a 401 that moves nothing', async () => {
    const task = await falTask();
    fal.setRunning(false);
    const path = webhookPathOf(task.webhook);
    const wrongToken = path.replace(/[^/]+$/, 'A'.repeat(43));
    const falReads = (): number => fal.requests.filter((entry) => entry.method === 'GET').length;
    const before = { writes: writes.length, deliveries: receiver.deliveries.length, reads: falReads() };
    const forgedToken = await callFal(wrongToken, task.requestId);
    expect(forgedToken.status).toBe(401);
    expect(forgedToken.body).toEqual({
      error: { message: 'The vendor webhook URL is not valid: its token does not match the task.', type: 'authentication_error', code: 'vendor_webhook_refused', param: null },
    });
    const otherTask = await callFal(path.replace(task.id, `${task.id.slice(0, -1)}x`), task.requestId);
    expect(otherTask.status).toBe(401);
    const forgedSignature = await callFal(path, task.requestId, { forged: true });
    expect(forgedSignature.status).toBe(401);
    expect(forgedSignature.body.error).toMatchObject({ code: 'vendor_webhook_refused', message: "The vendor's signature of this call does not verify." });
    const unsigned = await request(gw.url).post(path).set('content-type', 'application/json').send(falWebhookBody(task.requestId));
    expect(unsigned.status).toBe(401);
    // nothing written, nothing delivered, fal not read; the task still reads as fal ran it, on a query
    expect(writes.length).toBe(before.writes);
    expect(receiver.deliveries.length).toBe(before.deliveries);
    expect(falReads()).toBe(before.reads);
    expect(JSON.stringify(forgedToken.body)).not.toContain(path.split('/').at(-1));
  });

  it('a flood of 200 bad-token calls costs no store write', async () => {
    const task = await falTask();
    const path = webhookPathOf(task.webhook).replace(/[^/]+$/, '');
    const before = writes.length;
    const answers = await Promise.all(Array.from({ length: 200 }, (_unused, index) => callFal(`${path}bad-token-${index}`, task.requestId)));
    expect(answers.every((answer) => answer.status === 401)).toBe(true);
    expect(writes.length).toBe(before);
  });

  it('calls and polls racing move the task once', async () => {
    // a variant whose polls run every 20 ms (80 with the fallback factor), on the same store and fakes
    const racing = gw.variant({ callbacks: { allowLocal: true, pollIntervalsMs: { video: [20] } } });
    fal.setRunning(true);
    const created = await request(racing.app)
      .post(TASKS)
      .set(auth)
      .send({ model: KLING, content: [{ type: 'text', text: 'two paper boats' }], callback_url: receiver.url });
    const id = String(created.body.id);
    const submit = fal.requests.filter((entry) => entry.method === 'POST').at(-1)!;
    const path = webhookPathOf(new URL(submit.path, 'http://fal.local').searchParams.get('fal_webhook')!);
    const requestId = fal.inputs().at(-1)!.requestId;
    await expect.poll(() => fal.requests.filter((entry) => entry.method === 'GET' && entry.path.includes(requestId)).length).toBeGreaterThan(1);
    fal.setRunning(false);
    const body = falWebhookBody(requestId);
    const calls = Array.from({ length: 4 }, () => request(racing.app).post(path).set(keys.headersFor(body, requestId)).send(body));
    const queries = Array.from({ length: 4 }, () => request(racing.app).get(`${TASKS}/${id}`).set(auth));
    const answers = await Promise.all([...calls, ...queries]);
    expect(answers.slice(0, 4).every((answer) => answer.status === 202)).toBe(true);
    await expect.poll(() => racing.usage.filter((event) => event.task?.status === 'succeeded' && event.task.id === id).length).toBe(1);
    await receiver.accepted(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(terminalWrites.filter((written) => written === id)).toHaveLength(1);
    expect(racing.usage.filter((event) => event.task?.status === 'succeeded' && event.task.id === id)).toHaveLength(1);
    const succeeded = receiver.deliveries.filter((delivery) => (JSON.parse(delivery.body) as { id?: string; status?: string }).id === id && delivery.body.includes('"succeeded"'));
    expect(new Set(succeeded.map((delivery) => delivery.headers['webhook-id'])).size).toBe(1);
  });
});

describe('Replicate', () => {
  it('is given webhook and webhook_events_filter; its Standard Webhooks call, checked with the secret read from Replicate, ends an image task at once', async () => {
    const release = replicate.hold();
    const submitted = await request(gw.url).post('/v1/images/generations/async').set(auth).send({ model: FLUX, prompt: 'a paper crane' });
    expect(submitted.status).toBe(202);
    const id = String(submitted.body.id);
    await expect.poll(() => replicate.creates().length).toBeGreaterThan(0);
    const sent = replicate.creates().at(-1)!.json as { webhook?: string; webhook_events_filter?: string[] };
    expect(sent.webhook).toMatch(new RegExp(`^${PUBLIC_BASE}/v1/vendor-webhooks/replicate/${id}/[A-Za-z0-9_-]{43}$`));
    expect(sent.webhook_events_filter).toEqual(['completed']);
    await expect.poll(async () => (await request(gw.url).get(`/v1/images/tasks/${id}`).set(auth)).body.status).toBe('running');
    release();
    const prediction = [...replicate.predictions.values()].at(-1)!;
    await prediction.finished;
    const body = JSON.stringify({ id: prediction.id, status: 'succeeded' });
    // signed with another secret: refused, nothing moves
    const forged = await request(gw.url)
      .post(webhookPathOf(sent.webhook!))
      .set(replicateHeadersFor(`whsec_${Buffer.from('another-account-signing-key-0123').toString('base64')}`, body))
      .send(body);
    expect(forged.status).toBe(401);
    expect((await request(gw.url).get(`/v1/images/tasks/${id}`).set(auth)).body.status).toBe('running');
    const answer = await request(gw.url).post(webhookPathOf(sent.webhook!)).set(replicateHeadersFor(REPLICATE_WEBHOOK_SECRET, body)).send(body);
    expect(answer.status).toBe(202);
    await expect.poll(async () => (await request(gw.url).get(`/v1/images/tasks/${id}`).set(auth)).body.status).toBe('succeeded');
    // the signing secret was read once, with the upstream key, and kept
    expect(replicate.requests.filter((entry) => entry.path === '/v1/webhooks/default/secret')).toHaveLength(1);
  });
});

describe('without vendor webhooks', () => {
  it('no vendor is given a webhook, and the route refuses every call', async () => {
    const plain = gw.variant({ vendorWebhooks: undefined });
    const created = await request(plain.app)
      .post(TASKS)
      .set(auth)
      .send({ model: KLING, content: [{ type: 'text', text: 'still water' }], callback_url: receiver.url });
    expect(created.status).toBe(200);
    expect(fal.requests.filter((entry) => entry.method === 'POST').at(-1)!.path).not.toContain('fal_webhook');
    const refused = await request(plain.app)
      .post(`/v1/vendor-webhooks/fal/${String(created.body.id)}/${'A'.repeat(43)}`)
      .send('{}');
    expect(refused.status).toBe(401);
  });
});
