// A simulated Volcengine Ark for the example: video tasks (upstreams §2.2-2.3) whose status moves
// queued -> running -> succeeded with time and ends with a real, playable WebM (examples/assets), and
// Seedream native images (§2.7, `size` with an `x`, no `n`), rendered as PNGs. Errors use the §2.8
// envelope. Nothing it receives leaves the machine; reference URLs are never fetched.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderPicture } from './render-png.js';
import { BodyNotJson, BodyTooLarge, KeptFiles, bearerKey, isObject, listenOnLoopback, parseJson, readBody, sendFile, sendJson } from './simulation-http.js';

export interface SimulatedArkOptions {
  /** How long a new task stays `queued`, ms. Default 1500. */
  queuedMs?: number;
  /** How long it then stays `running`, ms. Default 2500: the whole task ends within seconds. */
  runningMs?: number;
  /** Whether an `asset://<id>` reference names a known asset (the simulated asset library's). Default: every id. */
  knowsAsset?: (id: string) => boolean;
}

export interface SimulatedArk {
  /** The Ark SDK-style base, `http://127.0.0.1:<port>/api/v3`. */
  baseURL: string;
  close(): Promise<void>;
}

/** The small real video every succeeded task points at: VP8 WebM, 256x144, 3 s, ~9 KB. */
const SAMPLE_VIDEO = readFileSync(new URL('./assets/sample-video.webm', import.meta.url));

const TASKS_PATH = '/api/v3/contents/generations/tasks';
const IMAGES_PATH = '/api/v3/images/generations';
const MAX_BODY_BYTES = 48 * 1024 * 1024;
// the default of Seedream 4.0 (§2.7); the simulation renders at most 512 px a side
const DEFAULT_IMAGE_SIZE = '2048x2048';
const TIER_SIDES: Readonly<Record<string, number>> = { '1K': 1024, '2K': 2048, '4K': 4096 };
const RENDER_SIDE = 512;
// at most 120 queued tasks per account upstream (§2.2); the simulation forgets the oldest beyond this
const KEPT_TASKS = 500;

class ArkFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param = '',
  ) {
    super(message);
  }
}

const TYPE_BY_STATUS: Readonly<Record<number, string>> = { 400: 'BadRequest', 401: 'Unauthorized', 404: 'NotFound', 413: 'BadRequest', 500: 'InternalServerError' };

interface SimulatedTask {
  id: string;
  model: string;
  createdAt: number;
  body: Record<string, unknown>;
  /** The result link was downloaded once and is now expired. */
  videoDownloaded?: boolean;
}

export async function startSimulatedArk(options: SimulatedArkOptions = {}): Promise<SimulatedArk> {
  const queuedMs = options.queuedMs ?? 1500;
  const runningMs = options.runningMs ?? 2500;
  const tasks = new Map<string, SimulatedTask>();
  const images = new KeptFiles(200);
  let origin = '';

  const statusOf = (task: SimulatedTask): string => {
    const age = Date.now() - task.createdAt;
    if (age < queuedMs) return 'queued';
    if (age < queuedMs + runningMs) return 'running';
    return 'succeeded';
  };

  /** §2.3: the official SDK's task object, for the status the clock gives. */
  const taskObject = (task: SimulatedTask): Record<string, unknown> => {
    const status = statusOf(task);
    const succeeded = status === 'succeeded';
    const seconds = (ms: number) => Math.floor(ms / 1000);
    return {
      id: task.id,
      model: task.model,
      status,
      error: null,
      ...(succeeded ? { content: { video_url: `${origin}/videos/${task.id}.webm` }, usage: { completion_tokens: 108900, total_tokens: 108900 } } : {}),
      created_at: seconds(task.createdAt),
      updated_at: seconds(succeeded ? task.createdAt + queuedMs + runningMs : Date.now()),
      seed: typeof task.body.seed === 'number' && task.body.seed >= 0 ? task.body.seed : 78674,
      resolution: typeof task.body.resolution === 'string' ? task.body.resolution : '720p',
      ratio: typeof task.body.ratio === 'string' ? task.body.ratio : '16:9',
      duration: typeof task.body.duration === 'number' ? task.body.duration : 5,
      framespersecond: 24,
      service_tier: 'default',
      execution_expires_after: 172800,
      generate_audio: false,
      draft: false,
      priority: 0,
    };
  };

  const createTask = (body: unknown): { id: string } => {
    if (!isObject(body)) throw new ArkFailure(400, 'InvalidParameter', 'The request body must be a JSON object.');
    if (typeof body.model !== 'string' || body.model === '') throw new ArkFailure(400, 'MissingParameter', 'The required parameter `model` is missing.', 'model');
    if (!Array.isArray(body.content) || body.content.length === 0) throw new ArkFailure(400, 'MissingParameter', 'The required parameter `content` is missing.', 'content');
    body.content.forEach((item: unknown, index: number) => {
      const param = `content[${index}]`;
      if (!isObject(item) || typeof item.type !== 'string') throw new ArkFailure(400, 'InvalidParameter', `The parameter \`${param}\` must be an object with a type.`, param);
      const media = item[item.type];
      const url = isObject(media) ? media.url : undefined;
      if (typeof url === 'string' && url.startsWith('asset://') && options.knowsAsset && !options.knowsAsset(url.slice('asset://'.length))) {
        // the §2.6 message of a missing asset
        throw new ArkFailure(
          400,
          'InvalidParameter',
          `The parameter \`${param}.${item.type}.url\` specified in the request is not valid: The specified asset ${url.slice(8, 80)} is not found.`,
          `${param}.${item.type}.url`,
        );
      }
    });
    const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
    const id = `cgt-${stamp}-${randomBytes(3).toString('hex').slice(0, 5)}`;
    tasks.set(id, { id, model: body.model, createdAt: Date.now(), body });
    while (tasks.size > KEPT_TASKS) tasks.delete(tasks.keys().next().value!);
    return { id };
  };

  const generateImages = (body: unknown): Record<string, unknown> => {
    if (!isObject(body)) throw new ArkFailure(400, 'InvalidParameter', 'The request body must be a JSON object.');
    if (typeof body.model !== 'string' || body.model === '') throw new ArkFailure(400, 'MissingParameter', 'The required parameter `model` is missing.', 'model');
    if (typeof body.prompt !== 'string' || body.prompt.trim() === '') throw new ArkFailure(400, 'MissingParameter', 'The required parameter `prompt` is missing.', 'prompt');
    const { width, height } = parseSeedreamSize(body.size);
    const references = typeof body.image === 'string' ? [body.image] : Array.isArray(body.image) ? body.image.filter((item): item is string => typeof item === 'string') : [];
    // §2.7: no `n`; several images only with sequential generation and max_images
    const sequential = body.sequential_image_generation === 'auto';
    const sequence = isObject(body.sequential_image_generation_options) ? body.sequential_image_generation_options : {};
    const count = sequential && typeof sequence.max_images === 'number' ? Math.max(1, Math.min(4, Math.floor(sequence.max_images))) : 1;
    const scale = Math.min(1, RENDER_SIDE / Math.max(width, height));
    const prompt = body.prompt;
    const data = Array.from({ length: count }, (_, index) => {
      const png = renderPicture({ prompt, images: references, index, width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) });
      const id = randomUUID();
      images.set(id, png);
      return body.response_format === 'b64_json' ? { b64_json: png.toString('base64'), size: `${width}x${height}` } : { url: `${origin}/images/${id}.png`, size: `${width}x${height}` };
    });
    return { model: body.model, created: Math.floor(Date.now() / 1000), data, usage: { generated_images: count, output_tokens: 16280 * count, total_tokens: 16280 * count } };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]!;
    const file = /^\/(videos|images)\/([0-9A-Za-z-]+)\.(webm|png)$/.exec(path);
    if (file && (req.method === 'GET' || req.method === 'HEAD')) {
      // a video link dies after its first download (a real one lives 24 h): the gateway's durable copy outlives it
      const videoTask = file[1] === 'videos' && file[3] === 'webm' ? tasks.get(file[2]!) : undefined;
      if (videoTask && !videoTask.videoDownloaded) {
        if (req.method === 'GET') videoTask.videoDownloaded = true;
        return sendFile(req, res, SAMPLE_VIDEO, 'video/webm');
      }
      const png = file[1] === 'images' && file[3] === 'png' ? images.get(file[2]!) : undefined;
      if (png) return sendFile(req, res, png, 'image/png');
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('expired or unknown\n');
      return;
    }
    // §2.1: Bearer key on every API call; any non-empty one is accepted here
    if (!bearerKey(req)) throw new ArkFailure(401, 'AuthenticationError', 'The API key in the request is missing or invalid.');
    const task = /^\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/.exec(path);
    if (req.method === 'POST' && path === TASKS_PATH) return sendJson(res, 200, createTask(parseJson(await readBody(req, MAX_BODY_BYTES))), { 'x-request-id': requestId() });
    if (req.method === 'GET' && task) {
      const found = tasks.get(decodeURIComponent(task[1]!));
      if (!found) throw new ArkFailure(404, 'ResourceNotFound', `The specified task ${task[1]!.slice(0, 80)} is not found.`, 'id');
      return sendJson(res, 200, taskObject(found), { 'x-request-id': requestId() });
    }
    if (req.method === 'POST' && path === IMAGES_PATH) {
      const body = parseJson(await readBody(req, MAX_BODY_BYTES));
      const answer = generateImages(body);
      if (isObject(body) && body.stream === true) return streamImages(res, answer);
      return sendJson(res, 200, answer, { 'x-request-id': requestId() });
    }
    throw new ArkFailure(404, 'NotFound', `No API at ${req.method ?? 'GET'} ${path.slice(0, 100)} in this simulation.`);
  };

  const listening = await listenOnLoopback((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const failure =
        error instanceof ArkFailure
          ? error
          : error instanceof BodyTooLarge || error instanceof BodyNotJson
            ? new ArkFailure(error instanceof BodyTooLarge ? 413 : 400, 'InvalidParameter', error.message)
            : new ArkFailure(500, 'InternalServiceError', 'The simulation failed.');
      if (failure.status === 500) console.error('[simulated-ark]', error);
      // the body may be unread (401): drain it so the connection stays usable
      req.resume();
      if (res.headersSent) {
        res.end();
        return;
      }
      // §2.8: the request id sits inside the message
      sendJson(res, failure.status, {
        error: { code: failure.code, message: `${failure.message} Request id: ${requestId()}`, param: failure.param, type: TYPE_BY_STATUS[failure.status] ?? 'BadRequest' },
      });
    });
  });
  origin = listening.origin;
  return { baseURL: `${origin}/api/v3`, close: () => listening.close() };
}

/** §2.7 stream: one partial_succeeded event per image, then completed (no [DONE]: unconfirmed upstream). */
function streamImages(res: ServerResponse, answer: Record<string, unknown>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const data = answer.data as Array<Record<string, unknown>>;
  data.forEach((image, index) => {
    res.write(`data: ${JSON.stringify({ type: 'image_generation.partial_succeeded', model: answer.model, created: answer.created, image_index: index, ...image })}\n\n`);
  });
  res.end(`data: ${JSON.stringify({ type: 'image_generation.completed', model: answer.model, created: answer.created, usage: answer.usage })}\n\n`);
}

/** §2.7: a tier (`1K`, `2K`, `4K`) or `WxH` with an `x`; the `*` of DashScope is refused, as upstream. */
function parseSeedreamSize(size: unknown): { width: number; height: number } {
  const value = size ?? DEFAULT_IMAGE_SIZE;
  const tier = typeof value === 'string' ? TIER_SIDES[value.toUpperCase()] : undefined;
  if (tier) return { width: tier, height: tier };
  const match = typeof value === 'string' ? /^(\d{2,5})x(\d{2,5})$/.exec(value) : null;
  if (!match)
    throw new ArkFailure(400, 'InvalidParameter', `The parameter \`size\` specified in the request is not valid: use 1K, 2K, 4K or WIDTHxHEIGHT, got ${JSON.stringify(value).slice(0, 40)}.`, 'size');
  const width = Number(match[1]);
  const height = Number(match[2]);
  // Seedream 4.0: total pixels in [1280x720, 4096x4096], aspect within 1:16 (§2.7)
  if (width * height < 1280 * 720 || width * height > 4096 * 4096 || width / height > 16 || height / width > 16) {
    throw new ArkFailure(400, 'InvalidParameter', `The parameter \`size\` specified in the request is not valid: ${width}x${height} is outside [1280x720, 4096x4096].`, 'size');
  }
  return { width, height };
}

function requestId(): string {
  return `0217${Date.now()}${randomBytes(8).toString('hex')}`;
}
