// A day of a SaaS's traffic, and its books (docs/tenancy-and-billing.md "Billing contract"): a seeded mix of
// calls from three tenants (sync generations and edits, relayed OpenAI and Ark streams, some cut by their
// client, image tasks polled, cancelled and called back, video tasks, clients that leave, the official
// `openai` SDK retrying at its defaults, Idempotency-Key replays, upstream refusals, failures after work
// and deadlines, a Gemini fan-out whose second call fails after its image was made). Once every task has
// ended and every kept answer was delivered or expired, each tenant's books must balance against what the
// counting fakes made: image for image, second for second and cent for cent, with the quota and budget
// counters saying what the events say.
import OpenAI from 'openai';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { type TenancyOptions, staticKeys } from '../../lib/index.js';
import { startCallbackReceiver } from '../helpers/callback-receiver.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { GEMINI_KEY, startFakeGemini } from '../helpers/fake-gemini.js';
import { type GenerationScript, OPENAI_EDITS, OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { type GatewayFixture, gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';
import {
  type TenantBooks,
  absorbedImages,
  accountedImages,
  booksTable,
  chargedImages,
  costOf,
  eventsOf,
  keptImages,
  ledger,
  quotaUsedBy,
  settledKeptImages,
  vendorImages,
  vendorSeconds,
} from '../helpers/ledger-books.js';
import { seededRandom } from '../helpers/seeded-random.js';

const KEY_C = 'sk-test-tenant-c-00112233445566778899';
const TENANTS = [
  { id: 'tenant-a', key: KEY_A },
  { id: 'tenant-b', key: KEY_B },
  { id: 'tenant-c', key: KEY_C },
] as const;
const SEED = 0x5eed_2024;
const CALLS = 110;
const CONCURRENCY = 6;
const KEPT_SECONDS = 2;
const FEE = 0.01;
const SECOND = 0.1;
/** The price of one image of each model at the size the day asks (1024x1024), and flat where the row is flat. */
const UNIT: Record<string, number> = { 'gpt-image-1': 0.05, 'x-image-2.0': 0.03, 'x-image-slow': 0.03, 'x-image-plus': 0.04, 'seedream-4': 0.03, 'gemini-image': 0.039 };
const GEMINI_MODEL = 'gemini-3-pro-image-preview';
const VIDEO_MODEL = 'doubao-seedance-1-5-pro-251215';
const SIZE = '1024x1024';
const SECRET = 'whsec_' + Buffer.from('ledger-day-callback-secret-0123456789').toString('base64');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const priced = (image: number | { default: number; by?: Record<string, number> }) => ({ request: FEE, image });
const pricing: TenancyOptions['pricing'] = {
  currency: 'USD',
  models: {
    'gpt-image-1': priced({ default: 0.04, by: { [SIZE]: UNIT['gpt-image-1']! } }),
    'x-image-2.0': priced({ default: 0.1, by: { [SIZE]: UNIT['x-image-2.0']! } }),
    'x-image-slow': priced({ default: 0.1, by: { [SIZE]: UNIT['x-image-slow']! } }),
    'x-image-plus': priced(UNIT['x-image-plus']!),
    'seedream-4': priced(UNIT['seedream-4']!),
    'gemini-image': priced(UNIT['gemini-image']!),
    'doubao-seedance-1-5-pro*': { request: FEE, videoSecond: SECOND },
  },
};

const fakes = { images: startFakePaidImages, gemini: startFakeGemini, ark: startFakeArk, hooks: () => startCallbackReceiver() };
type Fixture = GatewayFixture<typeof fakes>;

type Kind =
  | 'sync'
  | 'edit'
  | 'sdk'
  | 'sdkShortTimeout'
  | 'stream'
  | 'streamCut'
  | 'arkGroup'
  | 'wholeStreamCut'
  | 'leave'
  | 'leaveAndRetry'
  | 'idempotent'
  | 'refused400'
  | 'refused429'
  | 'refused503Sdk'
  | 'failedAfterWork'
  | 'deadline'
  | 'deadlineSdk'
  | 'task'
  | 'taskCancelled'
  | 'taskCallback'
  | 'upstreamTask'
  | 'video'
  | 'fanOut'
  | 'invalid';
const KINDS: Array<[Kind, number]> = [
  ['sync', 8],
  ['edit', 4],
  ['sdk', 5],
  ['sdkShortTimeout', 3],
  ['stream', 4],
  ['streamCut', 3],
  ['arkGroup', 3],
  ['wholeStreamCut', 3],
  ['leave', 3],
  ['leaveAndRetry', 3],
  ['idempotent', 3],
  ['refused400', 2],
  ['refused429', 2],
  ['refused503Sdk', 1],
  ['failedAfterWork', 3],
  ['deadline', 2],
  ['deadlineSdk', 2],
  ['task', 5],
  ['taskCancelled', 3],
  ['taskCallback', 3],
  ['upstreamTask', 3],
  ['video', 5],
  ['fanOut', 3],
  ['invalid', 2],
];

interface Call {
  n: number;
  tenant: (typeof TENANTS)[number];
  kind: Kind;
  model: string;
  /** `@tenant #cN;` in the prompt: attributes the fakes' work to the call and its tenant. */
  marker: string;
  /** Images the tenant received. */
  received: number;
  /** Video seconds the tenant received. */
  seconds: number;
  /** The call lost its work by the tenant's own act (it left, cut a stream, cancelled running work): charged what was made. */
  ownAct: boolean;
  /** Billable requests (succeeded, or charged the tenant anything): one fee each. */
  fees: number;
  tasks: string[];
  outcome?: string;
}

describe('a day of traffic over three tenants', () => {
  it('balances per tenant: vendor work = what the fakes made, charges = deliveries and own acts priced by the table, counters = events, one terminal event per task', async () => {
    const gw: Fixture = await gatewayWith({
      fakes,
      verifyKey: staticKeys(Object.fromEntries(TENANTS.map((tenant) => [tenant.key, { id: tenant.id }]))),
      resolve: ({ model, route }, { images, gemini, ark }) => {
        if (route === 'video.tasks') return { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-key' };
        if (model === 'x-image-2.0') return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-2.0' };
        if (model === 'x-image-slow') return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-2.0', timeoutMs: 500 };
        if (model === 'x-image-plus') return { provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-plus' };
        if (model === 'seedream-4') return { provider: 'ark', baseURL: images.arkBaseURL, apiKey: 'ark-key', model: 'doubao-seedream-4-0-250828' };
        if (model === 'gemini-image') return { provider: 'gemini', baseURL: gemini.baseURL, apiKey: GEMINI_KEY, model: GEMINI_MODEL };
        if (model === 'gpt-image-1') return { provider: 'openai', baseURL: images.openaiBaseURL, apiKey: 'oa-key' };
        return null;
      },
      tenancy: { pricing: pricing, quotas: { limits: { imagesPerMinute: 10_000, budget: 1_000, videoSecondsPerDay: 100_000 } } },
      idempotency: { keptAnswerSeconds: KEPT_SECONDS },
      callbacks: { signingSecret: SECRET, allowLocal: true, retryBaseMs: 10, retryMaxMs: 50, pollIntervalsMs: { image: [1000] } },
    });
    const { images, gemini, ark, hooks } = gw.fakes;
    const scripts = new Map<string, GenerationScript>();
    images.script = (recorded) => {
      const text = recorded.body.toString('utf8');
      for (const [marker, script] of scripts) if (text.includes(marker)) return script;
      return undefined;
    };
    // a fan-out's first call fails after Gemini made its image
    const failing = new Set<string>();
    gemini.failAfterMaking = (recorded) => {
      const marker = [...failing].find((item) => recorded.body.toString('utf8').includes(item));
      if (marker === undefined) return false;
      failing.delete(marker);
      return true;
    };
    const madeFor = (marker: string): number =>
      images.generations.filter((generation) => generation.request.body.includes(marker)).reduce((total, generation) => total + generation.images, 0) +
      gemini.made.filter((recorded) => recorded.body.includes(marker)).length;
    const generationsFor = (marker: string) => images.generations.filter((generation) => generation.request.body.includes(marker));

    const random = seededRandom(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const weighted = (): Kind => {
      const total = KINDS.reduce((sum, [, weight]) => sum + weight, 0);
      let at = random() * total;
      for (const [kind, weight] of KINDS) if ((at -= weight) < 0) return kind;
      return 'sync';
    };
    const calls: Call[] = Array.from({ length: CALLS }, (_item, index) => {
      const tenant = pick(TENANTS);
      const kind = weighted();
      return { n: index + 1, tenant, kind, model: '', marker: `@${tenant.id} #c${index + 1};`, received: 0, seconds: 0, ownAct: false, fees: 0, tasks: [] };
    });
    // how many images a call asks, drawn now so the day does not depend on the order calls finish in
    const asks = calls.map(() => 1 + Math.floor(random() * 2));

    const authOf = (call: Call) => ({ Authorization: `Bearer ${call.tenant.key}` });
    const postJson = (call: Call, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      request(gw.app)
        .post(OPENAI_IMAGES)
        .set(authOf(call))
        .set(headers)
        .send({ ...body, prompt: `${typeof body.prompt === 'string' ? body.prompt : 'a picture'} ${call.marker}` });
    const sdk = (call: Call, timeout?: number) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: call.tenant.key, ...(timeout ? { timeout } : {}) });
    const dataLength = (body: unknown): number => ((body as { data?: unknown[] } | undefined)?.data ?? []).length;
    /** Polls an image task to its end, as a client does. */
    const taskEnd = async (call: Call, id: string): Promise<Record<string, unknown>> => {
      let task: Record<string, unknown> = {};
      await vi.waitFor(
        async () => {
          task = (await request(gw.app).get(`/v1/images/tasks/${id}`).set(authOf(call))).body as Record<string, unknown>;
          expect(['queued', 'running']).not.toContain(task.status);
        },
        { timeout: 20_000, interval: 200 },
      );
      return task;
    };
    /** Sends a request and leaves once the fake started the call's work. */
    const leave = async (call: Call, body: Record<string, unknown>): Promise<void> => {
      const controller = new AbortController();
      const sent = fetch(`${gw.url}${OPENAI_IMAGES}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${call.tenant.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: controller.signal,
      }).then(
        (response) => response.arrayBuffer(),
        () => undefined,
      );
      await vi.waitFor(() => expect(generationsFor(call.marker).length).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });
      controller.abort();
      await sent;
    };

    const run = async (call: Call, index: number): Promise<void> => {
      const n = asks[index]!;
      const prompt = `a picture ${call.marker}`;
      switch (call.kind) {
        case 'sync': {
          call.model = n === 1 ? 'gpt-image-1' : 'x-image-2.0';
          const answer = await postJson(call, { model: call.model, prompt: 'a picture', n, size: SIZE });
          call.received = dataLength(answer.body);
          call.fees = answer.status === 200 ? 1 : 0;
          return;
        }
        case 'edit': {
          call.model = 'gpt-image-1';
          const form = new FormData();
          form.append('model', call.model);
          form.append('prompt', prompt);
          form.append('size', SIZE);
          form.append('image', new Blob([new Uint8Array(TINY_PNG)], { type: 'image/png' }), 'in.png');
          const answer = await fetch(`${gw.url}${OPENAI_EDITS}`, { method: 'POST', headers: { authorization: `Bearer ${call.tenant.key}` }, body: form });
          call.received = dataLength(await answer.json());
          call.fees = answer.status === 200 ? 1 : 0;
          return;
        }
        case 'sdk': {
          call.model = 'gpt-image-1';
          const answer = await sdk(call).images.generate({ model: call.model, prompt, n, size: SIZE });
          call.received = answer.data?.length ?? 0;
          call.fees = 1;
          return;
        }
        case 'sdkShortTimeout': {
          // a client whose timeout is shorter than the work: its retries join the work or receive it kept
          call.model = 'x-image-2.0';
          scripts.set(call.marker, { workMs: 1_400 });
          const answer = await sdk(call, 600)
            .images.generate({ model: call.model, prompt, size: SIZE })
            .catch((error: unknown) => error as Error);
          if (answer instanceof Error) {
            call.ownAct = true;
            call.outcome = answer.message;
          } else call.received = answer.data?.length ?? 0;
          call.fees = 1;
          return;
        }
        case 'stream': {
          call.model = 'gpt-image-1';
          const stream = await sdk(call).images.generate({ model: call.model, prompt, size: SIZE, stream: true, partial_images: 1 });
          for await (const event of stream) if (event.type === 'image_generation.completed') call.received += 1;
          call.fees = 1;
          return;
        }
        case 'streamCut': {
          call.model = 'gpt-image-1';
          scripts.set(call.marker, { workMs: 900 });
          const stream = await sdk(call).images.generate({ model: call.model, prompt, size: SIZE, stream: true, partial_images: 2 });
          for await (const event of stream) if (event.type === 'image_generation.partial_image') break;
          call.ownAct = true;
          call.fees = 1;
          return;
        }
        case 'arkGroup': {
          call.model = 'seedream-4';
          const answer = await fetch(`${gw.url}${OPENAI_IMAGES}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${call.tenant.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: call.model, prompt, stream: true, sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: n + 1 } }),
          });
          call.received = (await answer.text()).split('event: image_generation.completed').length - 1;
          call.fees = call.received > 0 ? 1 : 0;
          return;
        }
        case 'wholeStreamCut': {
          call.model = 'x-image-2.0';
          scripts.set(call.marker, { workMs: 900 });
          await leave(call, { model: call.model, prompt, size: SIZE, stream: true });
          call.ownAct = true;
          call.fees = 1;
          return;
        }
        case 'leave': {
          call.model = 'x-image-2.0';
          scripts.set(call.marker, { workMs: 600 });
          await leave(call, { model: call.model, prompt, n, size: SIZE });
          // never retried: the kept answer expires, lost by the client's own act
          call.ownAct = true;
          call.fees = 1;
          return;
        }
        case 'leaveAndRetry': {
          call.model = 'x-image-2.0';
          scripts.set(call.marker, { workMs: 600 });
          const body = { model: call.model, prompt, n, size: SIZE };
          await leave(call, body);
          await Promise.all(generationsFor(call.marker).map((generation) => generation.done));
          await sleep(300);
          const retry = await request(gw.app).post(OPENAI_IMAGES).set(authOf(call)).send(body);
          call.received = dataLength(retry.body);
          call.outcome = retry.headers['x-kept-answer'] === 'true' ? 'kept answer' : `status ${retry.status}`;
          call.fees = 1;
          return;
        }
        case 'idempotent': {
          call.model = 'x-image-2.0';
          const key = `order-${call.n}`;
          const first = await postJson(call, { model: call.model, prompt: 'a picture', size: SIZE, response_format: 'url' }, { 'Idempotency-Key': key });
          const replay = await postJson(call, { model: call.model, prompt: 'a picture', size: SIZE, response_format: 'url' }, { 'Idempotency-Key': key });
          expect(replay.headers['idempotent-replayed']).toBe('true');
          call.received = dataLength(first.body);
          call.fees = first.status === 200 ? 1 : 0;
          return;
        }
        case 'refused400':
        case 'refused429': {
          call.model = 'gpt-image-1';
          scripts.set(call.marker, { refuse: call.kind === 'refused400' ? 400 : 429 });
          const answer = await postJson(call, { model: call.model, prompt: 'a picture', size: SIZE });
          call.outcome = `status ${answer.status}`;
          return;
        }
        case 'refused503Sdk': {
          call.model = 'gpt-image-1';
          scripts.set(call.marker, { refuse: 503 });
          const error = await sdk(call)
            .images.generate({ model: call.model, prompt, size: SIZE })
            .catch((caught: unknown) => caught as Error);
          call.outcome = error instanceof Error ? error.message : 'answered';
          return;
        }
        case 'failedAfterWork': {
          call.model = 'gpt-image-1';
          scripts.set(call.marker, { failAfterWork: 500 });
          const answer = await postJson(call, { model: call.model, prompt: 'a picture', size: SIZE });
          call.outcome = `status ${answer.status}`;
          return;
        }
        case 'deadline': {
          // answered 504 at the gateway's deadline, never retried: the kept work expires, the operator's cost
          call.model = 'x-image-slow';
          scripts.set(call.marker, { workMs: 1_200 });
          const answer = await postJson(call, { model: call.model, prompt: 'a picture', size: SIZE });
          call.outcome = `status ${answer.status}`;
          return;
        }
        case 'deadlineSdk': {
          // the SDK retries the 504 (x-should-retry: true) and receives the kept image
          call.model = 'x-image-slow';
          scripts.set(call.marker, { workMs: 1_200 });
          const answer = await sdk(call)
            .images.generate({ model: call.model, prompt, size: SIZE })
            .catch((error: unknown) => error as Error);
          if (answer instanceof Error) call.outcome = answer.message;
          else {
            call.received = answer.data?.length ?? 0;
            call.fees = 1;
          }
          return;
        }
        case 'task':
        case 'taskCallback':
        case 'upstreamTask': {
          call.model = call.kind === 'upstreamTask' ? 'x-image-plus' : 'x-image-2.0';
          const body = { model: call.model, prompt: 'a picture', ...(call.kind === 'upstreamTask' ? {} : { n, size: SIZE }), ...(call.kind === 'taskCallback' ? { callback_url: hooks.url } : {}) };
          const submitted = await postJson(call, body, { Prefer: 'respond-async' });
          expect(submitted.status).toBe(202);
          const id = submitted.body.id as string;
          call.tasks.push(id);
          call.fees = 1;
          if (call.kind === 'taskCallback') {
            await vi.waitFor(() => expect(hooks.deliveries.some((delivery) => delivery.body.includes(id) && /"status":"(succeeded|failed)"/.test(delivery.body))).toBe(true), {
              timeout: 20_000,
              interval: 100,
            });
          }
          const task = await taskEnd(call, id);
          call.outcome = String(task.status);
          call.received = task.status === 'succeeded' ? dataLength(task.result) : 0;
          return;
        }
        case 'taskCancelled': {
          // cancelled while running: the work was started, so the tenant's own act
          call.model = 'x-image-2.0';
          scripts.set(call.marker, { workMs: 800 });
          const submitted = await postJson(call, { model: call.model, prompt: 'a picture', n, size: SIZE }, { Prefer: 'respond-async' });
          const id = submitted.body.id as string;
          call.tasks.push(id);
          await vi.waitFor(() => expect(generationsFor(call.marker).length).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });
          const cancelled = await request(gw.app).post(`/v1/images/tasks/${id}/cancel`).set(authOf(call));
          call.outcome = String(cancelled.body.status);
          call.ownAct = cancelled.body.status === 'cancelled';
          call.received = cancelled.body.status === 'succeeded' ? dataLength(cancelled.body.result) : 0;
          call.fees = 1;
          await taskEnd(call, id);
          return;
        }
        case 'video': {
          call.model = VIDEO_MODEL;
          if (random() < 0.3) ark.scripts.push(['queued', 'running', 'failed']);
          const created = await request(gw.app)
            .post('/api/v3/contents/generations/tasks')
            .set(authOf(call))
            .send({ model: call.model, content: [{ type: 'text', text: `a cat ${call.marker}` }], duration: 5 });
          expect(created.status).toBe(200);
          const id = created.body.id as string;
          call.tasks.push(id);
          call.fees = 1;
          let status = '';
          for (let read = 0; read < 20 && !['succeeded', 'failed', 'expired', 'cancelled'].includes(status); read += 1) {
            status = (await request(gw.app).get(`/api/v3/contents/generations/tasks/${id}`).set(authOf(call))).body.status as string;
            await sleep(50);
          }
          call.outcome = status;
          call.seconds = status === 'succeeded' ? 5 : 0;
          return;
        }
        case 'fanOut': {
          call.model = 'gemini-image';
          if (call.n % 2 === 1) failing.add(call.marker);
          const answer = await postJson(call, { model: call.model, prompt: 'a picture', n: 2, response_format: 'b64_json' });
          call.received = dataLength(answer.body);
          call.fees = answer.status === 200 ? 1 : 0;
          return;
        }
        case 'invalid': {
          // refused by the gateway before any upstream: no vendor work, no fee
          call.model = 'x-image-2.0';
          const answer = await postJson(call, { model: call.model, prompt: 'a picture', n: 'two' });
          expect(answer.status).toBe(400);
          return;
        }
      }
    };

    const began = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < calls.length) {
          const index = next;
          next += 1;
          await run(calls[index]!, index).catch((error: unknown) => {
            calls[index]!.outcome = `threw: ${error instanceof Error ? error.message : String(error)}`;
          });
        }
      }),
    );
    // every task ended (the calls polled them); the fakes' work over; every kept answer delivered or expired
    await images.settled();
    await sleep((KEPT_SECONDS + 1.5) * 1_000);
    const elapsed = Date.now() - began;
    const threw = calls.filter((call) => call.outcome?.startsWith('threw'));
    expect(threw.map((call) => `#${call.n} ${call.kind}: ${call.outcome}`)).toEqual([]);

    // video seconds the fake made: its tasks that reached succeeded (5 s each)
    const secondsFor = (tenant: string): number =>
      [...ark.tasks.values()]
        .filter((task) => JSON.stringify(task.body).includes(`@${tenant} `))
        .filter((task) => task.statuses[Math.min(Math.max(task.gets - 1, 0), task.statuses.length - 1)] === 'succeeded' && task.gets > 0)
        .reduce((total, task) => total + Number(task.body.duration ?? 5), 0);

    const books = async (): Promise<TenantBooks[]> =>
      Promise.all(
        TENANTS.map(async ({ id }) => {
          const events = eventsOf(gw.usage, id);
          const mine = calls.filter((call) => call.tenant.id === id);
          const expectedCost = mine.reduce((total, call) => {
            const charged = call.received + (call.ownAct ? madeFor(call.marker) : 0);
            return total + charged * (UNIT[call.model] ?? 0) + call.fees * FEE + call.seconds * SECOND;
          }, 0);
          return {
            tenant: id,
            made: mine.reduce((total, call) => total + madeFor(call.marker), 0),
            madeSeconds: secondsFor(id),
            vendorWork: vendorImages(events),
            vendorSeconds: vendorSeconds(events),
            charged: chargedImages(events),
            absorbed: absorbedImages(events),
            kept: keptImages(events) - settledKeptImages(events),
            cost: costOf(events),
            expectedCost,
            quotaImages: await quotaUsedBy(gw.router, id, 'images'),
            quotaBudget: await quotaUsedBy(gw.router, id, 'budget'),
          };
        }),
      );
    const rows = await books();
    console.log(`a ledger day: ${CALLS} calls (seed ${SEED.toString(16)}), ${Math.round(elapsed / 1000)} s`);
    console.table(booksTable(rows));
    const byKind = new Map<Kind, { calls: number; made: number; received: number; ownAct: number; outcomes: Set<string> }>();
    for (const call of calls) {
      const row = byKind.get(call.kind) ?? { calls: 0, made: 0, received: 0, ownAct: 0, outcomes: new Set<string>() };
      row.calls += 1;
      row.made += madeFor(call.marker);
      row.received += call.received;
      row.ownAct += call.ownAct ? madeFor(call.marker) : 0;
      if (call.outcome) row.outcomes.add(call.outcome.slice(0, 40));
      byKind.set(call.kind, row);
    }
    console.table([...byKind].map(([kind, row]) => ({ kind, ...row, outcomes: [...row.outcomes].join(' | ') })));

    for (const row of rows) {
      const events = eventsOf(gw.usage, row.tenant);
      const mine = calls.filter((call) => call.tenant.id === row.tenant);
      const ownCharge = mine.reduce((total, call) => total + call.received + (call.ownAct ? madeFor(call.marker) : 0), 0);
      // the events, read from both sides, account for every image the fakes made
      expect.soft(accountedImages(events), `${row.tenant}: images + undelivered + absorbed + kept − settled = images the fakes made`).toBe(row.made);
      expect.soft(row.charged, `${row.tenant}: images + undeliveredImages = what it received or lost by its own act`).toBe(ownCharge);
      expect.soft(row.cost, `${row.tenant}: Σ cost = the price table applied, fees once per billable request`).toBeCloseTo(row.expectedCost, 6);
      expect.soft(row.quotaBudget, `${row.tenant}: the budget counter = Σ cost`).toBeCloseTo(row.cost, 6);
      // the images window is a minute from its first charge: compared while the day is inside it
      if (elapsed < 55_000) expect.soft(row.quotaImages, `${row.tenant}: the images counter = Σ (images + undeliveredImages)`).toBe(row.charged + row.kept);
      expect.soft(row.kept, `${row.tenant}: every kept answer settled`).toBe(0);
      expect.soft(row.vendorWork, `${row.tenant}: Σ vendorWork.images = images the fakes made`).toBe(row.made);
      expect.soft(row.vendorSeconds, `${row.tenant}: Σ vendorWork.seconds = video seconds the fake made`).toBe(row.madeSeconds);
      expect.soft(await quotaUsedBy(gw.router, row.tenant, 'video-seconds'), `${row.tenant}: the video-seconds counter = seconds received`).toBe(mine.reduce((total, call) => total + call.seconds, 0));
    }
    // one terminal event per task
    for (const call of calls) for (const id of call.tasks) expect.soft(gw.usage.filter((event) => event.task?.id === id).length, `#${call.n} ${call.kind}: terminal events of task ${id}`).toBe(1);
    // no vendor work on an event of a request that never reached a vendor
    const neverSent = ledger(gw.usage).filter((event) => event.status === 400 && event.errorCode !== undefined && event.provider === undefined);
    for (const event of neverSent) expect.soft(event.vendorWork?.images ?? 0).toBe(0);
    expect(elapsed).toBeGreaterThan(0);
  }, 120_000);
});
