// A fake Replicate speaking the predictions API of docs/providers/replicate.md as the official client
// sends and reads it: `POST /v1/models/{owner}/{name}/predictions` (or `POST /v1/predictions` with a
// `version`) with a bearer token, answered 201 with the prediction object; `Prefer: wait=N` holds the
// answer until the prediction ends or N seconds pass; `GET /v1/predictions/{id}`; `POST
// /v1/predictions/{id}/cancel`; problem-details errors. Image outputs are PNG URLs on the fake itself
// (a list for the FLUX schnell/dev models, one URL for the others), video outputs one video URL.
// `GET /v1/webhooks/default/secret` answers the account's webhook signing secret (REPLICATE_WEBHOOK_SECRET).
// It counts the predictions created (the paid work) and the cancels it received; tests script failures,
// hold predictions, and make a prediction gone on its read (404).
import type { ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { type FakeUpstream, type RecordedRequest, sendJson, startFakeUpstream } from './fake-upstream.js';
import { TINY_PNG } from './images.js';

export const REPLICATE_TOKEN = 'r8_operator-token-0123456789';
/** The account's webhook signing secret, served at `GET /v1/webhooks/default/secret` as Replicate does. */
export const REPLICATE_WEBHOOK_SECRET = `whsec_${Buffer.from('fake-replicate-webhook-signing-key-32b').toString('base64')}`;
export const SAMPLE_VIDEO = readFileSync(new URL('../../examples/assets/sample-video.webm', import.meta.url));
const CREATE_MODEL = /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/;
const PREDICTION = /^\/v1\/predictions\/([^/]+)$/;
const CANCEL = /^\/v1\/predictions\/([^/]+)\/cancel$/;
const FILE = /^\/files\/([^/]+)$/;

/** How a scripted prediction ends: its error, or (default) success. */
export interface Outcome {
  fail?: string;
  /** Succeeded without any output. */
  empty?: boolean;
}

interface FakePrediction {
  id: string;
  model: string;
  version?: string;
  input: Record<string, unknown>;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  output: unknown;
  error: string | null;
  createdAt: string;
  completedAt?: string;
  finished: Promise<void>;
  /** The request that created it (the counts follow the recorded requests, cleared between tests). */
  request: RecordedRequest;
  images: number;
}

export interface FakeReplicate extends FakeUpstream {
  /** `${origin}/v1`, the client's own base. */
  baseURL: string;
  /** Predictions created (paid work started), since the recorded requests were last cleared. */
  created(): number;
  /** Images in the outputs of succeeded predictions, counted the same way. */
  imagesMade(): number;
  /** How the next predictions end, first in first out; default success. */
  outcomes: Outcome[];
  /** Predictions created after this stay `processing` until the returned function is called. */
  hold(): () => void;
  /**
   * `waitCapMs`: the longest a `Prefer: wait` is held, in ms (Replicate's own: the N asked); 0 answers at
   * once. `goneOnRead`: a prediction read by id is gone (404 Not found), as one Replicate no longer knows.
   */
  settings: { waitCapMs?: number; goneOnRead?: boolean };
  /** The next `GET /v1/predictions/{id}` answers this status (a 500 or 503 problem, or 404 Not found). */
  failNextPoll(status: number): void;
  /** The ids of the predictions asked to be canceled (`POST /v1/predictions/{id}/cancel`), in order. */
  cancels(): string[];
  predictions: Map<string, FakePrediction>;
  /** The prediction-creating requests. */
  creates(): RecordedRequest[];
  polls(): RecordedRequest[];
}

const problem = (res: ServerResponse, status: number, title: string, detail: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): void =>
  sendJson(res, status, { title, detail, status, ...extra }, { ...headers, 'content-type': 'application/problem+json' });

function isVideoModel(model: string): boolean {
  return /kling|video|hailuo|veo|wan-2/.test(model);
}

/** FLUX schnell and dev answer a list of files; the others one file. */
function answersList(model: string): boolean {
  return /^black-forest-labs\/flux-(?:schnell|dev)$/.test(model);
}

export async function startFakeReplicate(): Promise<FakeReplicate> {
  let count = 0;
  let held: Promise<void> | undefined;
  let pollFailure: number | undefined;
  const predictions = new Map<string, FakePrediction>();
  const outcomes: Outcome[] = [];
  let origin = '';
  const settings: { waitCapMs?: number; goneOnRead?: boolean } = {};
  const cancelled: string[] = [];

  const view = (p: FakePrediction): Record<string, unknown> => ({
    id: p.id,
    model: p.model,
    version: p.version ?? 'hidden',
    input: p.input,
    logs: '',
    output: p.output,
    data_removed: false,
    error: p.error,
    status: p.status,
    created_at: p.createdAt,
    ...(p.status !== 'starting' ? { started_at: p.createdAt } : {}),
    ...(p.completedAt ? { completed_at: p.completedAt } : {}),
    urls: {
      // the real API's URLs point at api.replicate.com: the gateway must never follow them
      get: `https://api.replicate.com/v1/predictions/${p.id}`,
      cancel: `https://api.replicate.com/v1/predictions/${p.id}/cancel`,
      web: `https://replicate.com/p/${p.id}`,
    },
    metrics: p.completedAt ? { predict_time: 1.25, total_time: 1.5 } : {},
  });

  const finish = (p: FakePrediction, outcome: Outcome): void => {
    if (p.status === 'canceled') return;
    p.completedAt = new Date().toISOString();
    if (outcome.fail) {
      p.status = 'failed';
      p.error = outcome.fail;
      return;
    }
    p.status = 'succeeded';
    if (outcome.empty) {
      p.output = null;
      return;
    }
    if (isVideoModel(p.model)) {
      p.output = `${origin}/files/${p.id}.webm`;
      return;
    }
    const n = typeof p.input.num_outputs === 'number' ? p.input.num_outputs : 1;
    const urls = Array.from({ length: n }, (_unused, index) => `${origin}/files/${p.id}-${index}.png`);
    p.images = n;
    p.output = answersList(p.model) ? urls : urls[0];
  };

  const fake = await startFakeUpstream(
    async (request: RecordedRequest, res: ServerResponse) => {
      const file = FILE.exec(request.path);
      if (request.method === 'GET' && file) {
        const video = file[1]!.endsWith('.webm');
        const bytes = video ? SAMPLE_VIDEO : TINY_PNG;
        res.writeHead(200, { 'content-type': video ? 'video/webm' : 'image/png', 'content-length': bytes.length });
        res.end(bytes);
        return;
      }
      if (request.headers.authorization !== `Bearer ${REPLICATE_TOKEN}`) {
        problem(res, 401, 'Unauthenticated', 'You did not pass a valid authentication token');
        return;
      }
      if (request.method === 'GET' && request.path === '/v1/webhooks/default/secret') {
        sendJson(res, 200, { key: REPLICATE_WEBHOOK_SECRET });
        return;
      }
      const byModel = CREATE_MODEL.exec(request.path);
      if (request.method === 'POST' && (byModel || request.path === '/v1/predictions')) {
        const body = request.json as Record<string, unknown> | undefined;
        const input = body && typeof body.input === 'object' && body.input !== null ? (body.input as Record<string, unknown>) : undefined;
        if (!input) {
          problem(res, 422, 'Input validation failed', '- input: Invalid type. Expected: object, given: null', {
            invalid_fields: [{ type: 'invalid_type', field: 'input', description: 'Invalid type. Expected: object, given: null' }],
          });
          return;
        }
        if (!byModel && typeof body?.version !== 'string') {
          problem(res, 422, 'Input validation failed', '- version: version is required', { invalid_fields: [{ type: 'required', field: 'version', description: 'version is required' }] });
          return;
        }
        count += 1;
        const model = byModel ? `${decodeURIComponent(byModel[1]!)}/${decodeURIComponent(byModel[2]!)}` : 'versioned/model';
        const outcome = outcomes.shift() ?? {};
        const gate = held;
        const p: FakePrediction = {
          id: `rp${String(count).padStart(4, '0')}xq7nbwcr0m`,
          model,
          ...(byModel ? {} : { version: String(body?.version) }),
          input,
          status: gate ? 'processing' : 'starting',
          output: null,
          error: null,
          createdAt: new Date().toISOString(),
          finished: Promise.resolve(),
          request,
          images: 0,
        };
        p.finished = (gate ?? Promise.resolve()).then(() => finish(p, outcome));
        predictions.set(p.id, p);
        const prefer = /(?:^|[,;\s])wait(?:=(\d+))?/.exec(String(request.headers.prefer ?? ''));
        if (prefer) {
          const asked = prefer[1] ? Number(prefer[1]) * 1000 : 60_000;
          const waitMs = Math.min(asked, settings.waitCapMs ?? asked);
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([p.finished, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
          clearTimeout(timer);
        }
        sendJson(res, 201, view(p));
        return;
      }
      const cancel = CANCEL.exec(request.path);
      if (request.method === 'POST' && cancel) {
        const p = predictions.get(decodeURIComponent(cancel[1]!));
        if (!p) return problem(res, 404, 'Not found', 'The requested resource could not be found.');
        cancelled.push(p.id);
        if (p.status === 'starting' || p.status === 'processing') {
          p.status = 'canceled';
          p.completedAt = new Date().toISOString();
        }
        sendJson(res, 200, view(p));
        return;
      }
      const get = PREDICTION.exec(request.path);
      if (request.method === 'GET' && get) {
        if (pollFailure !== undefined) {
          const status = pollFailure;
          pollFailure = undefined;
          if (status === 404) problem(res, 404, 'Not found', 'The requested resource could not be found.');
          else problem(res, status, 'Internal Server Error', 'Something went wrong');
          return;
        }
        const p = settings.goneOnRead ? undefined : predictions.get(decodeURIComponent(get[1]!));
        if (!p) return problem(res, 404, 'Not found', 'The requested resource could not be found.');
        // a prediction still starting after its first read is processing
        const answer = view(p);
        if (p.status === 'starting') p.status = 'processing';
        sendJson(res, 200, answer);
        return;
      }
      problem(res, 404, 'Not found', `no route ${request.path}`);
    },
    (path) => path.startsWith('/v1/'),
  );
  origin = fake.origin;
  const live = (): FakePrediction[] => [...predictions.values()].filter((p) => fake.requests.includes(p.request));
  return Object.assign(fake, {
    baseURL: `${fake.origin}/v1`,
    created: () => live().length,
    imagesMade: () => live().reduce((sum, p) => sum + p.images, 0),
    outcomes,
    settings,
    hold() {
      let release!: () => void;
      held = new Promise<void>((resolve) => (release = resolve));
      return () => {
        held = undefined;
        release();
      };
    },
    failNextPoll(status: number) {
      pollFailure = status;
    },
    cancels: () => [...cancelled],
    predictions,
    creates: () => fake.requests.filter((r) => r.method === 'POST' && (CREATE_MODEL.test(r.path) || r.path === '/v1/predictions')),
    polls: () => fake.requests.filter((r) => r.method === 'GET' && PREDICTION.test(r.path)),
  });
}
