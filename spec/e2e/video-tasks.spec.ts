// Video tasks end to end (contract §2.6, §3, §4.2, §6): create and query in front of a fake Ark whose
// tasks move queued -> running -> a terminal state, ownership across tenants, asset references, and
// callbacks delivered to a loopback receiver that fails its first attempts.
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { memoryTaskStore, type TaskStore } from '../../lib/index.js';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/callback-receiver.js';
import { arkTaskObject, startFakeArk } from '../helpers/fake-ark.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B, type TestGateway } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';

const SECRET = `whsec_${Buffer.from('a-test-signing-secret-of-32-bytes').toString('base64')}`;
const TASKS = '/api/v3/contents/generations/tasks';
const body = (extra: Record<string, unknown> = {}) => ({
  model: 'seedance',
  content: [
    { type: 'text', text: 'The girl looks at the camera and says "Cheese"' },
    { type: 'image_url', image_url: { url: 'https://images.example.com/first.jpeg' }, role: 'first_frame' },
  ],
  resolution: '720p',
  ratio: '16:9',
  duration: 5,
  ...extra,
});

const store: TaskStore = memoryTaskStore();
const gateway = await gatewayWith({
  fakes: { ark: startFakeArk },
  store,
  resolve: ({ route }, { ark }) => (route === 'video.tasks' ? { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-operator-key', model: 'doubao-seedance-1-5-pro-251215' } : null),
  callbacks: { allowLocal: true, pollIntervalsMs: { video: [30] }, retryBaseMs: 20, retryMaxMs: 40, signingSecret: SECRET },
});
const { ark } = gateway.fakes;

const create = (gw: TestGateway, payload: unknown, key = KEY_A) =>
  request(gw.app)
    .post(TASKS)
    .set('Authorization', `Bearer ${key}`)
    .send(payload as object);
const query = (gw: TestGateway, id: string, key = KEY_A) => request(gw.app).get(`${TASKS}/${id}`).set('Authorization', `Bearer ${key}`);

afterEach(() => {
  ark.requests.length = 0;
  ark.scripts.length = 0;
});

describe('create and query', () => {
  it('creates on Ark and answers the gateway id; Ark gets no callback_url and the upstream model', async () => {
    const res = await create(gateway, body({ safety_identifier: 'user-hash-1', return_last_frame: true, vendor_field: 1 }));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['id']);
    expect(res.body.id).toMatch(/^task_[A-Za-z0-9_-]{22}$/);
    const [sent] = ark.apiRequests();
    expect(sent?.path).toBe(TASKS);
    expect(sent?.headers.authorization).toBe('Bearer ark-operator-key');
    expect(sent?.json).toEqual({ ...body({ safety_identifier: 'user-hash-1', return_last_frame: true, vendor_field: 1 }), model: 'doubao-seedance-1-5-pro-251215' });
    expect(JSON.stringify(res.body)).not.toContain('cgt-');
  });

  it('queries through queued, running, succeeded; then answers from the store', async () => {
    const { body: created } = await create(gateway, body());
    const seen: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const res = await query(gateway, created.id);
      expect(res.status).toBe(200);
      seen.push(res.body.status);
    }
    expect(seen).toEqual(['queued', 'running', 'succeeded']);
    const upstreamId = [...ark.tasks.keys()].at(-1)!;
    const final = await query(gateway, created.id);
    expect(final.body).toEqual({ ...arkTaskObject(upstreamId, 'x', 'succeeded'), id: created.id, model: 'seedance' });
    expect(JSON.stringify(final.body).includes(upstreamId)).toBe(true); // only inside Ark's own video URL
    expect(final.body.id).toBe(created.id);
    expect(ark.taskGets()).toHaveLength(3);
  });

  it.each([['failed'], ['expired'], ['cancelled']])('%s is terminal', async (status) => {
    ark.scripts.push(['queued', status]);
    const { body: created } = await create(gateway, body());
    await query(gateway, created.id);
    const terminal = await query(gateway, created.id);
    expect(terminal.body.status).toBe(status);
    await query(gateway, created.id);
    expect(ark.taskGets()).toHaveLength(2);
  });

  it('passes an unknown status through and keeps polling it (spec §3: the set is open)', async () => {
    ark.scripts.push(['paused', 'paused', 'succeeded']);
    const { body: created } = await create(gateway, body());
    expect((await query(gateway, created.id)).body.status).toBe('paused');
    expect((await query(gateway, created.id)).body.status).toBe('paused');
    expect((await query(gateway, created.id)).body.status).toBe('succeeded');
  });

  it('answers another tenant 404, exactly as for an id that never existed', async () => {
    const { body: created } = await create(gateway, body());
    const foreign = await query(gateway, created.id, KEY_B);
    const unknown = await query(gateway, 'task_AAAAAAAAAAAAAAAAAAAAAA', KEY_B);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: { message: `Task '${created.id}' was not found.`, type: 'invalid_request_error', code: 'not_found', param: null } });
    expect(unknown.body).toEqual({ error: { message: "Task 'task_AAAAAAAAAAAAAAAAAAAAAA' was not found.", type: 'invalid_request_error', code: 'not_found', param: null } });
    expect(ark.taskGets()).toHaveLength(0);
  });

  it('answers 404 for malformed ids without a store or upstream lookup', async () => {
    const res = await query(gateway, '..%2F..%2Fadmin');
    expect(res.status).toBe(404);
    expect(ark.requests).toHaveLength(0);
  });

  it('normalizes an Ark create error', async () => {
    ark.next((_req, res) => sendJson(res, 400, { error: { code: 'InvalidParameter', message: 'The parameter `duration` is not valid. Request id: 021', param: 'duration', type: 'BadRequest' } }));
    const res = await create(gateway, body({ duration: 8 }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: {
        message: 'The upstream rejected the request: The parameter `duration` is not valid. Request id: 021 (ark code InvalidParameter)',
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        param: 'duration',
      },
    });
  });

  it("a duration outside the upstream model's row is a 400 naming the caller's name, and Ark is not called", async () => {
    const before = ark.requests.length;
    const res = await create(gateway, body({ duration: 99 }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'duration' });
    expect(res.body.error.message).toContain("model 'seedance'");
    expect(ark.requests).toHaveLength(before);
  });

  it("maps a draft_task id of the caller to the Ark id, and refuses another tenant's", async () => {
    const { body: draft } = await create(gateway, body({ draft: true }));
    const upstreamDraft = [...ark.tasks.keys()].at(-1);
    const ok = await create(gateway, { model: 'seedance', content: [{ type: 'draft_task', draft_task: { id: draft.id } }] });
    expect(ok.status).toBe(200);
    expect((ark.apiRequests().at(-1)?.json as { content: unknown }).content).toEqual([{ type: 'draft_task', draft_task: { id: upstreamDraft } }]);
    const foreign = await create(gateway, { model: 'seedance', content: [{ type: 'draft_task', draft_task: { id: draft.id } }] }, KEY_B);
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.message).toBe(`content[0].draft_task.id '${draft.id}' is not one of your tasks`);
  });
});

describe('validation: 400, and Ark is not called', () => {
  const cases: Array<[string, unknown, string]> = [
    ['no model', { content: [{ type: 'text', text: 'x' }] }, 'model is required'],
    ['no content', { model: 'seedance' }, 'content is required'],
    ['empty content', { model: 'seedance', content: [] }, 'content must have at least 1 item(s)'],
    ['unknown item type', { model: 'seedance', content: [{ type: 'pdf_url' }] }, "content[0].type must be one of 'text', 'image_url', 'video_url', 'audio_url', 'draft_task'"],
    ['text item without text', { model: 'seedance', content: [{ type: 'text' }] }, 'content[0].text is required'],
    ['image item without url', { model: 'seedance', content: [{ type: 'image_url', image_url: {} }] }, 'content[0].image_url.url is required'],
    [
      'private image url',
      { model: 'seedance', content: [{ type: 'image_url', image_url: { url: 'http://10.1.2.3/a.png' } }] },
      'content[0].image_url.url names a loopback, private or link-local host; the URL must be publicly reachable',
    ],
    ['duration not integer', { ...body(), duration: '5s' }, 'duration must be an integer, got string'],
    ['callback_url not a string', { ...body(), callback_url: 5 }, 'callback_url must be a string, got number'],
  ];
  it.each(cases)('%s', async (_name, payload, message) => {
    const res = await create(gateway, payload);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message, type: 'invalid_request_error', code: 'invalid_request_error' });
    expect(ark.requests).toHaveLength(0);
  });
});

describe('callback_url rules (spec §5.5, §6.3)', () => {
  let strict: TestGateway;
  beforeAll(() => {
    strict = gateway.variant({ callbacks: { pollIntervalsMs: { video: [60_000] } } });
  });
  afterAll(async () => {
    await strict.close();
  });

  const refused: Array<[string, string, string]> = [
    ['http', 'http://hooks.example.com/cb', 'callback_url must be an https URL of your own server'],
    ['localhost', 'https://localhost/cb', 'callback_url must name a public host: loopback, private, link-local and metadata addresses are refused'],
    ['127.x', 'https://127.0.0.1/cb', 'callback_url must name a public host: loopback, private, link-local and metadata addresses are refused'],
    ['127.x other', 'https://127.45.6.7:8443/cb', 'callback_url must name a public host: loopback, private, link-local and metadata addresses are refused'],
    ['10.x', 'https://10.0.0.8/cb', 'callback_url must name a public host: loopback, private, link-local and metadata addresses are refused'],
    ['172.16.x', 'https://172.16.5.4/cb', 'callback_url must name a public host: loopback, private, link-local and metadata addresses are refused'],
    ['192.168.x', 'https://192.168.1.10/cb', 'callback_url must name a public host: loopback, private, link-local and metadata addresses are refused'],
    ['metadata', 'https://169.254.169.254/latest', 'callback_url must name a public host: loopback, private, link-local and metadata addresses are refused'],
    ['[::1]', 'https://[::1]/cb', 'callback_url must name a public host: loopback, private, link-local and metadata addresses are refused'],
    ['decimal loopback', 'https://2130706433/cb', 'callback_url must name a public host: loopback, private, link-local and metadata addresses are refused'],
    ['credentials', 'https://user:pass@93.184.216.34/cb', 'callback_url must not carry credentials (user:password@)'],
    ['the caller key in the query', `https://93.184.216.34/cb?key=${KEY_A}`, 'callback_url must not contain your API key (no keys or secrets in callback URLs)'],
    [
      'the caller key in the path, encoded',
      `https://93.184.216.34/${encodeURIComponent(KEY_A).replace(/-/g, '%2D')}/cb`,
      'callback_url must not contain your API key (no keys or secrets in callback URLs)',
    ],
    ['not a URL', 'hooks', 'callback_url must be an absolute https URL'],
    ['a name that does not resolve', 'https://no-such-host.invalid/cb', 'callback_url names a host that does not resolve'],
  ];
  it.each(refused)('%s: 400', async (_name, url, message) => {
    const res = await create(strict, body({ callback_url: url }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param: 'callback_url' } });
    expect(ark.requests).toHaveLength(0);
  });

  it('accepts an https URL of a public address', async () => {
    const res = await create(strict, body({ callback_url: 'https://93.184.216.34/hooks/video?tenant=a' }));
    expect(res.status).toBe(200);
    expect((ark.apiRequests()[0]?.json as Record<string, unknown>).callback_url).toBeUndefined();
  });
});

describe('callbacks', () => {
  let receiver: CallbackReceiver;
  beforeAll(async () => {
    receiver = await startCallbackReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('delivers each state change, signed, retried with the same event id, bodies equal to the query', async () => {
    receiver.deliveries.length = 0;
    const { body: created } = await create(gateway, body({ callback_url: receiver.url }));
    const accepted = await receiver.accepted(3);
    // states are delivered independently (a retried state does not hold back the next one), so
    // receivers order them by the state itself and confirm with a query (contract §6.5)
    const states = accepted.map((delivery) => (JSON.parse(delivery.body) as { status: string }).status);
    expect([...states].sort()).toEqual(['queued', 'running', 'succeeded']);
    expect(new Set(accepted.map((d) => d.headers['webhook-id'])).size).toBe(3);

    // a state that failed twice: three attempts, one webhook-id. The terminal state, because a retry
    // of a state the task has since passed is dropped (task-state-order.ts)
    receiver.failFirst = 2;
    ark.scripts.push(['succeeded']);
    await create(gateway, body({ callback_url: receiver.url }));
    await receiver.accepted(4);
    const retried = receiver.deliveries.slice(3);
    expect(retried.map((d) => d.status)).toEqual([500, 500, 204]);
    expect(new Set(retried.map((d) => d.headers['webhook-id'])).size).toBe(1);

    const webhook = new Webhook(SECRET);
    for (const delivery of receiver.deliveries) {
      expect(() => webhook.verify(delivery.body, delivery.headers as Record<string, string>)).not.toThrow();
      expect(delivery.headers['content-type']).toBe('application/json');
    }
    const final = await query(gateway, created.id);
    const succeeded = accepted.find((delivery) => JSON.parse(delivery.body).status === 'succeeded')!;
    expect(JSON.parse(succeeded.body)).toEqual(final.body);
    expect(JSON.stringify(receiver.deliveries)).not.toContain(KEY_A);
  });

  it('a state a query sees is called back at once, not at the next scheduled poll', async () => {
    receiver.deliveries.length = 0;
    // the first scheduled poll is an hour away: only the queries can have sent these callbacks
    const slow = gateway.variant({ callbacks: { allowLocal: true, pollIntervalsMs: { video: [3_600_000] }, signingSecret: SECRET } });
    const { body: created } = await create(slow, body({ callback_url: receiver.url }));
    const seen: string[] = [];
    for (let i = 0; i < 3; i += 1) seen.push((await query(slow, created.id)).body.status);
    expect(seen).toEqual(['queued', 'running', 'succeeded']);
    const accepted = await receiver.accepted(3);
    const states = accepted.map((delivery) => (JSON.parse(delivery.body) as { status: string }).status);
    expect([...states].sort()).toEqual(['queued', 'running', 'succeeded']);
    const final = await query(slow, created.id);
    expect(JSON.parse(accepted.find((d) => JSON.parse(d.body).status === 'succeeded')!.body)).toEqual(final.body);
    // a repeated query of the terminal state sends nothing more, and Ark was asked once per query
    await query(slow, created.id);
    expect(receiver.deliveries.filter((d) => d.status < 300)).toHaveLength(3);
    expect(ark.taskGets()).toHaveLength(3);
    await slow.close();
  });

  it('stops following a terminal task and gives up after maxAttempts', async () => {
    receiver.deliveries.length = 0;
    receiver.failFirst = 100;
    const logged: string[] = [];
    const giving = gateway.variant({
      callbacks: { allowLocal: true, pollIntervalsMs: { video: [20] }, retryBaseMs: 5, retryMaxMs: 10, maxAttempts: 3 },
      logger: { error: (_fields, message) => logged.push(message) },
    });
    ark.scripts.push(['failed']);
    await create(giving, body({ callback_url: receiver.url }));
    const deadline = Date.now() + 5_000;
    while (!logged.includes('callback delivery given up') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await giving.close();
    expect(logged).toContain('callback delivery given up');
    expect(receiver.deliveries).toHaveLength(3);
    expect(ark.taskGets()).toHaveLength(1);
    receiver.failFirst = 0;
  });
});

describe('assets in task content', () => {
  it("accepts the caller's own asset, refuses another tenant's and unknown ones", async () => {
    await store.putAsset({ id: 'asset-20260320120147-aaaaa', owner: 'tenant-a', createdAt: Date.now() });
    const content = (id: string) => [
      { type: 'text', text: 'x' },
      { type: 'image_url', image_url: { url: `asset://${id}` }, role: 'reference_image' },
    ];
    const own = await create(gateway, { model: 'seedance', content: content('asset-20260320120147-aaaaa') });
    const foreign = await create(gateway, { model: 'seedance', content: content('asset-20260320120147-aaaaa') }, KEY_B);
    const unknown = await create(gateway, { model: 'seedance', content: content('asset-unknown') });
    expect(own.status).toBe(200);
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.message).toBe("content[1].image_url.url references 'asset://asset-20260320120147-aaaaa', which is not one of your assets");
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toBe("content[1].image_url.url references 'asset://asset-unknown', which is not one of your assets");
    expect(ark.apiRequests()).toHaveLength(1);
  });

  it("allow.operatorAssets accepts assets created outside the gateway, never another tenant's", async () => {
    const open = gateway.variant({ allow: { operatorAssets: true } });
    const content = (id: string) => [
      { type: 'text', text: 'x' },
      { type: 'video_url', video_url: { url: `asset://${id}` }, role: 'reference_video' },
    ];
    const operator = await create(open, { model: 'seedance', content: content('asset-20260101093000-op001') });
    const foreign = await create(open, { model: 'seedance', content: content('asset-20260320120147-aaaaa') }, KEY_B);
    await open.close();
    expect(operator.status).toBe(200);
    expect(foreign.status).toBe(400);
  });
});
