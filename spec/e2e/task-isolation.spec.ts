// Tenant data isolation in tasks and assets (contract §2.6, §2.7; docs/architecture.md: a tenant's tasks and assets
// are its own): asset:// references are checked in every string of a content item, not only in the
// field the item's type names; with allow.operatorAssets only exact, well-formed ids pass; recording an
// asset never moves it to another tenant; the in-memory store evicts a tenant's own tasks, never
// another tenant's because one created many; and asset records are never forgotten (a full cap refuses).
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayConfigError, type MemoryTaskStoreOptions, memoryTaskStore, type TaskRecord, type TaskStore, type Upstream } from '../../lib/index.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { type FakeUpstream, sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B, type TestGateway, createTestGateway } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';

const TASKS = '/api/v3/contents/generations/tasks';
const CREATE_ASSET = '/api/v3/open/CreateAsset';
/** tenant-b's asset, recorded in the store: the one tenant-a tries to reach */
const B_ASSET = 'asset-20260320120147-bbbbb';
const A_ASSET = 'asset-20260320120147-aaaaa';
/** what the fake OpenAPI answers to every CreateAsset, so two tenants can get the same id */
const DUPLICATE_ASSET = 'asset-20260320120147-dupli';

const store: TaskStore = memoryTaskStore();
await store.putAsset({ id: B_ASSET, owner: 'tenant-b', createdAt: Date.now() });
await store.putAsset({ id: A_ASSET, owner: 'tenant-a', createdAt: Date.now() });

const gateway = await gatewayWith({
  fakes: {
    ark: startFakeArk,
    openapi: () =>
      startFakeUpstream((_req, res) => {
        sendJson(res, 200, { ResponseMetadata: { RequestId: 'r-dup', Action: 'CreateAsset', Version: '2024-01-01', Service: 'ark', Region: 'cn-beijing' }, Result: { Id: DUPLICATE_ASSET } });
      }),
  },
  store,
  resolve: ({ route }, { ark, openapi }): Upstream | null => {
    if (route === 'video.tasks') return { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-operator-key' };
    if (route === 'assets') return { provider: 'ark', baseURL: openapi.origin, accessKeyId: 'AKLTtest', secretAccessKey: 'c2VjcmV0LXNlY3JldA==', region: 'cn-beijing' };
    return null;
  },
});
const operatorGateway = gateway.variant({ allow: { operatorAssets: true } });
const { ark } = gateway.fakes;
afterEach(() => {
  ark.requests.length = 0;
});

const createTask = (gw: TestGateway, content: unknown[], key = KEY_A) => request(gw.app).post(TASKS).set('Authorization', `Bearer ${key}`).send({ model: 'seedance', content });
const text = { type: 'text', text: 'The girl looks at the camera' };

const notYours = (path: string, reference: string) => ({
  error: { message: `${path} references '${reference}', which is not one of your assets`, type: 'invalid_request_error', code: 'invalid_request_error', param: path },
});

describe('asset:// references are checked wherever they appear in a content item', () => {
  const smuggled: Array<[string, Record<string, unknown>, string]> = [
    ['a text item carrying image_url', { ...text, image_url: { url: `asset://${B_ASSET}` } }, 'content[1].image_url.url'],
    [
      'an image_url item carrying video_url',
      { type: 'image_url', image_url: { url: 'https://images.example.com/a.png' }, video_url: { url: `asset://${B_ASSET}` }, role: 'reference_image' },
      'content[1].video_url.url',
    ],
    [
      'a field a future Ark version adds, nested',
      { type: 'image_url', image_url: { url: 'https://images.example.com/a.png', fallbacks: [{ uri: `asset://${B_ASSET}` }] } },
      'content[1].image_url.fallbacks[0].uri',
    ],
    ['an audio_url item with a top-level reference', { type: 'audio_url', audio_url: { url: 'https://media.example.com/a.mp3' }, reference: `asset://${B_ASSET}` }, 'content[1].reference'],
    ['a draft_task item carrying image_url', { type: 'draft_task', draft_task: { id: 'task_AAAAAAAAAAAAAAAAAAAAAA' }, image_url: { url: `asset://${B_ASSET}` } }, 'content[1].image_url.url'],
  ];
  it.each(smuggled)('%s: 400 naming the field, Ark gets nothing', async (_name, item, path) => {
    const res = await createTask(gateway, [text, item]);
    expect(res.status).toBe(400);
    expect(res.body).toStrictEqual(notYours(path, `asset://${B_ASSET}`));
    expect(ark.apiRequests()).toHaveLength(0);
  });

  it("the caller's own asset in such a field passes through unchanged; another tenant's in the same place does not", async () => {
    const item = (id: string) => ({ type: 'image_url', image_url: { url: 'https://images.example.com/a.png', fallbacks: [{ uri: `asset://${id}` }] }, role: 'reference_image' });
    const own = await createTask(gateway, [text, item(A_ASSET)]);
    expect(own.status).toBe(200);
    expect(ark.apiRequests()[0]?.json).toMatchObject({ content: [text, item(A_ASSET)] });
    const foreign = await createTask(gateway, [text, item(A_ASSET)], KEY_B);
    expect(foreign.body).toStrictEqual(notYours('content[1].image_url.fallbacks[0].uri', `asset://${A_ASSET}`));
    expect(ark.apiRequests()).toHaveLength(1);
  });

  it('a media URL in a field the type does not name gets the URL rules too', async () => {
    const res = await createTask(gateway, [text, { ...text, video_url: { url: 'http://127.0.0.1:9/internal.mp4' } }]);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request_error', param: 'content[1].video_url.url' });
    expect(ark.apiRequests()).toHaveLength(0);
  });

  it("a draft_task field on another item type must name one of the caller's tasks", async () => {
    const res = await createTask(gateway, [text, { type: 'image_url', image_url: { url: 'https://images.example.com/a.png' }, draft_task: { id: 'cgt-20250101-someone-elses' } }]);
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('content[1].draft_task.id');
    expect(ark.apiRequests()).toHaveLength(0);
  });
});

describe('allow.operatorAssets: only exact, well-formed asset ids', () => {
  const variants: Array<[string, string]> = [
    ['upper-case id', `asset://${B_ASSET.toUpperCase()}`],
    ['upper-case suffix', `asset://${B_ASSET.slice(0, -5)}BBBBB`],
    ['leading space', `asset:// ${B_ASSET}`],
    ['trailing space', `asset://${B_ASSET} `],
    ['query', `asset://${B_ASSET}?v=1`],
    ['fragment', `asset://${B_ASSET}#x`],
    ['path', `asset://${B_ASSET}/`],
    ['percent-encoded letter', `asset://%61sset-20260320120147-bbbbb`],
    ['percent-encoded hyphen', `asset://asset-20260320120147%2Dbbbbb`],
    ['three slashes', `asset:///${B_ASSET}`],
  ];
  it.each(variants)('%s: 400, Ark gets nothing', async (_name, url) => {
    const res = await createTask(operatorGateway, [text, { type: 'image_url', image_url: { url }, role: 'reference_image' }]);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request_error', param: 'content[1].image_url.url' });
    expect(ark.apiRequests()).toHaveLength(0);
  });

  it("an exact id of Ark's shape recorded for nobody passes (the operator's library); one of another shape does not", async () => {
    const item = (url: string) => ({ type: 'video_url', video_url: { url }, role: 'reference_video' });
    const operator = await createTask(operatorGateway, [text, item('asset://asset-20260101093000-op001')]);
    expect(operator.status).toBe(200);
    const unshaped = await createTask(operatorGateway, [text, item('asset://asset-operator-library')]);
    expect(unshaped.body).toStrictEqual(notYours('content[1].video_url.url', 'asset://asset-operator-library'));
    expect(ark.apiRequests()).toHaveLength(1);
  });
});

describe('CreateAsset never moves an asset to another tenant', () => {
  const body = { GroupId: 'group-20260320120601-hsw4s', URL: 'https://media.example.com/girl.png', AssetType: 'Image' };

  it('a second tenant handed the same id by the upstream gets a 502 and no id; the first keeps it', async () => {
    const first = await request(gateway.app).post(CREATE_ASSET).set('Authorization', `Bearer ${KEY_A}`).send(body);
    expect(first.status).toBe(200);
    expect(first.body.Result).toStrictEqual({ Id: DUPLICATE_ASSET });

    const second = await request(gateway.app).post(CREATE_ASSET).set('Authorization', `Bearer ${KEY_B}`).send(body);
    expect(second.status).toBe(502);
    expect(second.body).toStrictEqual({
      error: {
        message: 'The volcengine upstream returned an unusable response: the asset id it created is already recorded for another caller (request id r-dup)',
        type: 'upstream_error',
        code: 'upstream_bad_response',
        param: null,
      },
    });
    expect((await store.getAsset(DUPLICATE_ASSET))?.owner).toBe('tenant-a');

    const content = [text, { type: 'image_url', image_url: { url: `asset://${DUPLICATE_ASSET}` }, role: 'reference_image' }];
    expect((await createTask(gateway, content, KEY_B)).status).toBe(400);
    expect((await createTask(gateway, content, KEY_A)).status).toBe(200);

    // the owner creating it again is answered normally
    const again = await request(gateway.app).post(CREATE_ASSET).set('Authorization', `Bearer ${KEY_A}`).send(body);
    expect(again.status).toBe(200);
    expect((await store.getAsset(DUPLICATE_ASSET))?.owner).toBe('tenant-a');
  });
});

describe('memoryTaskStore caps: a tenant that creates many evicts only its own oldest', () => {
  let n = 0;
  const task = (owner: string): TaskRecord => ({
    kind: 'video',
    id: `task-${owner}-${(n += 1)}`,
    owner,
    model: 'seedance',
    upstream: { provider: 'ark', baseURL: 'https://ark.example/api/v3', taskId: `cgt-${n}` },
    createdAt: n,
    status: 'queued',
    version: 1,
  });
  const asset = (owner: string) => ({ id: `asset-${owner}-${(n += 1)}`, owner, createdAt: n });

  it('maxTasksPerOwner: the busy tenant keeps its newest, the quiet one keeps all', async () => {
    const capped = memoryTaskStore({ maxTasks: 100, maxTasksPerOwner: 3 });
    const quiet = [task('tenant-b'), task('tenant-b')];
    for (const record of quiet) await capped.createTask(record);
    const busy = Array.from({ length: 20 }, () => task('tenant-a'));
    for (const record of busy) await capped.createTask(record);
    for (const record of quiet) expect(await capped.getTask(record.id)).toBeDefined();
    const kept = await Promise.all(busy.map((record) => capped.getTask(record.id)));
    expect(kept.map((record) => record?.id)).toStrictEqual([...Array(17).fill(undefined), ...busy.slice(17).map((record) => record.id)]);
  });

  it('maxTasks still holds, and it is the largest tenant whose oldest task goes', async () => {
    const capped = memoryTaskStore({ maxTasks: 6 });
    const quiet = [task('tenant-b'), task('tenant-c')];
    for (const record of quiet) await capped.createTask(record);
    const busy = Array.from({ length: 10 }, () => task('tenant-a'));
    for (const record of busy) await capped.createTask(record);
    for (const record of quiet) expect(await capped.getTask(record.id)).toBeDefined();
    const kept = (await Promise.all(busy.map((record) => capped.getTask(record.id)))).filter(Boolean);
    expect(kept.map((record) => record!.id)).toStrictEqual(busy.slice(6).map((record) => record.id));
  });

  // asset records are ownership, not a cache: a forgotten record would make another tenant's asset
  // pass as the operator's under allow.operatorAssets, so the caps refuse new assets instead
  it('assets are never evicted: past maxAssetsPerOwner or maxAssets, putAsset rejects and every record stays', async () => {
    const capped = memoryTaskStore({ maxAssets: 5, maxAssetsPerOwner: 4 });
    const quiet = asset('tenant-b');
    await capped.putAsset(quiet);
    const busy = Array.from({ length: 4 }, () => asset('tenant-a'));
    for (const record of busy) await capped.putAsset(record);
    await expect(capped.putAsset(asset('tenant-a'))).rejects.toMatchObject({ name: 'AssetCapacityError', scope: 'owner', limit: 4 });
    await expect(capped.putAsset(asset('tenant-c'))).rejects.toMatchObject({ name: 'AssetCapacityError', scope: 'store', limit: 5 });
    // the owner recording an id it already has is a replacement, not a new asset
    await capped.putAsset({ ...busy[0]!, createdAt: 0 });
    expect(await capped.getAsset(busy[0]!.id)).toStrictEqual({ ...busy[0]!, createdAt: 0 });
    expect(await capped.getAsset(quiet.id)).toStrictEqual(quiet);
    for (const record of busy.slice(1)) expect(await capped.getAsset(record.id)).toStrictEqual(record);
  });

  it('by default one tenant keeps at most 10,000 tasks and never pushes out another tenant', async () => {
    const store = memoryTaskStore();
    const quiet = task('tenant-b');
    await store.createTask(quiet);
    const first = task('tenant-a');
    await store.createTask(first);
    for (let i = 0; i < 10_000; i += 1) await store.createTask(task('tenant-a'));
    expect(await store.getTask(first.id)).toBeUndefined();
    expect(await store.getTask(quiet.id)).toStrictEqual(quiet);
  });

  const bad: Array<[string, MemoryTaskStoreOptions]> = [
    ['maxTasks 0', { maxTasks: 0 }],
    ['maxTasks fractional', { maxTasks: 1.5 }],
    ['maxTasksPerOwner negative', { maxTasksPerOwner: -1 }],
    ['maxAssets NaN', { maxAssets: Number.NaN }],
    ['maxAssetsPerOwner a string', { maxAssetsPerOwner: '10' as unknown as number }],
  ];
  it.each(bad)('%s: a GatewayConfigError at creation', (_name, options) => {
    expect(() => memoryTaskStore(options)).toThrow(GatewayConfigError);
  });
});

describe('asset records are never forgotten: a full store refuses new assets', () => {
  const body = { GroupId: 'group-20260320120601-hsw4s', URL: 'https://media.example.com/girl.png', AssetType: 'Image' };
  let counting: FakeUpstream;
  let calls = 0;
  const gateways: TestGateway[] = [];
  beforeAll(async () => {
    counting = await startFakeUpstream((_req, res) => {
      calls += 1;
      const id = `asset-20260320120147-n${String(calls).padStart(4, '0')}`;
      sendJson(res, 200, { ResponseMetadata: { RequestId: `r-${calls}`, Action: 'CreateAsset', Version: '2024-01-01', Service: 'ark', Region: 'cn-beijing' }, Result: { Id: id } });
    });
  });
  afterAll(async () => {
    await Promise.all(gateways.map((gw) => gw.close()));
    await counting.close();
  });
  const gatewayOn = (taskStore: TaskStore, warnings: unknown[][] = []): TestGateway => {
    const gw = createTestGateway({
      store: taskStore,
      allow: { operatorAssets: true },
      logger: { warn: (...args: unknown[]) => warnings.push(args) },
      resolveUpstream: ({ route }): Upstream | null => {
        if (route === 'video.tasks') return { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-operator-key' };
        if (route === 'assets') return { provider: 'ark', baseURL: counting.origin, accessKeyId: 'AKLTtest', secretAccessKey: 'c2VjcmV0LXNlY3JldA==', region: 'cn-beijing' };
        return null;
      },
    });
    gateways.push(gw);
    return gw;
  };
  const createAsset = (gw: TestGateway, key: string) => request(gw.app).post(CREATE_ASSET).set('Authorization', `Bearer ${key}`).send(body);
  const referencing = (id: string) => [text, { type: 'image_url', image_url: { url: `asset://${id}` }, role: 'reference_image' }];

  it("the review's scenario: at maxAssets, another tenant's recording never makes B's asset the operator's", async () => {
    const full = memoryTaskStore({ maxAssets: 3, maxAssetsPerOwner: 3 });
    const bAssets = ['asset-20260320120147-b0001', 'asset-20260320120147-b0002', 'asset-20260320120147-b0003'];
    for (const id of bAssets) await full.putAsset({ id, owner: 'tenant-b', createdAt: Date.now() });
    const warnings: unknown[][] = [];
    const gw = gatewayOn(full, warnings);
    expect((await createTask(gw, referencing(bAssets[0]!))).status).toBe(400);

    const before = calls;
    const res = await createAsset(gw, KEY_A);
    expect(res.status).toBe(503);
    expect(res.body).toStrictEqual({
      error: {
        message: "The gateway's asset store is full (3 assets recorded); new assets cannot be recorded until the operator raises the limit.",
        type: 'server_error',
        code: 'asset_store_full',
        param: null,
      },
    });
    // the store could tell before the upstream call: no upstream asset was created for nobody
    expect(calls).toBe(before);
    expect(warnings.length).toBeGreaterThan(0);

    const again = await createTask(gw, referencing(bAssets[0]!));
    expect(again.status).toBe(400);
    expect(again.body).toStrictEqual(notYours('content[1].image_url.url', `asset://${bAssets[0]}`));
    for (const id of bAssets) expect((await full.getAsset(id))?.owner).toBe('tenant-b');
  });

  it('maxAssetsPerOwner: the next CreateAsset is a 429 before the upstream is called; the owner keeps every asset', async () => {
    const capped = memoryTaskStore({ maxAssetsPerOwner: 2 });
    const warnings: unknown[][] = [];
    const gw = gatewayOn(capped, warnings);
    const ids: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const ok = await createAsset(gw, KEY_A);
      expect(ok.status).toBe(200);
      ids.push(ok.body.Result.Id as string);
    }
    const before = calls;
    const refused = await createAsset(gw, KEY_A);
    expect(refused.status).toBe(429);
    expect(refused.body).toStrictEqual({
      error: { message: 'this API key has recorded the most assets allowed: 2', type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null },
    });
    expect(calls).toBe(before);
    expect(warnings.length).toBeGreaterThan(0);
    expect(JSON.stringify(warnings)).not.toContain(KEY_A);
    for (const id of ids) expect((await createTask(gw, referencing(id))).status).toBe(200);
    // another tenant is not held back by tenant-a's cap
    expect((await createAsset(gw, KEY_B)).status).toBe(200);
  });

  it('a store that cannot tell beforehand: the upstream is called, the asset is not recorded, and the answer is still 429', async () => {
    const inner = memoryTaskStore({ maxAssetsPerOwner: 1 });
    // only the five required methods, as a third-party store may offer
    const plain: TaskStore = {
      createTask: (record) => inner.createTask(record),
      getTask: (id) => inner.getTask(id),
      updateTask: (id, version, changes) => inner.updateTask(id, version, changes),
      putAsset: (record) => inner.putAsset(record),
      getAsset: (id) => inner.getAsset(id),
    };
    const gw = gatewayOn(plain);
    const first = await createAsset(gw, KEY_A);
    expect(first.status).toBe(200);
    const before = calls;
    const refused = await createAsset(gw, KEY_A);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limit_exceeded');
    expect(calls).toBe(before + 1);
    // the upstream asset exists but is recorded for nobody; no caller got its id
    expect(JSON.stringify(refused.body)).not.toContain(`n${String(calls).padStart(4, '0')}`);
    expect(await inner.getAsset(`asset-20260320120147-n${String(calls).padStart(4, '0')}`)).toBeUndefined();
  });
});
