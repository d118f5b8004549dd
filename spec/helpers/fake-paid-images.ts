// A fake image upstream that counts the generations it starts, for the paid-work specs (README "Tenant
// controls", billing contract). One server speaks OpenAI's image routes (JSON, a streamed answer,
// multipart edits; upstreams §4), DashScope's multimodal generation (§1.3) and Ark's Seedream images
// (§2.7). Like the vendors, a generation is paid when it starts: it works `workMs` and makes its images
// whether or not the gateway is still connected to take them, so `imagesMade()` is what the operator pays.
// Streams as the vendors do: OpenAI's image events on generations and edits (partial images, then the
// completed one, §4.2), Ark's group events (`partial_succeeded` per image, `partial_failed`, `completed`,
// §2.7); an Ark model named `*seedream-3*` refuses `stream` with a 400 before any work, as Seedream 3.0 does.
import type { ServerResponse } from 'node:http';
import { type FakeUpstream, type RecordedRequest, sendJson, startFakeUpstream } from './fake-upstream.js';
import { TINY_JPEG, TINY_PNG } from './images.js';

export const OPENAI_IMAGES = '/v1/images/generations';
export const OPENAI_EDITS = '/v1/images/edits';
export const DASHSCOPE_GENERATION = '/api/v1/services/aigc/multimodal-generation/generation';
export const ARK_IMAGES = '/api/v3/images/generations';
/** DashScope's asynchronous synthesis (upstreams §1.5): submit here, then GET /api/v1/tasks/{id}. */
export const DASHSCOPE_SYNTHESIS = '/api/v1/services/aigc/text2image/image-synthesis';

/** One generation the fake started. */
export interface Generation {
  /** 1, 2, …: also written into every image the generation answers (`generation-<id>-<index>`). */
  id: number;
  path: string;
  /** Images the request, as the fake received it, asks for (`n`, `parameters.n`, `max_images`; 1 without). */
  asked: number;
  /** Images this generation makes: `asked`, or Ark's `sequenceReturns`, plus `extraImages`. */
  images: number;
  /** Every value of `n` the request carried (several for a form with a repeated or indexed field). */
  nValues: string[];
  /** The answer was written whole before the gateway closed the connection. */
  delivered: boolean;
  /** The gateway closed the connection before the answer was written. */
  cut: boolean;
  /** Resolves when the generation's work is over and its connection let go of the answer (written, or cut). */
  done: Promise<void>;
  /** The request that started it (its headers and body: a spec attributes the generation to a tenant or a call). */
  request: RecordedRequest;
  /** The script it ran under, when `script` gave one. */
  script?: GenerationScript;
}

/**
 * How one request is answered, chosen per request by `script` (the ledger specs: many calls at once, each
 * with its own behaviour). Every field is optional; absent fields keep the fake's defaults.
 */
export interface GenerationScript {
  /** Answer this status (4xx, 429, 503) before any work: nothing is made, nothing is paid. */
  refuse?: number;
  /** How long this generation works, ms, instead of `workMs`. */
  workMs?: number;
  /** Images answered beyond what was asked, instead of `extraImages`. */
  extraImages?: number;
  /** After the work (its images made, so paid), answer this 5xx instead of the images. */
  failAfterWork?: number;
  /** DashScope asynchronous synthesis: the upstream task ends FAILED and makes nothing. */
  taskFails?: boolean;
  /** Holds the answer (the async submit's answer included) until it resolves: the work is paid from the start. */
  gate?: Promise<void>;
}

export interface FakePaidImages extends FakeUpstream {
  /** `${origin}/v1`: an OpenAI-compatible upstream's base. */
  openaiBaseURL: string;
  /** `${origin}/api/v1`: a DashScope upstream's base. */
  dashscopeBaseURL: string;
  /** `${origin}/api/v3`: an Ark upstream's base. */
  arkBaseURL: string;
  /** How long one generation works, ms. Default 0. */
  workMs: number;
  /** Images answered beyond what was asked (an upstream that returns more than the request allows). Default 0. */
  extraImages: number;
  /** How many images an Ark sequence (`sequential_image_generation: 'auto'`) returns; default all it may. */
  sequenceReturns?: number;
  /** How many of the last images of a streamed Ark group fail (`partial_failed`, not made). Default 0. */
  sequenceFailures: number;
  generations: Generation[];
  /** Generations started so far. */
  started(): number;
  /** Images of every generation started so far: what the operator pays for. */
  imagesMade(): number;
  /** Holds every generation (after its work) until the returned function is called. */
  hold(): () => void;
  /** With a hold, DashScope's asynchronous submit is held too: the task is made (paid), its id not yet answered. */
  holdSubmits: boolean;
  /** Resolves when every generation started so far has ended its work. */
  settled(): Promise<void>;
  /** Forgets the generations and requests seen and puts every setting back to its default (between tests). */
  reset(): void;
  /** Chooses how each request is answered (see GenerationScript); default none, the fake's defaults. */
  script?: (request: RecordedRequest) => GenerationScript | undefined;
}

const GENERATION_PATHS = new Set([OPENAI_IMAGES, OPENAI_EDITS, DASHSCOPE_GENERATION, ARK_IMAGES, DASHSCOPE_SYNTHESIS]);
const TASK_PATH = /^\/api\/v1\/tasks\/([^/]+)$/;
const PNG_BASE64 = TINY_PNG.toString('base64');
// Ark's images are JPEG (Seedream's default output), so a test tells whose bytes it got
const JPEG_BASE64 = TINY_JPEG.toString('base64');

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A count as an upstream parser would read it: an integer or an integer string, else undefined. */
function countOf(value: unknown): number | undefined {
  const number = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isSafeInteger(number) && number >= 1 ? number : undefined;
}

/** The values of a multipart field: `name`, and indexed or bracketed ones (`n[0]`, `n[]`). */
async function formValues(request: RecordedRequest, field: string): Promise<string[]> {
  const type = request.headers['content-type'] ?? '';
  try {
    const form = await new Response(new Uint8Array(request.body), { headers: { 'content-type': type } }).formData();
    const values: string[] = [];
    for (const [name, value] of form.entries()) if ((name === field || name.startsWith(`${field}[`)) && typeof value === 'string') values.push(value);
    return values;
  } catch {
    return [];
  }
}

const formNValues = (request: RecordedRequest): Promise<string[]> => formValues(request, 'n');

/** A request's `stream` and `partial_images`, from its JSON or its form. */
async function streamAsk(request: RecordedRequest): Promise<{ stream: boolean; partials: number }> {
  if (request.path === OPENAI_EDITS) {
    const [stream] = await formValues(request, 'stream');
    const [partials] = await formValues(request, 'partial_images');
    return { stream: stream === 'true', partials: countOf(partials) ?? 0 };
  }
  const body = (request.json ?? {}) as Record<string, unknown>;
  return { stream: body.stream === true, partials: countOf(body.partial_images) ?? 0 };
}

export async function startFakePaidImages(): Promise<FakePaidImages> {
  const box: { self?: FakePaidImages } = {};
  let gate: Promise<void> | undefined;

  const plan = async (request: RecordedRequest, script: GenerationScript | undefined): Promise<{ asked: number; images: number; nValues: string[] }> => {
    const self = { extraImages: script?.extraImages ?? box.self!.extraImages, sequenceReturns: box.self!.sequenceReturns };
    if (script?.taskFails) return { asked: 1, images: 0, nValues: [] };
    const body = (request.json ?? {}) as Record<string, unknown>;
    if (request.path === OPENAI_EDITS) {
      const nValues = await formNValues(request);
      // the most any parser of these fields could make of them (a last-value parser takes the last)
      const asked = Math.max(1, ...nValues.map((value) => countOf(value) ?? 1));
      return { asked, images: asked + self.extraImages, nValues };
    }
    if (request.path === DASHSCOPE_GENERATION || request.path === DASHSCOPE_SYNTHESIS) {
      const n = (body.parameters as { n?: unknown } | undefined)?.n;
      const asked = countOf(n) ?? 1;
      return { asked, images: asked + self.extraImages, nValues: n === undefined ? [] : [JSON.stringify(n)] };
    }
    if (request.path === ARK_IMAGES) {
      // an Ark-compatible upstream that honours `n`, and Seedream's sequences (upstreams §2.7)
      const n = countOf(body.n);
      const options = body.sequential_image_generation_options as { max_images?: unknown } | undefined;
      const sequence = body.sequential_image_generation === 'auto' ? (countOf(options?.max_images) ?? 15) : undefined;
      const asked = n ?? sequence ?? 1;
      const made = sequence !== undefined && n === undefined && self.sequenceReturns !== undefined ? Math.min(self.sequenceReturns, asked) : asked;
      return { asked, images: made + self.extraImages, nValues: body.n === undefined ? [] : [JSON.stringify(body.n)] };
    }
    const asked = countOf(body.n) ?? 1;
    return { asked, images: asked + self.extraImages, nValues: body.n === undefined ? [] : [JSON.stringify(body.n)] };
  };

  const answer = (request: RecordedRequest, generation: Generation, res: ServerResponse): void => {
    const body = (request.json ?? {}) as Record<string, unknown>;
    const tag = (index: number) => `generation-${generation.id}-${index}`;
    const indexes = Array.from({ length: generation.images }, (_item, index) => index);
    const self = box.self!;
    if (request.path === DASHSCOPE_GENERATION) {
      sendJson(
        res,
        200,
        {
          output: {
            choices: indexes.map((index) => ({ finish_reason: 'stop', message: { role: 'assistant', content: [{ image: `${self.origin}/results/${tag(index)}.png` }] } })),
            task_metric: { TOTAL: generation.images, SUCCEEDED: generation.images, FAILED: 0 },
          },
          usage: { height: 1024, image_count: generation.images, width: 1024 },
          request_id: `ds-${tag(0)}`,
        },
        { 'x-request-id': `ds-${tag(0)}` },
      );
      return;
    }
    if (request.path === ARK_IMAGES) {
      const b64 = body.response_format === 'b64_json';
      sendJson(res, 200, {
        model: String(body.model),
        created: 1757323224,
        data: indexes.map((index) => ({ ...(b64 ? { b64_json: JPEG_BASE64 } : { url: `https://ark-content.example/${tag(index)}.png` }), size: '1024x1024' })),
        usage: { generated_images: generation.images, output_tokens: 4096 * generation.images, total_tokens: 4096 * generation.images },
      });
      return;
    }
    // OpenAI: gpt-image answers b64_json (what the Vercel AI SDK reads), tagged by its revised prompt
    sendJson(
      res,
      200,
      {
        created: 1713833628 + generation.id,
        data: indexes.map((index) => ({ b64_json: PNG_BASE64, revised_prompt: tag(index) })),
        usage: { input_tokens: 10, output_tokens: 100 * generation.images, total_tokens: 10 + 100 * generation.images },
      },
      { 'x-request-id': `oa-${tag(0)}` },
    );
  };

  /** OpenAI's streamed image answer: `partial_images` partial events, then the completed image (generations and edits). */
  const stream = async (request: RecordedRequest, generation: Generation, res: ServerResponse, workMs: number, partials: number): Promise<void> => {
    const prefix = request.path === OPENAI_EDITS ? 'image_edit' : 'image_generation';
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': `oa-stream-${generation.id}` });
    const image = { b64_json: PNG_BASE64, created_at: 1713833628 + generation.id, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png' };
    for (let index = 0; index < partials; index += 1) {
      await sleep(workMs / (partials + 1));
      if (res.destroyed) return;
      const event = { type: `${prefix}.partial_image`, ...image, partial_image_index: index };
      res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    }
    await sleep(workMs / (partials + 1));
    if (gate) await gate;
    if (generation.script?.gate) await generation.script.gate;
    if (res.destroyed) return;
    const completed = {
      type: `${prefix}.completed`,
      ...image,
      usage: { input_tokens: 10, output_tokens: 100, total_tokens: 110, input_tokens_details: { image_tokens: 0, text_tokens: 10 } },
    };
    // one completed event per image made, as OpenAI streams `n: 2` (and an upstream that makes extra ones)
    const text = `event: ${completed.type}\ndata: ${JSON.stringify(completed)}\n\n`;
    res.end(text.repeat(Math.max(1, generation.images)));
  };

  /** Ark's streamed group (upstreams §2.7): one event per image as it is made, the failed ones last, then completed. */
  const arkStream = async (request: RecordedRequest, generation: Generation, res: ServerResponse, workMs: number): Promise<void> => {
    const body = (request.json ?? {}) as Record<string, unknown>;
    const model = String(body.model);
    const created = 1757323224;
    const b64 = body.response_format === 'b64_json';
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': `ark-stream-${generation.id}` });
    const made = generation.images;
    const failures = box.self!.sequenceFailures;
    for (let index = 0; index < made + failures; index += 1) {
      await sleep(workMs / (made + failures));
      if (index === made + failures - 1 && gate) await gate;
      if (res.destroyed) return;
      const event =
        index < made
          ? {
              type: 'image_generation.partial_succeeded',
              model,
              created,
              image_index: index,
              ...(b64 ? { b64_json: JPEG_BASE64 } : { url: `${box.self!.origin}/results/generation-${generation.id}-${index}.jpg` }),
              size: '1024x1024',
            }
          : {
              type: 'image_generation.partial_failed',
              model,
              created,
              image_index: index,
              error: { code: 'OutputImageSensitiveContentDetected', message: 'The output image may contain sensitive content.' },
            };
      res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    }
    const usage = { generated_images: made, output_tokens: 4096 * made, total_tokens: 4096 * made };
    res.end(`event: image_generation.completed\ndata: ${JSON.stringify({ type: 'image_generation.completed', model, created, usage })}\n\ndata: [DONE]\n\n`);
  };

  const fake = await startFakeUpstream(
    async (request: RecordedRequest, res: ServerResponse) => {
      const self = box.self!;
      if (request.method === 'GET' && request.path.startsWith('/results/')) {
        const image = request.path.endsWith('.jpg') ? TINY_JPEG : TINY_PNG;
        res.writeHead(200, { 'content-type': request.path.endsWith('.jpg') ? 'image/jpeg' : 'image/png', 'content-length': image.length });
        res.end(image);
        return;
      }
      const taskRead = request.method === 'GET' ? TASK_PATH.exec(request.path) : null;
      if (taskRead) {
        // upstreams §1.5: RUNNING until the work is over, then SUCCEEDED with the results; UNKNOWN for an id it never gave
        const generation = self.generations.find((item) => `ds-task-${item.id}` === taskRead[1]);
        if (!generation) return sendJson(res, 200, { request_id: 'rq-unknown', output: { task_id: taskRead[1], task_status: 'UNKNOWN' } });
        const over = await Promise.race([generation.done.then(() => true), sleep(0).then(() => false)]);
        if (!over) return sendJson(res, 200, { request_id: `rq-${generation.id}`, output: { task_id: taskRead[1], task_status: 'RUNNING' } });
        if (generation.script?.taskFails)
          return sendJson(res, 200, { request_id: `rq-${generation.id}`, output: { task_id: taskRead[1], task_status: 'FAILED', code: 'InternalError', message: 'Generation failed.' } });
        const results = Array.from({ length: generation.images }, (_item, index) => ({ url: `${self.origin}/results/generation-${generation.id}-${index}.png` }));
        return sendJson(res, 200, { request_id: `rq-${generation.id}`, output: { task_id: taskRead[1], task_status: 'SUCCEEDED', results }, usage: { image_count: generation.images } });
      }
      if (request.method !== 'POST' || !GENERATION_PATHS.has(request.path)) {
        sendJson(res, 404, { error: { message: `no route ${request.path}`, type: 'invalid_request_error', param: null, code: 'not_found' } });
        return;
      }
      const asked = await streamAsk(request);
      // Seedream 3.0 does not stream: refused before any work, so nothing is paid
      if (request.path === ARK_IMAGES && asked.stream && String((request.json as { model?: unknown }).model).includes('seedream-3')) {
        sendJson(res, 400, {
          error: { code: 'InvalidParameter', message: 'The parameter `stream` specified in the request is not valid for this model. Request id: 0217fake', param: 'stream', type: 'BadRequest' },
        });
        return;
      }
      const script = self.script?.(request);
      // a refusal before any work (a 4xx, a 429, a 503): nothing made, nothing paid
      if (script?.refuse !== undefined) {
        const status = script.refuse;
        sendJson(res, status, {
          error: { message: `refused with ${status}`, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: status === 429 ? 'rate_limit_exceeded' : null },
        });
        return;
      }
      // paid from here on, whatever becomes of the connection
      const planned = await plan(request, script);
      let worked!: () => void;
      let closed!: () => void;
      const work = new Promise<void>((resolve) => (worked = resolve));
      const exchange = new Promise<void>((resolve) => (closed = resolve));
      // over once the work is done and the connection let go of the answer (written whole, or cut)
      const done = Promise.all([work, exchange]).then(() => undefined);
      const generation: Generation = { id: self.generations.length + 1, path: request.path, ...planned, delivered: false, cut: false, done, request, ...(script ? { script } : {}) };
      self.generations.push(generation);
      res.on('close', () => {
        if (res.writableFinished) generation.delivered = true;
        else generation.cut = true;
        closed();
      });
      const workMs = script?.workMs ?? self.workMs;
      if (request.path === DASHSCOPE_SYNTHESIS) {
        if (request.headers['x-dashscope-async'] !== 'enable') {
          worked();
          return sendJson(res, 400, { request_id: 'rq-sync', code: 'InvalidParameter', message: 'current user api does not support synchronous calls' });
        }
        // answered at once (or when the script's gate opens, or once released, holdSubmits); the work goes on, paid, and its end is read at GET /api/v1/tasks/{id}
        if (script?.gate) await script.gate;
        if (self.holdSubmits && gate) await gate;
        if (res.destroyed) {
          void sleep(workMs).finally(worked);
          return;
        }
        sendJson(res, 200, { request_id: `rq-${generation.id}`, output: { task_status: 'PENDING', task_id: `ds-task-${generation.id}` } });
        void sleep(workMs)
          .then(() => gate)
          .finally(worked);
        return;
      }
      try {
        if ((request.path === OPENAI_IMAGES || request.path === OPENAI_EDITS) && asked.stream) {
          await stream(request, generation, res, workMs, asked.partials);
          return;
        }
        if (request.path === ARK_IMAGES && asked.stream) {
          await arkStream(request, generation, res, workMs);
          return;
        }
        await sleep(workMs);
        if (gate) await gate;
        if (script?.gate) await script.gate;
        if (res.destroyed) return;
        // made and paid, then a server error: the vendor bills the work the caller never sees
        if (script?.failAfterWork !== undefined) {
          sendJson(res, script.failAfterWork, { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } });
          return;
        }
        answer(request, generation, res);
      } finally {
        worked();
      }
    },
    (path) => !path.startsWith('/results/'),
  );

  box.self = Object.assign(fake, {
    openaiBaseURL: `${fake.origin}/v1`,
    dashscopeBaseURL: `${fake.origin}/api/v1`,
    arkBaseURL: `${fake.origin}/api/v3`,
    workMs: 0,
    extraImages: 0,
    sequenceFailures: 0,
    holdSubmits: false,
    generations: [] as Generation[],
    started: () => box.self!.generations.length,
    imagesMade: () => box.self!.generations.reduce((sum, generation) => sum + generation.images, 0),
    hold: () => {
      let release!: () => void;
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
    settled: async () => {
      await Promise.all(box.self!.generations.map((generation) => generation.done));
    },
    reset: () => {
      const self = box.self!;
      self.generations.length = 0;
      self.requests.length = 0;
      self.workMs = 0;
      self.extraImages = 0;
      self.sequenceFailures = 0;
      self.sequenceReturns = undefined;
      self.holdSubmits = false;
      self.script = undefined;
    },
  });
  return box.self;
}
