// Every line of a vendor's bill has its attempt (docs/tenancy-and-billing.md "The books"): each request
// the gateway wrote to a vendor is one attempt of `vendorWork.attempts`, whatever the vendor answered, under
// the id the vendor answered it with (a request id in a header or in the body, a task id). Against fakes
// that answer an id on every request and keep the bill (every request written, whether it started paid
// work): a failure after the vendor worked, an image task the gateway runs on a synchronous vendor, a
// stream cut after it started, each on OpenAI, DashScope and Ark; a fallback's refusal; an image task on
// DashScope's own task API; a video task's create (under the task id).
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import type { UsageEvent, VendorAttempt } from '../../lib/index.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { type BillLine, startFakeBilledVendor } from '../helpers/fake-billed-vendor.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { imageTaskEnded } from '../helpers/image-task-ended.js';
import { TINY_PNG } from '../helpers/images.js';

const gw = await gatewayWith({
  fakes: { vendor: () => startFakeBilledVendor('vendor'), spare: () => startFakeBilledVendor('spare'), ark: startFakeArk },
  resolve: ({ model, route }, { vendor, spare, ark }) => {
    if (route === 'video.tasks') return { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-key' };
    if (model === 'gpt-image-1') return { provider: 'openai', baseURL: vendor.openaiBaseURL, apiKey: 'oa-key' };
    if (model === 'x-image-2.0') return { provider: 'dashscope', baseURL: vendor.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-2.0' };
    // a model with DashScope's own task API: an image task is handed to it
    if (model === 'x-image-plus') return { provider: 'dashscope', baseURL: vendor.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-plus' };
    if (model === 'seedream-4') return { provider: 'ark', baseURL: vendor.arkBaseURL, apiKey: 'ark-key', model: 'doubao-seedream-4-0-250828' };
    // a list: the spare first, the fallback rule's next upstream when it refuses before any work
    if (model === 'gpt-image-listed')
      return [
        { provider: 'openai', baseURL: spare.openaiBaseURL, apiKey: 'spare-key', model: 'gpt-image-1' },
        { provider: 'openai', baseURL: vendor.openaiBaseURL, apiKey: 'oa-key', model: 'gpt-image-1' },
      ];
    return null;
  },
  callbacks: { pollIntervalsMs: { image: [1000] } },
  resetEach: true,
});
const { vendor, spare } = gw.fakes;
const auth = { Authorization: `Bearer ${KEY_A}` };

/** The bill lines both image vendors wrote since the test began (resetEach empties `requests`, not the bill). */
function billSince(marks: { vendor: number; spare: number }): BillLine[] {
  return [...spare.bill.slice(marks.spare), ...vendor.bill.slice(marks.vendor)];
}

const marks = () => ({ vendor: vendor.bill.length, spare: spare.bill.length });

/**
 * The books against the bill: one attempt per request written, each under the id the vendor answered,
 * and the vendor work booked for every request that started paid work (one image each).
 */
function expectEveryLineBooked(events: readonly UsageEvent[], lines: readonly BillLine[]): VendorAttempt[] {
  const attempts = events.flatMap((event) => event.vendorWork?.attempts ?? []);
  expect(lines.length, 'requests written').toBeGreaterThan(0);
  expect(attempts.length, 'one attempt per request written').toBe(lines.length);
  expect(attempts.map((attempt) => attempt.id ?? '(no id)').sort()).toEqual(lines.map((line) => line.id).sort());
  const vendorImages = events.reduce((sum, event) => sum + (event.vendorWork?.images ?? 0), 0);
  expect(vendorImages, 'Σ vendorWork.images = the images the vendor started').toBe(lines.filter((line) => line.paid).length);
  return attempts;
}

const MODELS = ['gpt-image-1', 'x-image-2.0', 'seedream-4'] as const;

describe('a vendor that answers 5xx after it worked', () => {
  it.each(MODELS)('%s: the failed attempt is listed under the request id the vendor answered', async (model) => {
    const from = marks();
    const answer = await request(gw.app).post('/v1/images/generations').set(auth).send({ model, prompt: 'a lighthouse [5xx]' });
    expect(answer.status).toBe(502);
    await vi.waitFor(() => expect(gw.usage).toHaveLength(1));
    const [attempt] = expectEveryLineBooked(gw.usage, billSince(from));
    expect(attempt).toMatchObject({ outcome: 'unknown', images: 1 });
  });

  it.each(MODELS.flatMap((model) => [`${model} [429]`, `${model} [garbage]`]))('%s: a refusal or an unreadable answer is listed under its id too', async (ask) => {
    const [model, word] = ask.split(' ') as [string, string];
    const from = marks();
    const answer = await request(gw.app)
      .post('/v1/images/generations')
      .set(auth)
      .send({ model, prompt: `a lighthouse ${word}` });
    expect(answer.status).toBe(word === '[429]' ? 429 : 502);
    await vi.waitFor(() => expect(gw.usage).toHaveLength(1));
    const [attempt] = expectEveryLineBooked(gw.usage, billSince(from));
    expect(attempt!.outcome).toBe(word === '[429]' ? 'refused' : 'unknown');
  });

  it('a fallback lists the refusal it passed over and the failure after it, each under its own id', async () => {
    const from = marks();
    const answer = await request(gw.app).post('/v1/images/generations').set(auth).send({ model: 'gpt-image-listed', prompt: 'a lighthouse [429@spare] [5xx]' });
    expect(answer.status).toBe(502);
    await vi.waitFor(() => expect(gw.usage).toHaveLength(1));
    const lines = billSince(from);
    expect(lines.map((line) => line.id)).toEqual(['spare-' + String(spare.bill.length), 'vendor-' + String(vendor.bill.length)]);
    const attempts = expectEveryLineBooked(gw.usage, lines);
    expect(attempts.map((attempt) => [attempt.id, attempt.outcome])).toEqual([
      [lines[0]!.id, 'refused'],
      [lines[1]!.id, 'unknown'],
    ]);
  });
});

describe('an image task the gateway runs on a synchronous vendor', () => {
  /** Submits a task, waits for its end, and returns its terminal event. */
  async function runTask(model: string, prompt: string): Promise<UsageEvent> {
    const submitted = await request(gw.app).post('/v1/images/generations').set(auth).set('Prefer', 'respond-async').send({ model, prompt });
    expect(submitted.status).toBe(202);
    const id = submitted.body.id as string;
    await imageTaskEnded(gw.app, id, KEY_A);
    let terminal: UsageEvent | undefined;
    await vi.waitFor(() => expect((terminal = gw.usage.find((event) => event.task?.id === id))).toBeDefined());
    return terminal!;
  }

  it.each(MODELS.flatMap((model) => ['', '[5xx]', '[429]', '[garbage]'].map((word) => `${model} ${word}`.trim())))(
    '%s: the terminal event lists the request it wrote under the id the vendor answered',
    async (ask) => {
      const [model, word = ''] = ask.split(' ') as [string, string?];
      const from = marks();
      const terminal = await runTask(model, `a lighthouse ${word}`);
      // (gpt-image answers b64_json, which a task keeps only with result storage: its task fails unkept either way)
      if (word !== '' || model !== 'gpt-image-1') expect(terminal.task?.status).toBe(word === '' ? 'succeeded' : 'failed');
      expectEveryLineBooked([terminal], billSince(from));
    },
  );

  it.each([
    ['that succeeds', ''],
    ['whose submit fails with a 5xx', '[5xx]'],
    ['whose submit is refused', '[429]'],
  ])("a task handed to the vendor's own task API %s is listed under the task id, or the request id of the failed submit", async (_name, word) => {
    const from = marks();
    const terminal = await runTask('x-image-plus', `a lighthouse ${word}`);
    expect(terminal.task?.status).toBe(word === '' ? 'succeeded' : 'failed');
    const [attempt] = expectEveryLineBooked([terminal], billSince(from));
    if (word === '') expect(attempt!.id).toMatch(/^vendor-task-/);
  });

  it('a task whose first upstream refused lists both requests, each under its own id', async () => {
    const from = marks();
    const terminal = await runTask('gpt-image-listed', 'a lighthouse [429@spare] [5xx]');
    const attempts = expectEveryLineBooked([terminal], billSince(from));
    expect(attempts.map((attempt) => attempt.outcome)).toEqual(['refused', 'unknown']);
  });
});

describe('a stream cut after it started, or failed as it opened', () => {
  /** Posts a stream, reads it to whatever end it has, and waits for the request's one usage event. */
  async function streamed(path: string, body: Record<string, unknown> | FormData): Promise<UsageEvent> {
    const json = !(body instanceof FormData);
    const answer = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { ...auth, ...(json ? { 'content-type': 'application/json' } : {}) },
      body: json ? JSON.stringify(body) : body,
    });
    await answer.text();
    await vi.waitFor(() => expect(gw.usage).toHaveLength(1));
    return gw.usage[0]!;
  }

  const group = { sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 1 } };
  const STREAMS: Array<[string, string, Record<string, unknown> | (() => FormData)]> = [
    ['a relayed OpenAI stream', '/v1/images/generations', { model: 'gpt-image-1', stream: true, partial_images: 1 }],
    [
      'a relayed OpenAI edit stream',
      '/v1/images/edits',
      () => {
        const form = new FormData();
        form.append('model', 'gpt-image-1');
        form.append('stream', 'true');
        form.append('partial_images', '1');
        form.append('image', new Blob([new Uint8Array(TINY_PNG)], { type: 'image/png' }), 'in.png');
        return form;
      },
    ],
    ['an Ark group the gateway translates', '/v1/images/generations', { model: 'seedream-4', stream: true, ...group }],
    ['an Ark group on the native route', '/api/v3/images/generations', { model: 'seedream-4', stream: true, ...group }],
  ];

  it.each(STREAMS)('%s cut by the vendor: the attempt is listed under the id it answered, as possibly made', async (_name, path, shape) => {
    const from = marks();
    const body = typeof shape === 'function' ? shape() : { ...shape };
    if (body instanceof FormData) body.append('prompt', 'a lighthouse [cut]');
    else body.prompt = 'a lighthouse [cut]';
    const event = await streamed(path, body);
    const [attempt] = expectEveryLineBooked([event], billSince(from));
    expect(attempt).toMatchObject({ outcome: 'unknown', images: 1 });
  });

  it.each(STREAMS)('%s the vendor answers 5xx as it opens: the attempt is listed under the id it answered', async (_name, path, shape) => {
    const from = marks();
    const body = typeof shape === 'function' ? shape() : { ...shape };
    if (body instanceof FormData) body.append('prompt', 'a lighthouse [5xx]');
    else body.prompt = 'a lighthouse [5xx]';
    const event = await streamed(path, body);
    expect(event.status).toBe(502);
    const [attempt] = expectEveryLineBooked([event], billSince(from));
    expect(attempt!.outcome).toBe('unknown');
  });
});

describe('a video task create', () => {
  it('lists the create under the task id the vendor answered', async () => {
    const created = await request(gw.app)
      .post('/api/v3/contents/generations/tasks')
      .set(auth)
      .send({ model: 'doubao-seedance-1-5-pro-251215', content: [{ type: 'text', text: 'a cat' }], duration: 5 });
    expect(created.status).toBe(200);
    await vi.waitFor(() => expect(gw.usage).toHaveLength(1));
    const taskIds = [...gw.fakes.ark.tasks.keys()];
    expect(gw.usage[0]!.vendorWork?.attempts).toEqual([{ provider: 'ark', id: taskIds.at(-1), images: 0, outcome: 'made' }]);
  });
});
