// Streamed images (docs/routes.md "Streamed images"): `stream: true` on POST /v1/images/generations and
// /v1/images/edits, read by the official openai SDK against every kind of upstream: an OpenAI-compatible
// one that streams (relayed), DashScope (the gateway waits and writes the events), Ark without a group
// (the same), Ark streaming a group (translated event by event), and an Ark model that refuses `stream`.
// Then the keep-alive comments, a failure after the stream opened (an error event) and before (the
// ordinary status), the 400s, and what is charged: one usage event per request with the images
// delivered, the quota charged for those, the fake's paid work counted.
import OpenAI, { toFile } from 'openai';
import request from 'supertest';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { dashscopeError } from '../helpers/fake-dashscope.js';
import { ARK_IMAGES, DASHSCOPE_GENERATION, OPENAI_EDITS, OPENAI_IMAGES, startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { TINY_JPEG, TINY_PNG } from '../helpers/images.js';
import { quotaUsed } from '../helpers/paid-work.js';

const resolve = ({ model }: { model: string }, { paid }: { paid: Awaited<ReturnType<typeof startFakePaidImages>> }) => {
  if (model === 'x-image-2.0') return { provider: 'dashscope' as const, baseURL: paid.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-2.0' };
  if (model === 'x-image-edit') return { provider: 'dashscope' as const, baseURL: paid.dashscopeBaseURL, apiKey: 'ds-key', model: 'qwen-image-edit-plus' };
  if (model === 'seedream-4') return { provider: 'ark' as const, baseURL: paid.arkBaseURL, apiKey: 'ark-key', model: 'doubao-seedream-4-0-250828' };
  if (model === 'seedream-3') return { provider: 'ark' as const, baseURL: paid.arkBaseURL, apiKey: 'ark-key', model: 'doubao-seedream-3-0-t2i-250415' };
  if (model === 'gpt-image-1') return { provider: 'openai' as const, baseURL: paid.openaiBaseURL, apiKey: 'oa-key' };
  return null;
};

const gw = await gatewayWith({ fakes: { paid: startFakePaidImages }, resolve, tenancy: { quotas: { limits: { imagesPerMinute: 100_000 } } }, resetEach: true });
const { paid } = gw.fakes;
const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A, maxRetries: 0 });

// keep-alive comments every 20 ms: what a test waits for before the upstream answers
const quick = await gatewayWith({ fakes: { paid: startFakePaidImages }, resolve, limits: { streamKeepAliveMs: 20 }, resetEach: true });

type Event = { type: string; b64_json: string } & Record<string, unknown>;

async function collect(stream: AsyncIterable<unknown>): Promise<Event[]> {
  const events: Event[] = [];
  for await (const event of stream) events.push(event as Event);
  return events;
}

const bytesOf = (event: Event | undefined): Buffer => Buffer.from(event?.b64_json ?? '', 'base64');

/** The request's one usage event, once its response closed. */
async function usageEvent(fixture: typeof gw) {
  await vi.waitFor(() => expect(fixture.usage).toHaveLength(1));
  return fixture.usage[0]!;
}

const png = () => toFile(TINY_PNG, 'in.png', { type: 'image/png' });

describe('an upstream that streams OpenAI image events: relayed', () => {
  it('images.generate({ stream: true, partial_images: 2 }) yields two partial images, then the completed image', async () => {
    const before = await quotaUsed(gw.router, 'images');
    const started = paid.started();
    const stream = await client.images.generate({ model: 'gpt-image-1', prompt: 'a paper crane', stream: true, partial_images: 2 });
    const events = await collect(stream);
    expect(events.map((event) => event.type)).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
    expect(events.slice(0, 2).map((event) => event.partial_image_index)).toEqual([0, 1]);
    expect(bytesOf(events.at(-1))).toEqual(TINY_PNG);
    expect(events.at(-1)).toMatchObject({ size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png', usage: { total_tokens: 110 } });
    // the upstream was asked to stream, with the partial images
    expect(paid.apiRequests().at(-1)?.json).toMatchObject({ model: 'gpt-image-1', stream: true, partial_images: 2 });
    const usage = await usageEvent(gw);
    expect(usage).toMatchObject({ route: 'images.generations', provider: 'openai', images: 1, status: 200 });
    expect(paid.started() - started).toBe(1);
    expect((await quotaUsed(gw.router, 'images')) - before).toBe(1);
  });

  it('images.edit({ stream: true }) relays image_edit events; the form goes upstream with stream=true', async () => {
    const stream = await client.images.edit({ model: 'gpt-image-1', image: await png(), prompt: 'add snow', stream: true, partial_images: 1 });
    const events = await collect(stream);
    expect(events.map((event) => event.type)).toEqual(['image_edit.partial_image', 'image_edit.completed']);
    expect(bytesOf(events.at(-1))).toEqual(TINY_PNG);
    const sent = paid.apiRequests().at(-1)!;
    expect(sent.path).toBe(OPENAI_EDITS);
    const form = await new Response(new Uint8Array(sent.body), { headers: { 'content-type': sent.headers['content-type']! } }).formData();
    expect([form.get('stream'), form.get('partial_images')]).toEqual(['true', '1']);
    expect(await usageEvent(gw)).toMatchObject({ route: 'images.edits', images: 1, status: 200 });
  });

  it('an upstream that ignores stream and answers JSON: its images are written as completed events', async () => {
    paid.next((_req, res) => sendJson(res, 200, { created: 1713833628, data: [{ b64_json: TINY_PNG.toString('base64') }] }));
    const stream = await client.images.generate({ model: 'gpt-image-1', prompt: 'x', stream: true });
    const events = await collect(stream);
    expect(events.map((event) => event.type)).toEqual(['image_generation.completed']);
    expect(bytesOf(events[0])).toEqual(TINY_PNG);
    expect(await usageEvent(gw)).toMatchObject({ images: 1, status: 200 });
  });

  it('an answer with no image is 502 upstream_no_image, not an empty stream', async () => {
    paid.next((_req, res) => sendJson(res, 200, { created: 1713833628, data: [] }));
    const response = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'gpt-image-1', prompt: 'x', stream: true });
    expect(response.status).toBe(502);
    expect(response.body.error).toMatchObject({ code: 'upstream_no_image' });
  });

  it('an upstream that fails mid-stream: the SDK raises APIError with the gateway error object; one usage event', async () => {
    paid.next((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const partial = { type: 'image_generation.partial_image', b64_json: TINY_PNG.toString('base64'), partial_image_index: 0 };
      res.write(`event: ${partial.type}\ndata: ${JSON.stringify(partial)}\n\n`);
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const stream = await client.images.generate({ model: 'gpt-image-1', prompt: 'x', stream: true, partial_images: 1 });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of stream) seen.push(event.type);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['image_generation.partial_image']);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'upstream_unreachable', type: expect.any(String) as string, message: expect.any(String) as string });
    const usage = await usageEvent(gw);
    expect(usage).toMatchObject({ images: 0, errorCode: 'upstream_unreachable' });
  });
});

describe('DashScope (no image streams): the gateway waits and writes one completed event per image', () => {
  it('images.generate({ stream: true, n: 2 }): two completed events whose b64_json are the downloaded images', async () => {
    const made = paid.imagesMade();
    const stream = await client.images.generate({ model: 'x-image-2.0', prompt: 'a lantern', stream: true, n: 2, size: '1024x1024' });
    const events = await collect(stream);
    expect(events.map((event) => event.type)).toEqual(['image_generation.completed', 'image_generation.completed']);
    for (const event of events) {
      expect(bytesOf(event)).toEqual(TINY_PNG);
      expect(event).toMatchObject({ size: '1024x1024', quality: 'auto', background: 'auto', output_format: 'png', created_at: expect.any(Number) as number });
    }
    // DashScope was asked the ordinary request: no stream field reaches it
    const sent = paid.apiRequests().find((item) => item.path === DASHSCOPE_GENERATION)!.json as Record<string, unknown>;
    expect(sent).not.toHaveProperty('stream');
    expect(sent).toMatchObject({ model: 'qwen-image-2.0', parameters: { n: 2, size: '1024*1024' } });
    expect(await usageEvent(gw)).toMatchObject({ route: 'images.generations', provider: 'dashscope', images: 2, status: 200 });
    expect(paid.imagesMade() - made).toBe(2);
  });

  it('images.edit({ stream: true }): one image_edit.completed', async () => {
    const stream = await client.images.edit({ model: 'x-image-edit', image: await png(), prompt: 'add a hat', stream: true });
    const events = await collect(stream);
    expect(events.map((event) => event.type)).toEqual(['image_edit.completed']);
    expect(bytesOf(events[0])).toEqual(TINY_PNG);
    expect(await usageEvent(gw)).toMatchObject({ route: 'images.edits', images: 1 });
  });
});

describe('the usage of the completed events the gateway writes itself', () => {
  const NO_TOKENS = { total_tokens: 0, input_tokens: 0, output_tokens: 0, input_tokens_details: { text_tokens: 0, image_tokens: 0 } };

  it("DashScope counts no tokens: every completed event carries usage, zeros, which the SDK's event.usage reads", async () => {
    const stream = await client.images.generate({ model: 'x-image-2.0', prompt: 'a lantern', stream: true, n: 2 });
    const totals: number[] = [];
    for await (const event of stream) {
      if (event.type !== 'image_generation.completed') continue;
      totals.push(event.usage.total_tokens);
      expect(event.usage).toEqual(NO_TOKENS);
    }
    expect(totals).toEqual([0, 0]);
    const edit = await client.images.edit({ model: 'x-image-edit', image: await png(), prompt: 'add a hat', stream: true });
    for await (const event of edit) {
      if (event.type === 'image_edit.completed') expect(event.usage.total_tokens).toBe(0);
    }
  });

  it("Ark's token figures go on the request's completed event", async () => {
    const stream = await client.images.generate({ model: 'seedream-4', prompt: 'a fox', stream: true });
    const completed = (await collect(stream)).filter((event) => event.type === 'image_generation.completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]!.usage).toEqual({ total_tokens: 4096, input_tokens: 0, output_tokens: 4096, input_tokens_details: { text_tokens: 0, image_tokens: 0 } });
  });
});

describe('Ark Seedream', () => {
  it('without a group: the whole answer, asked as b64_json, becomes one completed event', async () => {
    const stream = await client.images.generate({ model: 'seedream-4', prompt: 'a fox', stream: true });
    const events = await collect(stream);
    expect(events.map((event) => event.type)).toEqual(['image_generation.completed']);
    expect(bytesOf(events[0])).toEqual(TINY_JPEG);
    expect(events[0]).toMatchObject({ output_format: 'jpeg', size: '1024x1024' });
    const sent = paid.apiRequests().at(-1)!.json as Record<string, unknown>;
    expect(sent).toMatchObject({ model: 'doubao-seedream-4-0-250828', response_format: 'b64_json' });
    expect(sent).not.toHaveProperty('stream');
    expect(await usageEvent(gw)).toMatchObject({ provider: 'ark', images: 1 });
  });

  it('a streamed group: each partial_succeeded becomes a completed event as it arrives', async () => {
    const before = await quotaUsed(gw.router, 'images');
    const made = paid.imagesMade();
    const stream = await client.images.generate({
      model: 'seedream-4',
      prompt: 'three foxes',
      stream: true,
      ...({ sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 3 } } as object),
    });
    const events = await collect(stream);
    expect(events.map((event) => event.type)).toEqual(Array(3).fill('image_generation.completed'));
    for (const event of events) expect(bytesOf(event)).toEqual(TINY_JPEG);
    const sent = paid.apiRequests().at(-1)!.json as Record<string, unknown>;
    expect(sent).toMatchObject({ stream: true, sequential_image_generation: 'auto', response_format: 'b64_json' });
    const usage = await usageEvent(gw);
    expect(usage).toMatchObject({ provider: 'ark', images: 3, upstreamUsage: { generated_images: 3 } });
    expect(paid.imagesMade() - made).toBe(3);
    expect((await quotaUsed(gw.router, 'images')) - before).toBe(3);
  });

  it('a group with a failed image: the others are delivered, the failed one is given back to the quota', async () => {
    paid.sequenceReturns = 2;
    paid.sequenceFailures = 1;
    onTestFinishedReset();
    const before = await quotaUsed(gw.router, 'images');
    const made = paid.imagesMade();
    const stream = await client.images.generate({
      model: 'seedream-4',
      prompt: 'three foxes',
      stream: true,
      ...({ sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 3 } } as object),
    });
    const events = await collect(stream);
    expect(events).toHaveLength(2);
    expect(await usageEvent(gw)).toMatchObject({ images: 2, status: 200 });
    expect(paid.imagesMade() - made).toBe(2);
    expect((await quotaUsed(gw.router, 'images')) - before).toBe(2);
  });

  it('a group whose events carry URLs: each image is downloaded under the b64_json rules', async () => {
    paid.next((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const index of [0, 1]) {
        const event = { type: 'image_generation.partial_succeeded', model: 'm', created: 1, image_index: index, url: `${paid.origin}/results/group-${index}.jpg`, size: '2048x2048' };
        res.write(`data: ${JSON.stringify(event)}\n\n`);
      }
      res.end(`data: ${JSON.stringify({ type: 'image_generation.completed', model: 'm', created: 1, usage: { generated_images: 2 } })}\n\ndata: [DONE]\n\n`);
    });
    const stream = await client.images.generate({
      model: 'seedream-4',
      prompt: 'two foxes',
      stream: true,
      ...({ sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 2 } } as object),
    });
    const events = await collect(stream);
    expect(events.map((event) => [bytesOf(event).equals(TINY_JPEG), event.size])).toEqual([
      [true, '2048x2048'],
      [true, '2048x2048'],
    ]);
    expect(paid.requests.filter((item) => item.path.startsWith('/results/group-')).map((item) => item.path)).toEqual(['/results/group-0.jpg', '/results/group-1.jpg']);
    expect(await usageEvent(gw)).toMatchObject({ images: 2, imageSizes: ['2048x2048', '2048x2048'] });
  });

  it('a model that refuses stream: asked again for the whole answer, which is streamed; paid once', async () => {
    const started = paid.started();
    const stream = await client.images.generate({
      model: 'seedream-3',
      prompt: 'two foxes',
      stream: true,
      ...({ sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 2 } } as object),
    });
    const events = await collect(stream);
    expect(events.map((event) => event.type)).toEqual(['image_generation.completed', 'image_generation.completed']);
    expect(bytesOf(events[1])).toEqual(TINY_JPEG);
    const calls = paid.apiRequests().filter((item) => item.path === ARK_IMAGES);
    expect(calls.map((item) => (item.json as { stream?: unknown }).stream)).toEqual([true, undefined]);
    expect(paid.started() - started).toBe(1);
    expect(await usageEvent(gw)).toMatchObject({ images: 2 });
  });
});

/** Reads a raw streamed answer, calling `onText` with all text so far after each chunk. */
async function readStream(response: Response, onText: (text: string) => void = () => {}): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
    onText(text);
  }
}

const post = (fixture: typeof gw, body: object) =>
  fetch(`${fixture.url}/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('keep-alive comments and failures', () => {
  it('while the upstream works, SSE comments keep the connection; the image follows', async () => {
    const release = quick.fakes.paid.hold();
    const response = await post(quick, { model: 'x-image-2.0', prompt: 'slow', stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // the upstream answers only once the client has seen a comment
    const text = await readStream(response, (sofar) => {
      if (sofar.includes(': keep-alive\n\n')) release();
    });
    expect(text.startsWith(': keep-alive\n\n')).toBe(true);
    const completed = /event: image_generation\.completed\ndata: (.*)\n\n/.exec(text);
    expect(Buffer.from((JSON.parse(completed![1]!) as Event).b64_json, 'base64')).toEqual(TINY_PNG);
    expect(await usageEvent(quick)).toMatchObject({ images: 1, status: 200 });
  });

  it('a stream opened by a keep-alive comment carries the RateLimit headers of its charge', async () => {
    const limited = await gatewayWith({ fakes: { paid: startFakePaidImages }, resolve, limits: { streamKeepAliveMs: 20 }, tenancy: { quotas: { limits: { imagesPerMinute: 50 } } } });
    const release = limited.fakes.paid.hold();
    const response = await post(limited, { model: 'x-image-2.0', prompt: 'slow', stream: true });
    // the headers went out with the first comment, before the upstream answered
    expect(response.headers.get('ratelimit-policy')).toBe('"images";q=50;w=60');
    expect(response.headers.get('ratelimit')).toMatch(/^"images";r=49;t=\d+$/);
    const text = await readStream(response, (sofar) => {
      if (sofar.includes(': keep-alive\n\n')) release();
    });
    expect(text.startsWith(': keep-alive\n\n')).toBe(true);
  });

  it('a relayed stream gets the same comments between the upstream events while the upstream is quiet', async () => {
    const release = quick.fakes.paid.hold();
    const response = await post(quick, { model: 'gpt-image-1', prompt: 'slow', stream: true, partial_images: 1 });
    const text = await readStream(response, (sofar) => {
      if (sofar.includes(': keep-alive\n\n')) release();
    });
    // every comment sits between two events, never inside one
    const events = text.split('\n\n').filter((part) => part !== '');
    expect(events.filter((part) => part === ': keep-alive').length).toBeGreaterThan(0);
    expect(events.filter((part) => part !== ': keep-alive').map((part) => /^event: (.*)/.exec(part)?.[1])).toEqual(['image_generation.partial_image', 'image_generation.completed']);
    expect(await usageEvent(quick)).toMatchObject({ images: 1, status: 200 });
  });

  it('a failure after the stream opened is one error event carrying the error object, then the end', async () => {
    let sawComment!: () => void;
    const seen = new Promise<void>((resolve) => (sawComment = resolve));
    quick.fakes.paid.next(async (_req, res) => {
      await seen;
      dashscopeError(res, 400, 'DataInspectionFailed', 'Output data may contain inappropriate content.');
    });
    const response = await post(quick, { model: 'x-image-2.0', prompt: 'refused', stream: true });
    expect(response.status).toBe(200);
    const text = await readStream(response, (sofar) => {
      if (sofar.includes(': keep-alive')) sawComment();
    });
    const error = /event: error\ndata: (.*)\n\n$/.exec(text);
    expect(JSON.parse(error![1]!)).toEqual({
      type: 'error',
      error: { message: expect.stringContaining('inappropriate content') as string, type: 'invalid_request_error', param: null, code: 'content_policy_violation' },
    });
    expect(await usageEvent(quick)).toMatchObject({ images: 0, errorCode: 'content_policy_violation' });
  });

  it('a client that leaves while the image is made: the upstream call is cut, one usage event', async () => {
    const release = quick.fakes.paid.hold();
    onTestFinished(release);
    const started = quick.fakes.paid.started();
    const controller = new AbortController();
    const response = await fetch(`${quick.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'x-image-2.0', prompt: 'left', stream: true }),
      signal: controller.signal,
    });
    await readStream(response, (sofar) => {
      if (sofar.includes(': keep-alive')) controller.abort();
    }).catch(() => undefined);
    await vi.waitFor(() => expect(quick.fakes.paid.generations.at(-1)?.cut).toBe(true));
    expect(quick.fakes.paid.started() - started).toBe(1);
    const usage = await usageEvent(quick);
    expect(usage).toMatchObject({ route: 'images.generations', images: 0 });
    expect(usage.status).not.toBe(200);
  });

  it('a failure before the stream opened is the ordinary status and JSON error', async () => {
    paid.next((_req, res) => dashscopeError(res, 400, 'DataInspectionFailed', 'Input data may contain inappropriate content.'));
    const response = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'x-image-2.0', prompt: 'x', stream: true });
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body.error).toMatchObject({ code: 'content_policy_violation', type: 'invalid_request_error' });
    expect(await usageEvent(gw)).toMatchObject({ status: 400, images: 0 });
  });
});

describe('what cannot be streamed is a 400, and the upstream is not called', () => {
  const json = (body: object) => request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
  const form = (fields: Record<string, string>) => {
    let req = request(gw.app).post('/v1/images/edits').set('Authorization', `Bearer ${KEY_A}`).field('model', 'gpt-image-1').field('prompt', 'x');
    for (const [name, value] of Object.entries(fields)) req = req.field(name, value);
    return req.attach('image', TINY_PNG, { filename: 'in.png', contentType: 'image/png' });
  };

  it.each([
    ['partial_images without stream', { partial_images: 2 }, 'partial_images', 'partial_images is for streamed answers only: send stream: true with it, or leave it out'],
    ['partial_images with stream: false', { stream: false, partial_images: 1 }, 'partial_images', 'partial_images is for streamed answers only: send stream: true with it, or leave it out'],
    ['partial_images above 3', { stream: true, partial_images: 4 }, 'partial_images', 'partial_images must be one whole number from 0 to 3, got 4'],
    ['stream not a boolean', { stream: 'yes' }, 'stream', 'stream must be true or false, got "yes"'],
    [
      'response_format url with stream',
      { stream: true, response_format: 'url' },
      'response_format',
      "response_format 'url' cannot be streamed: image stream events carry b64_json only. Leave response_format out, or send stream: false",
    ],
  ])('JSON: %s', async (_name, fields, param, message) => {
    const response = await json({ model: 'gpt-image-1', prompt: 'x', ...fields });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param } });
    expect(paid.apiRequests()).toHaveLength(0);
  });

  it.each([
    ['partial_images without stream', { partial_images: '1' }, 'partial_images'],
    ['stream not true or false', { stream: 'yes' }, 'stream'],
    ['partial_images not a number', { stream: 'true', partial_images: 'two' }, 'partial_images'],
  ])('form: %s', async (_name, fields, param) => {
    const response = await form(fields);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param });
    expect(paid.apiRequests()).toHaveLength(0);
  });

  it.each([
    ['JSON', () => json({ model: 'gpt-image-1', prompt: 'x', stream: true }).set('Idempotency-Key', 'stream-json-1')],
    ['form', () => form({ stream: 'true' }).set('Idempotency-Key', 'stream-form-1')],
  ])('an Idempotency-Key with stream (%s): a stream cannot be replayed', async (_name, send) => {
    const response = await send();
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ param: 'Idempotency-Key', code: 'invalid_request_error' });
    expect(paid.apiRequests()).toHaveLength(0);
  });

  it('stream: false is the ordinary JSON answer', async () => {
    const response = await json({ model: 'gpt-image-1', prompt: 'x', stream: false });
    expect(response.status).toBe(200);
    expect(response.body.data).toHaveLength(1);
    expect(paid.apiRequests().at(-1)?.path).toBe(OPENAI_IMAGES);
  });
});

/** Puts the fake's group settings back when the test ends. */
function onTestFinishedReset(): void {
  onTestFinished(() => {
    paid.sequenceReturns = undefined;
    paid.sequenceFailures = 0;
  });
}
