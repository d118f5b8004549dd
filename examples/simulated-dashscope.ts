// A simulated Alibaba DashScope for the example: a real node:http server that speaks the synchronous
// multimodal-generation API exactly as upstreams §1.3 (request and success body) and §1.4 (error
// bodies) record it and the asynchronous synthesis with its task reads (§1.5), and serves the PNGs
// it "generated" at the URLs it returned. It lets `npm start` run with no DashScope account; nothing
// it receives leaves the machine, and the reference image URLs of edits are never fetched.
import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { renderPicture } from './render-png.js';

export interface SimulatedDashscopeOptions {
  /** Port to listen on. Default 0: any free port. */
  port?: number;
  /** Address to bind. Default 127.0.0.1: the simulation is for this machine only. */
  host?: string;
}

export interface SimulatedDashscope {
  /** The DashScope SDK-style base, e.g. `http://127.0.0.1:53187/api/v1` (the gateway appends its path). */
  baseURL: string;
  close(): Promise<void>;
}

const GENERATION_PATH = '/api/v1/services/aigc/multimodal-generation/generation';
// the asynchronous synthesis of qwen-image-plus and the Wan text-to-image models (upstreams §1.5)
const SYNTHESIS_PATH = '/api/v1/services/aigc/text2image/image-synthesis';
const TASK_PATH = /^\/api\/v1\/tasks\/([0-9a-f-]{36})$/;
// an asynchronous task takes a few seconds, or 20 to 40 s for the largest pictures
const TASK_MS = 3_000;
const KEPT_TASKS = 200;

// upstreams §1.3 gives qwen-image-2.0 a total of at most 2048*2048; the simulation keeps each side
// in [1, 2048], renders at most 512 px a side (fast), and reports the asked size in `usage`
const MAX_SIDE = 2048;
const RENDER_SIDE = 512;
const DEFAULT_SIZE = { width: 1024, height: 1024 };
// a picture of 2048*2048 (the largest qwen-image-2.0 makes) takes 20 to 40 s, as a high-quality one
// does upstream; smaller ones answer at once, so the example stays quick
const SLOW_PIXELS = 2048 * 2048;
const SLOW_MIN_MS = 20_000;
const SLOW_MAX_MS = 40_000;
// the qwen-image-2.0 and edit-plus limit (upstreams §1.3)
const MAX_N = 6;
const MAX_IMAGES = 3;
// three 10 MB reference images as Data URLs, with room to spare
const MAX_BODY_BYTES = 48 * 1024 * 1024;
// results are short-lived upstream too (§1.3: "treat the URL as short-lived"); a bounded map keeps memory flat
const KEPT_IMAGES = 200;

class DashscopeFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const invalid = (message: string): DashscopeFailure => new DashscopeFailure(400, 'InvalidParameter', message);

interface ParsedRequest {
  model: string;
  prompt: string;
  images: string[];
  width: number;
  height: number;
  n: number;
}

export async function startSimulatedDashscope(options: SimulatedDashscopeOptions = {}): Promise<SimulatedDashscope> {
  const images = new Map<string, Buffer>();
  let origin = '';

  const keep = (id: string, png: Buffer): void => {
    images.set(id, png);
    // a Map iterates in insertion order, so the first key is the oldest image
    while (images.size > KEPT_IMAGES) images.delete(images.keys().next().value!);
  };

  const generate = async (req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> => {
    // §1.2: any non-empty Bearer key is accepted; a missing one is the captured 401 of §1.4
    const key = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!key) throw new DashscopeFailure(401, 'InvalidApiKey', 'Invalid API-key provided.');
    const request = parseRequest(await readJson(req));
    // the largest pictures take the time real ones do (docs/image-tasks.md): long work to try tasks on
    if (request.width * request.height >= SLOW_PIXELS) await new Promise((resolve) => setTimeout(resolve, SLOW_MIN_MS + Math.random() * (SLOW_MAX_MS - SLOW_MIN_MS)));
    const choices = [];
    for (let index = 0; index < request.n; index += 1) {
      const id = randomUUID();
      // render small, keeping the asked aspect ratio
      const scale = Math.min(1, RENDER_SIDE / Math.max(request.width, request.height));
      const png = renderPicture({
        prompt: request.prompt,
        images: request.images,
        index,
        width: Math.max(1, Math.round(request.width * scale)),
        height: Math.max(1, Math.round(request.height * scale)),
      });
      keep(id, png);
      // §1.3: one choice per image is one of the two layouts the gateway must read
      choices.push({ finish_reason: 'stop', message: { role: 'assistant', content: [{ image: `${origin}/images/${id}.png` }] } });
    }
    sendJson(res, 200, requestId, {
      output: { choices, task_metric: { TOTAL: request.n, SUCCEEDED: request.n, FAILED: 0 } },
      usage: { width: request.width, height: request.height, image_count: request.n },
      request_id: requestId,
    });
  };

  // asynchronous tasks: the images are made at submit and shown once the task's time has passed
  const tasks = new Map<string, { doneAt: number; urls: string[] }>();

  const synthesize = async (req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> => {
    const key = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!key) throw new DashscopeFailure(401, 'InvalidApiKey', 'Invalid API-key provided.');
    // upstreams §1.6: the asynchronous API needs the header
    if (req.headers['x-dashscope-async'] !== 'enable') throw new DashscopeFailure(403, 'AccessDenied', 'current user api does not support synchronous calls');
    const body = await readJson(req);
    const input = isObject(body) && isObject(body.input) ? body.input : {};
    const parameters = isObject(body) && isObject(body.parameters) ? body.parameters : {};
    if (typeof input.prompt !== 'string' || input.prompt.trim() === '') throw invalid('input.prompt is required.');
    const { width, height } = parseSize(parameters.size);
    const n = typeof parameters.n === 'number' && Number.isSafeInteger(parameters.n) && parameters.n >= 1 && parameters.n <= 4 ? parameters.n : 1;
    const scale = Math.min(1, RENDER_SIDE / Math.max(width, height));
    const urls: string[] = [];
    for (let index = 0; index < n; index += 1) {
      const id = randomUUID();
      keep(id, renderPicture({ prompt: input.prompt, images: [], index, width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) }));
      urls.push(`${origin}/images/${id}.png`);
    }
    const taskId = randomUUID();
    const slow = width * height >= SLOW_PIXELS;
    tasks.set(taskId, { doneAt: Date.now() + (slow ? SLOW_MIN_MS + Math.random() * (SLOW_MAX_MS - SLOW_MIN_MS) : TASK_MS), urls });
    while (tasks.size > KEPT_TASKS) tasks.delete(tasks.keys().next().value!);
    sendJson(res, 200, requestId, { output: { task_status: 'PENDING', task_id: taskId }, request_id: requestId });
  };

  const readTask = (taskId: string, res: ServerResponse, requestId: string): void => {
    const task = tasks.get(taskId);
    if (!task) return sendJson(res, 200, requestId, { request_id: requestId, output: { task_id: taskId, task_status: 'UNKNOWN' } });
    if (Date.now() < task.doneAt) return sendJson(res, 200, requestId, { request_id: requestId, output: { task_id: taskId, task_status: 'RUNNING' } });
    sendJson(res, 200, requestId, {
      request_id: requestId,
      output: { task_id: taskId, task_status: 'SUCCEEDED', results: task.urls.map((url) => ({ url })), task_metrics: { TOTAL: task.urls.length, SUCCEEDED: task.urls.length, FAILED: 0 } },
      usage: { image_count: task.urls.length },
    });
  };

  const serveImage = (id: string, res: ServerResponse, method: string): void => {
    const png = images.get(id);
    // a result link dies after its first download, much sooner than a real one (24 h): the example's
    // durable results (docs/durable-results.md) keep working after it, which is what it shows
    if (method === 'GET') images.delete(id);
    if (!png) {
      // an expired result URL (contract §8: result URLs are time-limited)
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('image expired or unknown\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length, 'cache-control': 'private, max-age=3600' }).end(png);
  };

  const server = http.createServer((req, res) => {
    const requestId = randomUUID();
    const path = (req.url ?? '/').split('?')[0]!;
    const imageMatch = /^\/images\/([0-9a-f-]{36})\.png$/.exec(path);
    if (imageMatch && (req.method === 'GET' || req.method === 'HEAD')) {
      serveImage(imageMatch[1]!, res, req.method);
      return;
    }
    const taskMatch = TASK_PATH.exec(path);
    if (taskMatch && req.method === 'GET') {
      readTask(taskMatch[1]!, res, requestId);
      return;
    }
    const work = path === SYNTHESIS_PATH ? synthesize : generate;
    if (path !== GENERATION_PATH && path !== SYNTHESIS_PATH) {
      sendError(res, requestId, new DashscopeFailure(404, 'NotFound', `No API at ${req.method ?? 'GET'} ${path} in this simulation.`));
      return;
    }
    if (req.method !== 'POST') {
      sendError(res, requestId, new DashscopeFailure(405, 'MethodNotAllowed', `Use POST ${path}.`));
      return;
    }
    work(req, res, requestId).catch((error: unknown) => {
      const failure = error instanceof DashscopeFailure ? error : new DashscopeFailure(500, 'InternalError', 'The simulation failed.');
      if (!(error instanceof DashscopeFailure)) console.error('[simulated-dashscope]', error);
      // the body may be unread (401, too large): drain it so the connection stays usable
      req.resume();
      sendError(res, requestId, failure);
    });
  });

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://${urlHost(host)}:${port}`;

  return {
    baseURL: `${origin}/api/v1`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // the gateway keeps sockets alive for reuse; without this, close() waits for them to idle out
        server.closeAllConnections();
      }),
  };
}

/** The host part of the URLs handed out: a wildcard bind is reached through loopback. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** §1.3 request shape: {model, input:{messages:[{role:'user', content:[{image}..., {text}]}]}, parameters?}. */
function parseRequest(body: unknown): ParsedRequest {
  if (!isObject(body)) throw invalid('The request body must be a JSON object.');
  if (typeof body.model !== 'string' || body.model.trim() === '') {
    throw new DashscopeFailure(400, 'BadRequest.EmptyModel', 'Required parameter "model" missing from request.');
  }
  if (!isObject(body.input)) throw new DashscopeFailure(400, 'BadRequest.EmptyInput', 'Required parameter "input" missing from request.');
  if ('prompt' in body.input) {
    // the legacy structure (contract §2.1): the real service fails it for these models
    throw invalid('input.prompt is not supported by this model: send input.messages[].content[].');
  }
  const messages = body.input.messages;
  if (!Array.isArray(messages) || messages.length !== 1) throw invalid('input.messages must hold exactly one message.');
  const message: unknown = messages[0];
  if (!isObject(message) || message.role !== 'user' || !Array.isArray(message.content) || message.content.length === 0) {
    // the message of the captured 400 (upstreams §1.4)
    throw invalid('Role must be user or assistant and Content length must be greater than 0');
  }
  const texts: string[] = [];
  const images: string[] = [];
  for (const item of message.content as unknown[]) {
    const keys = isObject(item) ? Object.keys(item) : [];
    if (!isObject(item) || keys.length !== 1) throw invalid('Each content item must be an object with exactly one of "text" or "image".');
    if (typeof item.text === 'string') texts.push(item.text);
    else if (typeof item.image === 'string' && item.image !== '') images.push(item.image);
    else throw invalid(`Content item "${keys[0]}" is not supported: use a non-empty "text" or "image" string.`);
  }
  if (texts.length !== 1 || texts[0]!.trim() === '') throw invalid('The content must hold exactly one non-empty "text" item.');
  if (images.length > MAX_IMAGES) throw invalid(`At most ${MAX_IMAGES} input images are supported, got ${images.length}.`);
  if (body.model.includes('-edit') && images.length === 0) throw invalid(`Model ${body.model} edits images: send 1 to ${MAX_IMAGES} "image" items.`);

  const parameters = body.parameters ?? {};
  if (!isObject(parameters)) throw invalid('parameters must be an object.');
  const { width, height } = parseSize(parameters.size);
  const n = parameters.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_N) throw invalid(`parameters.n must be an integer in [1, ${MAX_N}].`);
  return { model: body.model, prompt: texts[0]!, images, width, height, n };
}

/** §1.3 / contract §2.3: `W*H` with an asterisk; the `x` form is refused as the real service refuses it. */
function parseSize(size: unknown): { width: number; height: number } {
  if (size === undefined) return DEFAULT_SIZE;
  const match = typeof size === 'string' ? /^(\d{1,5})\*(\d{1,5})$/.exec(size.trim()) : null;
  if (!match) throw invalid(`parameters.size must look like "1024*1024" (width*height with an asterisk), got ${JSON.stringify(size)}.`);
  const width = Number(match[1]);
  const height = Number(match[2]);
  if (width < 1 || height < 1 || width > MAX_SIDE || height > MAX_SIDE) {
    throw invalid(`parameters.size ${width}*${height} is out of range: each side must be between 1 and ${MAX_SIDE}.`);
  }
  return { width, height };
}

/** Reads the body with a size cap (a simulation must not be a memory sink either) and parses JSON. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const piece of req) {
    const buffer = piece as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw invalid(`The request body is larger than ${MAX_BODY_BYTES} bytes.`);
    chunks.push(buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw invalid('The request body is not valid JSON.');
  }
}

/** §1.4 error body, `{code, message, request_id}`, with the `x-request-id` header of §1.2. */
function sendError(res: ServerResponse, requestId: string, failure: DashscopeFailure): void {
  sendJson(res, failure.status, requestId, { code: failure.code, message: failure.message, request_id: requestId });
}

function sendJson(res: ServerResponse, status: number, requestId: string, body: unknown): void {
  const text = JSON.stringify(body);
  res
    .writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      // §1.2: the real service echoes request_id in this header
      'x-request-id': requestId,
    })
    .end(text);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
