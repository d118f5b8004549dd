// A simulated fal.ai queue for the example (docs/providers/fal.md "The queue"): `POST /{endpoint_id}`
// queues a request, `GET /{owner}/{alias}/requests/{id}/status` moves IN_QUEUE -> IN_PROGRESS ->
// COMPLETED with time, `GET /{owner}/{alias}/requests/{id}` answers `{ images: [...] }` (PNGs rendered
// from the prompt) or, for a video endpoint, `{ video: { url } }` (a real, playable WebM from
// examples/assets). Errors are fal's `{ detail }`. Nothing it receives leaves the machine; reference
// URLs are never fetched.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderPicture } from './render-png.js';
import { BodyNotJson, BodyTooLarge, KeptFiles, isObject, listenOnLoopback, parseJson, readBody, sendFile, sendJson } from './simulation-http.js';

export interface SimulatedFalOptions {
  /** How long a new request stays IN_QUEUE, ms. Default 500. */
  queuedMs?: number;
  /** How long it then stays IN_PROGRESS, ms. Default 1500 (video: three times as long). */
  runningMs?: number;
}

export interface SimulatedFal {
  /** The queue origin, as `https://queue.fal.run`: `http://127.0.0.1:<port>`. */
  baseURL: string;
  close(): Promise<void>;
}

/** The small real video every video request ends with: VP8 WebM, 256x144, 3 s. */
const SAMPLE_VIDEO = readFileSync(new URL('./assets/sample-video.webm', import.meta.url));
const MAX_BODY_BYTES = 48 * 1024 * 1024;
const RENDER_SIDE = 512;
const KEPT_REQUESTS = 500;
// fal's named image sizes (FLUX-style endpoints)
const NAMED_SIZES: Readonly<Record<string, [number, number]>> = {
  square_hd: [1024, 1024],
  square: [512, 512],
  portrait_4_3: [768, 1024],
  portrait_16_9: [576, 1024],
  landscape_4_3: [1024, 768],
  landscape_16_9: [1024, 576],
};
const ENDPOINT = /^\/([A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*(?:\/[A-Za-z0-9][\w.-]*)*)$/;
const REQUEST = /^\/([\w.-]+\/[\w.-]+)\/requests\/([0-9a-f-]{36})(\/status)?$/;

class FalFailure extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
  ) {
    super(typeof detail === 'string' ? detail : 'validation error');
  }
}

interface QueuedRequest {
  id: string;
  app: string;
  endpoint: string;
  input: Record<string, unknown>;
  createdAt: number;
  video: boolean;
  result?: Record<string, unknown>;
}

/** `image_size` ({ width, height } or a name) or `aspect_ratio` as the sides to render. */
function sidesOf(input: Record<string, unknown>): [number, number] {
  const size = input.image_size;
  if (typeof size === 'string') {
    const named = NAMED_SIZES[size];
    if (!named) throw new FalFailure(422, [{ loc: ['body', 'image_size'], msg: `unexpected value; permitted: ${Object.keys(NAMED_SIZES).join(', ')}`, type: 'value_error' }]);
    return named;
  }
  if (isObject(size)) {
    const { width, height } = size;
    if (typeof width !== 'number' || typeof height !== 'number' || width < 1 || height < 1 || width > 14_142 || height > 14_142) {
      throw new FalFailure(422, [{ loc: ['body', 'image_size'], msg: 'width and height must be between 1 and 14142', type: 'value_error' }]);
    }
    return [width, height];
  }
  const ratio = typeof input.aspect_ratio === 'string' ? /^(\d+):(\d+)$/.exec(input.aspect_ratio) : null;
  if (ratio) {
    const [w, h] = [Number(ratio[1]), Number(ratio[2])];
    return w >= h ? [1024, Math.round((1024 * h) / w)] : [Math.round((1024 * w) / h), 1024];
  }
  return [1024, 1024];
}

export async function startSimulatedFal(options: SimulatedFalOptions = {}): Promise<SimulatedFal> {
  const queuedMs = options.queuedMs ?? 500;
  const runningMs = options.runningMs ?? 1500;
  const requests = new Map<string, QueuedRequest>();
  const images = new KeptFiles(200);
  let origin = '';

  const statusOf = (request: QueuedRequest): 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED' => {
    const age = Date.now() - request.createdAt;
    if (age < queuedMs) return 'IN_QUEUE';
    return age < queuedMs + runningMs * (request.video ? 3 : 1) ? 'IN_PROGRESS' : 'COMPLETED';
  };

  const urls = (request: QueuedRequest): Record<string, string> => ({
    status_url: `${origin}/${request.app}/requests/${request.id}/status`,
    response_url: `${origin}/${request.app}/requests/${request.id}`,
    cancel_url: `${origin}/${request.app}/requests/${request.id}/cancel`,
  });

  const submit = (endpoint: string, body: unknown): QueuedRequest => {
    if (!isObject(body)) throw new FalFailure(422, [{ loc: ['body'], msg: 'the body must be a JSON object', type: 'type_error' }]);
    const video = /video|veo/.test(endpoint);
    if (typeof body.prompt !== 'string' && !(video && typeof body.image_url === 'string')) throw new FalFailure(422, [{ loc: ['body', 'prompt'], msg: 'field required', type: 'value_error.missing' }]);
    const n = body.num_images ?? 1;
    if (!video && (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 4))
      throw new FalFailure(422, [{ loc: ['body', 'num_images'], msg: 'ensure this value is between 1 and 4', type: 'value_error' }]);
    if (!video) sidesOf(body);
    const segments = endpoint.split('/');
    const request: QueuedRequest = { id: randomUUID(), app: segments.slice(0, 2).join('/'), endpoint, input: body, createdAt: Date.now(), video };
    requests.set(request.id, request);
    while (requests.size > KEPT_REQUESTS) requests.delete(requests.keys().next().value!);
    return request;
  };

  const resultOf = (request: QueuedRequest): Record<string, unknown> => {
    if (request.result) return request.result;
    if (request.video) {
      request.result = { video: { url: `${origin}/files/${request.id}.webm`, content_type: 'video/webm', file_name: 'output.webm', file_size: SAMPLE_VIDEO.length } };
      return request.result;
    }
    const [width, height] = sidesOf(request.input);
    const scale = Math.min(1, RENDER_SIDE / Math.max(width, height));
    const prompt = typeof request.input.prompt === 'string' ? request.input.prompt : '';
    const references = Array.isArray(request.input.image_urls) ? request.input.image_urls.map(String) : typeof request.input.image_url === 'string' ? [request.input.image_url] : [];
    const count = typeof request.input.num_images === 'number' ? request.input.num_images : 1;
    const made = Array.from({ length: count }, (_, index) => {
      const png = renderPicture({ prompt, images: references, index, width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) });
      const id = randomUUID();
      images.set(id, png);
      return { url: `${origin}/files/${id}.png`, content_type: 'image/png', width, height };
    });
    request.result = { images: made, timings: { inference: 1.1 }, seed: 42, has_nsfw_concepts: made.map(() => false), prompt };
    return request.result;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]!;
    const file = /^\/files\/([0-9a-f-]{36})\.(png|webm)$/.exec(path);
    if (file && (req.method === 'GET' || req.method === 'HEAD')) {
      if (file[2] === 'webm' && requests.get(file[1]!)?.video) return sendFile(req, res, SAMPLE_VIDEO, 'video/webm');
      const png = file[2] === 'png' ? images.get(file[1]!) : undefined;
      if (png) return sendFile(req, res, png, 'image/png');
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('expired or unknown\n');
      return;
    }
    // `Authorization: Key <key>` on every API call; any non-empty key is accepted here
    if (!/^Key\s+\S+/.test(req.headers.authorization ?? '')) throw new FalFailure(401, 'Authentication is required to perform this action.');
    const queued = REQUEST.exec(path);
    if (req.method === 'GET' && queued) {
      const request = requests.get(queued[2]!);
      if (!request || request.app !== queued[1]) throw new FalFailure(404, 'Request not found');
      const status = statusOf(request);
      if (queued[3])
        return sendJson(res, status === 'COMPLETED' ? 200 : 202, { status, request_id: request.id, ...(status === 'IN_QUEUE' ? { queue_position: 0 } : { logs: null }), ...urls(request) });
      if (status !== 'COMPLETED') throw new FalFailure(400, 'Request is still in progress');
      return sendJson(res, 200, resultOf(request), { 'x-fal-request-id': request.id });
    }
    const endpoint = ENDPOINT.exec(path);
    if (req.method === 'POST' && endpoint) {
      const request = submit(endpoint[1]!, parseJson(await readBody(req, MAX_BODY_BYTES)));
      return sendJson(res, 200, { status: 'IN_QUEUE', request_id: request.id, queue_position: 0, ...urls(request) }, { 'x-fal-request-id': request.id });
    }
    throw new FalFailure(404, `No API at ${req.method ?? 'GET'} ${path.slice(0, 100)} in this simulation.`);
  };

  const listening = await listenOnLoopback((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const failure =
        error instanceof FalFailure
          ? error
          : error instanceof BodyTooLarge || error instanceof BodyNotJson
            ? new FalFailure(error instanceof BodyTooLarge ? 413 : 400, error.message)
            : new FalFailure(500, 'The simulation failed.');
      if (failure.status === 500) console.error('[simulated-fal]', error);
      // the body may be unread (401): drain it so the connection stays usable
      req.resume();
      if (res.headersSent) {
        res.end();
        return;
      }
      sendJson(res, failure.status, { detail: failure.detail });
    });
  });
  origin = listening.origin;
  return { baseURL: origin, close: () => listening.close() };
}
