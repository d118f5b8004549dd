// A simulated Replicate for the example: a real node:http server that speaks the predictions API of
// docs/providers/replicate.md (`POST /v1/models/{owner}/{name}/predictions` with `Prefer: wait=N`,
// `POST /v1/predictions` with a version, `GET /v1/predictions/{id}`, cancel, problem-details errors)
// and serves the PNGs and the video it "made" at the URLs it answered. Image predictions take about a
// second, video ones a few: an image request is answered within its wait, a video task is polled. It
// lets `npm start` run with no Replicate account; nothing it receives leaves the machine, and the
// input image URLs are never fetched.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderPicture } from './render-png.js';
import { BodyNotJson, BodyTooLarge, KeptFiles, bearerKey, isObject, listenOnLoopback, parseJson, readBody, sendFile, sendJson } from './simulation-http.js';

export interface SimulatedReplicateOptions {
  /** Port to listen on. Default 0: any free port. */
  port?: number;
}

export interface SimulatedReplicate {
  /** The official client's base, e.g. `http://127.0.0.1:53187/v1` (the gateway appends its paths). */
  baseURL: string;
  close(): Promise<void>;
}

const SAMPLE_VIDEO = readFileSync(new URL('./assets/sample-video.webm', import.meta.url));
const CREATE = /^\/v1\/models\/([\w.-]+)\/([\w.-]+)\/predictions$/;
const PREDICTION = /^\/v1\/predictions\/([a-z0-9]+)$/;
const CANCEL = /^\/v1\/predictions\/([a-z0-9]+)\/cancel$/;
const FILE = /^\/files\/([a-z0-9-]+)\.(png|webm)$/;
// Data URL input images of an edit, with room to spare
const MAX_BODY_BYTES = 48 * 1024 * 1024;
const IMAGE_MS = 1_000;
const VIDEO_MS = 4_000;
const KEPT = 200;
// FLUX ratios; a model that takes width and height gets them as they are
const RATIOS: Readonly<Record<string, [number, number]>> = {
  '1:1': [1, 1],
  '16:9': [16, 9],
  '21:9': [21, 9],
  '3:2': [3, 2],
  '2:3': [2, 3],
  '4:5': [4, 5],
  '5:4': [5, 4],
  '3:4': [3, 4],
  '4:3': [4, 3],
  '9:16': [9, 16],
  '9:21': [9, 21],
};

interface Prediction {
  id: string;
  model: string;
  version: string;
  input: Record<string, unknown>;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  output: string | string[] | null;
  error: string | null;
  createdAt: string;
  doneAt: number;
  completedAt?: string;
  /** What it makes when its time has come. */
  make: () => string | string[];
}

function problem(res: ServerResponse, status: number, title: string, detail: string, extra: Record<string, unknown> = {}): void {
  sendJson(res, status, { title, detail, status, ...extra }, { 'content-type': 'application/problem+json' });
}

export async function startSimulatedReplicate(options: SimulatedReplicateOptions = {}): Promise<SimulatedReplicate> {
  const files = new KeptFiles(KEPT);
  const predictions = new Map<string, Prediction>();
  let origin = '';

  /** A prediction's state now: it ends when its time has come. */
  const advance = (p: Prediction): Prediction => {
    if ((p.status === 'starting' || p.status === 'processing') && Date.now() >= p.doneAt) {
      p.output = p.make();
      p.status = 'succeeded';
      p.completedAt = new Date().toISOString();
    } else if (p.status === 'starting') p.status = 'processing';
    return p;
  };

  const view = (p: Prediction): Record<string, unknown> => ({
    id: p.id,
    model: p.model,
    version: p.version,
    input: p.input,
    logs: '',
    output: p.output,
    data_removed: false,
    error: p.error,
    status: p.status,
    created_at: p.createdAt,
    ...(p.completedAt ? { completed_at: p.completedAt } : {}),
    urls: { get: `${origin}/v1/predictions/${p.id}`, cancel: `${origin}/v1/predictions/${p.id}/cancel`, web: `https://replicate.com/p/${p.id}` },
    metrics: p.completedAt ? { predict_time: (Date.parse(p.completedAt) - Date.parse(p.createdAt)) / 1000 } : {},
  });

  const imagesOf = (model: string, input: Record<string, unknown>): (() => string[]) => {
    const prompt = typeof input.prompt === 'string' ? input.prompt : '';
    const references = ['image_input', 'input_image', 'image', 'image_prompt'].flatMap((name) => {
      const value = input[name];
      return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : typeof value === 'string' ? [value] : [];
    });
    const [w, h] = typeof input.width === 'number' && typeof input.height === 'number' ? [input.width, input.height] : (RATIOS[String(input.aspect_ratio)] ?? [1, 1]);
    const scale = 512 / Math.max(w, h);
    const n = typeof input.num_outputs === 'number' && input.num_outputs >= 1 && input.num_outputs <= 4 ? input.num_outputs : 1;
    return () =>
      Array.from({ length: n }, (_unused, index) => {
        const id = randomBytes(10).toString('hex');
        files.set(id, renderPicture({ prompt: `${model} ${prompt}`, images: references, index, width: Math.max(1, Math.round(w * scale)), height: Math.max(1, Math.round(h * scale)) }));
        return `${origin}/files/${id}.png`;
      });
  };

  const create = async (req: IncomingMessage, res: ServerResponse, model: string | undefined): Promise<void> => {
    const body = parseJson(await readBody(req, MAX_BODY_BYTES));
    const input = isObject(body) && isObject(body.input) ? body.input : undefined;
    if (!input) return problem(res, 422, 'Input validation failed', '- input: input is required', { invalid_fields: [{ type: 'required', field: 'input', description: 'input is required' }] });
    if (typeof input.prompt !== 'string' || input.prompt.trim() === '') {
      return problem(res, 422, 'Input validation failed', '- input.prompt: prompt is required', { invalid_fields: [{ type: 'required', field: 'input.prompt', description: 'prompt is required' }] });
    }
    const version = model ? 'latest' : isObject(body) && typeof body.version === 'string' ? body.version : undefined;
    if (!version)
      return problem(res, 422, 'Input validation failed', '- version: version is required', { invalid_fields: [{ type: 'required', field: 'version', description: 'version is required' }] });
    const name = model ?? 'versioned/model';
    const video = /kling|video|hailuo|veo|wan-/.test(name);
    const makeImages = imagesOf(name, input);
    const p: Prediction = {
      id: randomBytes(13)
        .toString('base64url')
        .toLowerCase()
        .replace(/[^a-z0-9]/g, 'x'),
      model: name,
      version,
      input,
      status: 'starting',
      output: null,
      error: null,
      createdAt: new Date().toISOString(),
      doneAt: Date.now() + (video ? VIDEO_MS : IMAGE_MS),
      make: () => {
        if (!video) {
          const urls = makeImages();
          // FLUX schnell and dev answer a list of files; the others one
          return /flux-(?:schnell|dev)$/.test(name) ? urls : urls[0]!;
        }
        return `${origin}/files/${p.id}.webm`;
      },
    };
    predictions.set(p.id, p);
    while (predictions.size > KEPT) predictions.delete(predictions.keys().next().value!);
    // `Prefer: wait=N`: the answer waits until the prediction ends or N seconds pass
    const wait = /(?:^|[,;\s])wait(?:=(\d+))?/.exec(String(req.headers.prefer ?? ''));
    if (wait) {
      const until = Math.min(p.doneAt, Date.now() + (wait[1] ? Number(wait[1]) : 60) * 1000);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())));
    }
    sendJson(res, 201, view(advance(p)));
  };

  const listening = await listenOnLoopback((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const file = FILE.exec(path);
    if (file && (req.method === 'GET' || req.method === 'HEAD')) {
      if (file[2] === 'webm') return sendFile(req, res, SAMPLE_VIDEO, 'video/webm');
      const png = files.get(file[1]!);
      if (!png) return problem(res, 404, 'Not found', 'The file was deleted (outputs are kept for an hour).');
      return sendFile(req, res, png, 'image/png');
    }
    // any non-empty token is accepted; a missing one is Replicate's 401
    if (!bearerKey(req)) {
      req.resume();
      return problem(res, 401, 'Unauthenticated', 'You did not pass a valid authentication token');
    }
    const byModel = CREATE.exec(path);
    if (req.method === 'POST' && (byModel || path === '/v1/predictions')) {
      create(req, res, byModel ? `${byModel[1]}/${byModel[2]}` : undefined).catch((error: unknown) => {
        req.resume();
        if (error instanceof BodyTooLarge || error instanceof BodyNotJson) return problem(res, 400, 'Bad request', error.message);
        console.error('[simulated-replicate]', error);
        problem(res, 500, 'Internal server error', 'The simulation failed.');
      });
      return;
    }
    const cancel = CANCEL.exec(path);
    const get = PREDICTION.exec(path);
    const p = predictions.get((cancel ?? get)?.[1] ?? '');
    if ((cancel && req.method === 'POST') || (get && req.method === 'GET')) {
      if (!p) return problem(res, 404, 'Not found', 'The requested resource could not be found.');
      advance(p);
      if (cancel && (p.status === 'starting' || p.status === 'processing')) {
        p.status = 'canceled';
        p.completedAt = new Date().toISOString();
      }
      return sendJson(res, 200, view(p));
    }
    problem(res, 404, 'Not found', `No API at ${req.method ?? 'GET'} ${path} in this simulation.`);
  }, options.port);
  origin = listening.origin;
  return { baseURL: `${origin}/v1`, close: () => listening.close() };
}
