// Several gateway instances on one Redis (redisTaskStore + bullmqScheduler): a task created on one
// is queryable on another; each state is delivered once when nothing crashes; a delivery survives
// the instance that was retrying it being stopped, and the instance that held it being killed.
// Runs when REDIS_URL is set (.ci/run always sets it).
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/callback-receiver.js';
import { type FakeArk, startFakeArk } from '../helpers/fake-ark.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { redisCluster } from '../helpers/redis-cluster.js';

const REDIS_URL = process.env.REDIS_URL;
const TASKS = '/api/v3/contents/generations/tasks';
const SECRET = `whsec_${Buffer.from('redis-suite-signing-secret-0123456').toString('base64')}`;

describe.runIf(Boolean(REDIS_URL))('video tasks across instances sharing Redis', () => {
  let ark: FakeArk;
  let receiver: CallbackReceiver;
  const cluster = redisCluster(REDIS_URL!, 'gw-it');

  const body = (extra: Record<string, unknown> = {}) => ({ model: 'seedance', content: [{ type: 'text', text: 'a cat' }], ...extra });

  beforeAll(async () => {
    ark = await startFakeArk();
    receiver = await startCallbackReceiver();
  });
  afterEach(async () => {
    // every test gets its own namespace; its keys are removed
    await cluster.stop();
    receiver.deliveries.length = 0;
    receiver.failFirst = 0;
  });
  afterAll(async () => {
    await ark.close();
    await receiver.close();
  });
  // a fresh namespace per test
  const fresh = () => {
    cluster.start({ arkBaseURL: ark.baseURL, signingSecret: SECRET });
  };

  it('a task created on one instance is queryable on another, and only by its owner', async () => {
    fresh();
    const a = cluster.instance();
    const b = cluster.instance();
    const created = await request(a.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).send(body());
    expect(created.status).toBe(200);
    const onB = await request(b.app).get(`${TASKS}/${created.body.id}`).set('Authorization', `Bearer ${KEY_A}`);
    expect(onB.status).toBe(200);
    expect(onB.body).toMatchObject({ id: created.body.id, model: 'seedance', status: 'queued' });
    const foreign = await request(b.app).get(`${TASKS}/${created.body.id}`).set('Authorization', `Bearer ${KEY_B}`);
    expect(foreign.status).toBe(404);
  });

  it('delivers each state exactly once when nothing crashes, with two instances competing', async () => {
    fresh();
    cluster.instance();
    const b = cluster.instance();
    await request(b.app)
      .post(TASKS)
      .set('Authorization', `Bearer ${KEY_A}`)
      .send(body({ callback_url: receiver.url }));
    const accepted = await receiver.accepted(3);
    await new Promise((resolve) => setTimeout(resolve, 800));
    const ids = receiver.deliveries.map((delivery) => delivery.headers['webhook-id']);
    expect(receiver.deliveries).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    expect(accepted.map((d) => JSON.parse(d.body).status).sort()).toEqual(['queued', 'running', 'succeeded']);
  });

  it('a retry survives the instance that was retrying it stopping; a restarted instance finishes it', async () => {
    fresh();
    ark.scripts.push(['succeeded']);
    receiver.failFirst = 1;
    const a = cluster.instance();
    await request(a.app)
      .post(TASKS)
      .set('Authorization', `Bearer ${KEY_A}`)
      .send(body({ callback_url: receiver.url }));
    const deadline = Date.now() + 5_000;
    while (receiver.deliveries.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(receiver.deliveries.map((d) => d.status)).toEqual([500]);
    await cluster.close(a);
    cluster.instance();
    const [delivered] = await receiver.accepted(1);
    expect(delivered!.headers['webhook-id']).toBe(receiver.deliveries[0]!.headers['webhook-id']);
  });

  it('a delivery held by an instance that is killed is taken over by another', async () => {
    fresh();
    ark.scripts.push(['succeeded']);
    const child = await cluster.spawn();
    // the first attempt reaches the receiver, which holds it open: the job is in the child's hands
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.next(async (_req, res) => {
      release();
      await new Promise((r) => setTimeout(r, 60_000));
      res.end();
    });
    const created = await request(child.url)
      .post(TASKS)
      .set('Authorization', `Bearer ${KEY_A}`)
      .send(body({ callback_url: receiver.url }));
    expect(created.status).toBe(200);
    await held;
    child.process.kill('SIGKILL');
    cluster.instance();
    const [delivered] = await receiver.accepted(1, 15_000);
    expect(JSON.parse(delivered!.body)).toMatchObject({ id: created.body.id, status: 'succeeded' });
  }, 30_000);
});
