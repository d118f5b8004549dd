// What is charged is what is asked (README "Tenant controls", quotas): `n` is one integer wherever it
// arrives (JSON, a form field, DashScope's `parameters.n`, the native route), anything else is a 400 that
// names `n` before any upstream call; every image route charges, before the upstream call, the most the
// upstream may return for the request as sent, gives back what did not come, and never answers more
// images than it charged; a video task is charged the seconds its `duration`, `frames` or text commands
// ask for, and two that disagree are a 400. The documented cases come first, then every image
// route with both body kinds, then the refusals and the video lengths. Charges are read from the quota.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { UsageEvent } from '../../lib/index.js';
import { type FakeArk, startFakeArk } from '../helpers/fake-ark.js';
import { ARK_IMAGES, DASHSCOPE_GENERATION, type FakePaidImages, OPENAI_EDITS, OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { type GatewayFixture, gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';
import { quotaUsed } from '../helpers/paid-work.js';

const NATIVE = '/api/v3/images/generations';
const TASKS = '/api/v3/contents/generations/tasks';

const gw = await gatewayWith({
  fakes: { images: startFakePaidImages, ark: startFakeArk },
  resolve: ({ model, route }, { images, ark }) => {
    if (route === 'video.tasks') return { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-key' };
    if (route === 'images.native') return { provider: 'ark', baseURL: images.arkBaseURL, apiKey: 'ark-key' };
    if (model === 'x-image-2.0') return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-2.0' };
    if (model === 'x-image-edit') return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-edit-plus' };
    return { provider: 'openai', baseURL: images.openaiBaseURL, apiKey: 'oa-key' };
  },
  tenancy: { quotas: { limits: { imagesPerMinute: 100_000, videoSecondsPerDay: 100_000 } } },
  resetEach: true,
});
const images: FakePaidImages = gw.fakes.images;
const ark: FakeArk = gw.fakes.ark;
type Fixture = GatewayFixture<{ images: typeof startFakePaidImages; ark: typeof startFakeArk }>;

const json = (path: string, body: object | string) =>
  request(gw.app)
    .post(path)
    .set('Authorization', `Bearer ${KEY_A}`)
    .set('Content-Type', 'application/json')
    .send(typeof body === 'string' ? body : JSON.stringify(body));

/** A multipart edit: `fields` in order (a name twice sends it twice), one image file. */
const form = (model: string, fields: Array<[string, string]>) => {
  let req = request(gw.app).post(OPENAI_EDITS).set('Authorization', `Bearer ${KEY_A}`).field('model', model).field('prompt', 'make it snow');
  for (const [name, value] of fields) req = req.field(name, value);
  return req.attach('image', TINY_PNG, { filename: 'in.png', contentType: 'image/png' });
};

/** Images an answer holds: `data` (OpenAI shape) or DashScope's choices (contract §2.4 shape). */
function answeredImages(body: unknown): number {
  const data = (body as { data?: unknown[] }).data;
  if (Array.isArray(data)) return data.length;
  const choices = (body as { output?: { choices?: Array<{ message?: { content?: unknown[] } }> } }).output?.choices ?? [];
  return choices.reduce((sum, choice) => sum + (choice.message?.content?.length ?? 0), 0);
}

const lastImageEvent = (fixture: Fixture): UsageEvent | undefined => fixture.usage.filter((event) => event.route.startsWith('images.')).at(-1);

/** `param` names `n`: `n`, `parameters.n`, or the field as sent (`n[0]`). */
const NAMES_N = /^(parameters\.)?n(\[\d*\])?$/;

interface Charged {
  status: number;
  body: unknown;
  /** Charged while the upstream worked: before anything came back. */
  held: number;
  /** Charged once the answer was written: after what did not come was given back. */
  final: number;
  answered: number;
  /** What the upstream was asked for, as it read the request it received. */
  asked: number;
}

/** Sends a request the upstream answers, holding the upstream to read the charge made before the call. */
async function charge(send: () => request.Test): Promise<Charged> {
  const before = await quotaUsed(gw.router, 'images');
  const started = images.started();
  const release = images.hold();
  let early: request.Response | undefined;
  const pending = send().then((res) => (early = res));
  let held: number;
  try {
    await expect.poll(() => images.started() > started || early !== undefined, { timeout: 5_000, interval: 10 }).toBe(true);
    if (images.started() === started) throw new Error(`answered ${early?.status} before the upstream was asked: ${early?.text}`);
    held = (await quotaUsed(gw.router, 'images')) - before;
  } finally {
    release();
  }
  const res = await pending;
  // the charge settles when the answer ends
  await new Promise((resolve) => setTimeout(resolve, 50));
  const final = (await quotaUsed(gw.router, 'images')) - before;
  return { status: res.status, body: res.body as unknown, held, final, answered: answeredImages(res.body), asked: images.generations.at(-1)!.asked };
}

/** The rules every answered image request keeps. */
function expectChargedAsAsked(result: Charged, asked: number): void {
  expect(result.status).toBe(200);
  expect(result.asked, 'asked upstream').toBe(asked);
  expect(result.held, 'charged before the upstream answered').toBe(asked);
  expect(result.answered, 'never more answered than charged').toBeLessThanOrEqual(result.held);
  expect(result.final, 'charged once answered').toBe(result.answered);
  expect(lastImageEvent(gw)?.images, 'usage event images').toBe(result.answered);
}

/** A refusal before the upstream: 400 naming `n`, nothing started, nothing charged. */
async function expectRefusedNamingN(send: () => request.Test): Promise<void> {
  const before = await quotaUsed(gw.router, 'images');
  const started = images.started();
  const res = await send();
  expect(res.status, res.text.slice(0, 160)).toBe(400);
  expect(res.body.error.type).toBe('invalid_request_error');
  expect(res.body.error.param).toMatch(NAMES_N);
  expect(images.started(), 'upstream called').toBe(started);
  expect((await quotaUsed(gw.router, 'images')) - before, 'charged').toBe(0);
}

describe('charge against ask: the documented cases', () => {
  it('/v1/images/edits with the multipart field n[0]=5: a 400 naming n, the upstream never asked', async () => {
    await expectRefusedNamingN(() => form('gpt-image-1', [['n[0]', '5']]));
  });

  it('/v1/images/edits with the fields n=1 and n=5: a 400 naming n, the upstream never gets both', async () => {
    await expectRefusedNamingN(() =>
      form('gpt-image-1', [
        ['n', '1'],
        ['n', '5'],
      ]),
    );
  });

  it('/v1/images/generations JSON n: 50 to an OpenAI-compatible upstream: above what the route allows, a 400, never forwarded', async () => {
    await expectRefusedNamingN(() => json(OPENAI_IMAGES, { model: 'gpt-image-1', prompt: 'a fox', n: 50 }));
  });

  it('/api/v3/images/generations n: 10 to an upstream that honours it: never more answered than charged; 20 images cost 20', async () => {
    let charged = 0;
    let answered = 0;
    for (let round = 0; round < 2; round += 1) {
      const before = await quotaUsed(gw.router, 'images');
      const started = images.started();
      const res = await json(NATIVE, { model: 'seedream', prompt: 'a fox', n: 10 });
      if (res.status === 400) {
        // refusing `n` on a route whose vendor has none is as good: named, nothing asked, nothing charged
        expect(res.body.error.param).toMatch(NAMES_N);
        expect(images.started()).toBe(started);
        expect(await quotaUsed(gw.router, 'images')).toBe(before);
        continue;
      }
      expect(res.status).toBe(200);
      const count = answeredImages(res.body);
      const used = (await quotaUsed(gw.router, 'images')) - before;
      expect(count, 'answered').toBeLessThanOrEqual(used);
      expect(used, 'charged').toBe(count);
      charged += used;
      answered += count;
    }
    expect(charged).toBe(answered);
  });

  it('a video task with frames: 289 and no duration is charged about 12 s (289 frames at 24 fps), and frames=289 is sent', async () => {
    const before = await quotaUsed(gw.router, 'video-seconds');
    const res = await json(TASKS, { model: 'seedance', content: [{ type: 'text', text: 'a cat on a wall' }], frames: 289 });
    expect(res.status).toBe(200);
    const used = (await quotaUsed(gw.router, 'video-seconds')) - before;
    expect(used).toBeGreaterThanOrEqual(12);
    expect(used).toBeLessThanOrEqual(13);
    expect((ark.requests.filter((r) => r.method === 'POST').at(-1)?.json as { frames?: unknown }).frames).toBe(289);
  });
});

describe('every image route and both body kinds: charged what is asked, given back what did not come', () => {
  interface Row {
    name: string;
    send: () => request.Test;
    /** What the upstream must be asked for, and so charged before it answers. */
    asked: number;
    /** How the upstream misbehaves or falls short for this row. */
    upstream?: { extraImages?: number; sequenceReturns?: number };
  }
  const rows: Row[] = [
    { name: 'JSON /v1/images/generations, OpenAI-compatible, no n', send: () => json(OPENAI_IMAGES, { model: 'gpt-image-1', prompt: 'a fox' }), asked: 1 },
    { name: 'JSON /v1/images/generations, OpenAI-compatible, n: 3', send: () => json(OPENAI_IMAGES, { model: 'gpt-image-1', prompt: 'a fox', n: 3 }), asked: 3 },
    { name: 'JSON /v1/images/generations, OpenAI-compatible, n: 10', send: () => json(OPENAI_IMAGES, { model: 'gpt-image-1', prompt: 'a fox', n: 10 }), asked: 10 },
    {
      name: 'JSON /v1/images/generations, OpenAI-compatible, n: 2, an upstream that answers 2 more',
      send: () => json(OPENAI_IMAGES, { model: 'gpt-image-1', prompt: 'a fox', n: 2 }),
      asked: 2,
      upstream: { extraImages: 2 },
    },
    { name: 'JSON /v1/images/generations, DashScope family, top-level n: 3', send: () => json(OPENAI_IMAGES, { model: 'x-image-2.0', prompt: 'a fox', n: 3 }), asked: 3 },
    {
      name: 'JSON /v1/images/generations, DashScope family, multimodal body with parameters.n: 4',
      send: () => json(OPENAI_IMAGES, { model: 'x-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'a fox' }] }] }, parameters: { n: 4 } }),
      asked: 4,
    },
    {
      name: 'JSON /v1/images/generations, DashScope family, parameters.n: 2, an upstream that answers 3 more',
      send: () => json(OPENAI_IMAGES, { model: 'x-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'a fox' }] }] }, parameters: { n: 2 } }),
      asked: 2,
      upstream: { extraImages: 3 },
    },
    { name: 'multipart /v1/images/edits, OpenAI-compatible, no n', send: () => form('gpt-image-1', []), asked: 1 },
    { name: 'multipart /v1/images/edits, OpenAI-compatible, n=3', send: () => form('gpt-image-1', [['n', '3']]), asked: 3 },
    { name: 'multipart /v1/images/edits, OpenAI-compatible, n=2, an upstream that answers 1 more', send: () => form('gpt-image-1', [['n', '2']]), asked: 2, upstream: { extraImages: 1 } },
    { name: 'multipart /v1/images/edits, DashScope family, n=2', send: () => form('x-image-edit', [['n', '2']]), asked: 2 },
    { name: 'JSON /api/v3/images/generations, one image', send: () => json(NATIVE, { model: 'seedream', prompt: 'a fox' }), asked: 1 },
    {
      name: 'JSON /api/v3/images/generations, a sequence of max_images 4 that returns 2',
      send: () => json(NATIVE, { model: 'seedream', prompt: 'a fox', sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 4 } }),
      asked: 4,
      upstream: { sequenceReturns: 2 },
    },
    {
      name: 'JSON /api/v3/images/generations, a sequence without max_images (at most 15) that returns 3',
      send: () => json(NATIVE, { model: 'seedream', prompt: 'a fox', sequential_image_generation: 'auto' }),
      asked: 15,
      upstream: { sequenceReturns: 3 },
    },
    {
      name: 'JSON /api/v3/images/generations, a sequence of max_images 3 from an upstream that answers 2 more',
      send: () => json(NATIVE, { model: 'seedream', prompt: 'a fox', sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 3 } }),
      asked: 3,
      upstream: { extraImages: 2 },
    },
  ];
  for (const row of rows)
    it(row.name, async () => {
      images.extraImages = row.upstream?.extraImages ?? 0;
      images.sequenceReturns = row.upstream?.sequenceReturns;
      try {
        expectChargedAsAsked(await charge(row.send), row.asked);
      } finally {
        images.extraImages = 0;
        images.sequenceReturns = undefined;
      }
    });

  it('the number charged is the number sent upstream: DashScope gets parameters.n as charged', async () => {
    const result = await charge(() => json(OPENAI_IMAGES, { model: 'x-image-2.0', prompt: 'a fox', n: 2 }));
    expectChargedAsAsked(result, 2);
    const sent = images.requests.filter((r) => r.path === DASHSCOPE_GENERATION).at(-1)?.json as { parameters?: { n?: unknown } };
    expect(sent.parameters?.n).toBe(2);
  });

  it('the number charged is the number sent upstream: the native route forwards max_images as charged', async () => {
    const result = await charge(() => json(NATIVE, { model: 'seedream', prompt: 'a fox', sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 5 } }));
    expectChargedAsAsked(result, 5);
    const sent = images.requests.filter((r) => r.path === ARK_IMAGES).at(-1)?.json as { sequential_image_generation_options?: { max_images?: unknown } };
    expect(sent.sequential_image_generation_options?.max_images).toBe(5);
  });
});

describe('n is one integer wherever it arrives: anything else is a 400 naming n, before any upstream call', () => {
  const refusals: Array<{ name: string; send: () => request.Test }> = [
    { name: 'JSON, OpenAI-compatible, n: [2]', send: () => json(OPENAI_IMAGES, { model: 'gpt-image-1', prompt: 'a fox', n: [2] }) },
    { name: 'JSON, OpenAI-compatible, n: 2.5', send: () => json(OPENAI_IMAGES, { model: 'gpt-image-1', prompt: 'a fox', n: 2.5 }) },
    { name: 'JSON, OpenAI-compatible, n: "2"', send: () => json(OPENAI_IMAGES, { model: 'gpt-image-1', prompt: 'a fox', n: '2' }) },
    { name: 'JSON, OpenAI-compatible, n: true', send: () => json(OPENAI_IMAGES, { model: 'gpt-image-1', prompt: 'a fox', n: true }) },
    { name: 'JSON, OpenAI-compatible, n: 0', send: () => json(OPENAI_IMAGES, { model: 'gpt-image-1', prompt: 'a fox', n: 0 }) },
    { name: 'JSON, OpenAI-compatible, n: 11 (above the route)', send: () => json(OPENAI_IMAGES, { model: 'gpt-image-1', prompt: 'a fox', n: 11 }) },
    { name: 'JSON, DashScope family, n: [2]', send: () => json(OPENAI_IMAGES, { model: 'x-image-2.0', prompt: 'a fox', n: [2] }) },
    { name: 'JSON, DashScope family, parameters.n: [2]', send: () => json(OPENAI_IMAGES, { model: 'x-image-2.0', prompt: 'a fox', parameters: { n: [2] } }) },
    { name: 'JSON, DashScope family, parameters.n: 2.5', send: () => json(OPENAI_IMAGES, { model: 'x-image-2.0', prompt: 'a fox', parameters: { n: 2.5 } }) },
    { name: 'JSON, DashScope family, parameters.n: "3"', send: () => json(OPENAI_IMAGES, { model: 'x-image-2.0', prompt: 'a fox', parameters: { n: '3' } }) },
    { name: 'JSON, DashScope family, parameters.n: 7 (above the family)', send: () => json(OPENAI_IMAGES, { model: 'x-image-2.0', prompt: 'a fox', parameters: { n: 7 } }) },
    { name: 'multipart, OpenAI-compatible, n[0]=5', send: () => form('gpt-image-1', [['n[0]', '5']]) },
    { name: 'multipart, OpenAI-compatible, n[]=2', send: () => form('gpt-image-1', [['n[]', '2']]) },
    {
      name: 'multipart, OpenAI-compatible, n=1 and n=5',
      send: () =>
        form('gpt-image-1', [
          ['n', '1'],
          ['n', '5'],
        ]),
    },
    { name: 'multipart, OpenAI-compatible, n=2.5', send: () => form('gpt-image-1', [['n', '2.5']]) },
    { name: 'multipart, OpenAI-compatible, n=two', send: () => form('gpt-image-1', [['n', 'two']]) },
    { name: 'multipart, OpenAI-compatible, n=50 (above the route)', send: () => form('gpt-image-1', [['n', '50']]) },
    { name: 'multipart, DashScope family, n[0]=5', send: () => form('x-image-edit', [['n[0]', '5']]) },
    {
      name: 'multipart, DashScope family, n=1 and n=5',
      send: () =>
        form('x-image-edit', [
          ['n', '1'],
          ['n', '5'],
        ]),
    },
    { name: 'native /api/v3/images/generations, n: [2]', send: () => json(NATIVE, { model: 'seedream', prompt: 'a fox', n: [2] }) },
    { name: 'native /api/v3/images/generations, n: 2.5', send: () => json(NATIVE, { model: 'seedream', prompt: 'a fox', n: 2.5 }) },
  ];
  for (const { name, send } of refusals)
    it(name, async () => {
      await expectRefusedNamingN(send);
    });
});

describe('video seconds come from every field that sets a length', () => {
  const video = (extra: Record<string, unknown>, text = 'a cat on a wall') => ({ model: 'seedance', content: [{ type: 'text', text }], ...extra });
  const creates = () => ark.requests.filter((r) => r.method === 'POST').length;

  const charged: Array<{ name: string; body: object; seconds: [number, number] }> = [
    { name: 'duration: 7', body: video({ duration: 7 }), seconds: [7, 7] },
    { name: 'frames: 289 (24 fps)', body: video({ frames: 289 }), seconds: [12, 13] },
    { name: 'frames: 121 (24 fps)', body: video({ frames: 121 }), seconds: [5, 6] },
    { name: 'text --dur 7', body: video({}, 'a cat on a wall --ratio 16:9 --dur 7'), seconds: [7, 7] },
    { name: 'text --duration 7', body: video({}, 'a cat on a wall --duration 7'), seconds: [7, 7] },
    { name: 'text --frames 289', body: video({}, 'a cat on a wall --frames 289'), seconds: [12, 13] },
    { name: 'text --fr 289', body: video({}, 'a cat on a wall --fr 289'), seconds: [12, 13] },
    { name: 'duration: 6 and text --dur 6 (they agree)', body: video({ duration: 6 }, 'a cat on a wall --dur 6'), seconds: [6, 6] },
    { name: 'no length at all (the default)', body: video({}), seconds: [5, 5] },
  ];
  for (const { name, body, seconds } of charged)
    it(`${name} is charged what it asks`, async () => {
      const before = await quotaUsed(gw.router, 'video-seconds');
      const res = await json(TASKS, body);
      expect(res.status, res.text.slice(0, 160)).toBe(200);
      const used = (await quotaUsed(gw.router, 'video-seconds')) - before;
      expect(used).toBeGreaterThanOrEqual(seconds[0]);
      expect(used).toBeLessThanOrEqual(seconds[1]);
    });

  const disagreeing: Array<{ name: string; body: object }> = [
    { name: 'duration: 5 and frames: 289', body: video({ duration: 5, frames: 289 }) },
    { name: 'duration: 5 and text --dur 10', body: video({ duration: 5 }, 'a cat on a wall --dur 10') },
    { name: 'duration: 5 and text --duration 10', body: video({ duration: 5 }, 'a cat on a wall --duration 10') },
    { name: 'text --dur 5 --frames 289', body: video({}, 'a cat on a wall --dur 5 --frames 289') },
    { name: 'frames: 121 and text --fr 289', body: video({ frames: 121 }, 'a cat on a wall --fr 289') },
    { name: 'text --duration 5 --dur 10', body: video({}, 'a cat on a wall --duration 5 --dur 10') },
  ];
  for (const { name, body } of disagreeing)
    it(`${name} disagree: a 400, nothing created, nothing charged`, async () => {
      const before = await quotaUsed(gw.router, 'video-seconds');
      const created = creates();
      const res = await json(TASKS, body);
      expect(res.status, res.text.slice(0, 160)).toBe(400);
      expect(res.body.error.type).toBe('invalid_request_error');
      expect(creates()).toBe(created);
      expect((await quotaUsed(gw.router, 'video-seconds')) - before).toBe(0);
    });
});
