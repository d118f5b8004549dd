// A fake fal queue speaking the wire format of docs/providers/fal.md as @fal-ai/client reads it:
// `POST /{endpoint_id}` with `Authorization: Key <key>` answers `{ request_id, status_url,
// response_url, cancel_url }` (paid from there: counted), `GET /{owner}/{alias}/requests/{id}/status`
// IN_QUEUE then COMPLETED, `GET /{owner}/{alias}/requests/{id}` the result (`images[]`, or `video` for a
// video endpoint), served files under /files/, `PUT /{owner}/{alias}/requests/{id}/cancel` (counted; a
// request cancelled before it completed then reads COMPLETED with fal's cancellation error). The URLs in
// its answers name the real fal origin, which the gateway must never follow. Tests script each kind of
// answer with `script()`, and hold requests IN_PROGRESS with `setRunning()`.
import type { ServerResponse } from 'node:http';
import { type FakeUpstream, type RecordedRequest, type Responder, sendJson, startFakeUpstream } from './fake-upstream.js';
import { TINY_PNG } from './images.js';

export const FAL_KEY = 'fal-operator-key-0123:abcdef';
/** A few bytes served as the video file (a real file is not needed to download one). */
export const FAKE_VIDEO = Buffer.from('fake-webm-video-bytes');

const STATUS = /^\/([^/]+\/[^/]+)\/requests\/([^/?]+)\/status(?:\?.*)?$/;
const RESULT = /^\/([^/]+\/[^/]+)\/requests\/([^/?]+)$/;
const CANCEL = /^\/([^/]+\/[^/]+)\/requests\/([^/?]+)\/cancel$/;

type Kind = 'submit' | 'status' | 'result';

export interface FakeFal extends FakeUpstream {
  /** Submits accepted (paid work started). */
  submits(): number;
  /** Answers the next request of this kind with `responder` (first in, first out), the others as usual. */
  script(kind: Kind, responder: Responder): void;
  /** The input each accepted submit carried, in order, with its endpoint id. */
  inputs(): Array<{ endpoint: string; input: Record<string, unknown>; requestId: string }>;
  /** Status reads of one request that answer IN_QUEUE before COMPLETED. Default 1. */
  setQueueReads(reads: number): void;
  /** The result body of a request (what the default result answer sends). */
  resultOf(requestId: string): Record<string, unknown>;
  /** While true, every request past its queue reads stays IN_PROGRESS (running, paid) until cancelled. */
  setRunning(running: boolean): void;
  /** The request ids fal was asked to cancel (`PUT …/requests/{id}/cancel`), in order. */
  cancels(): string[];
  /** The request ids whose work started (read IN_PROGRESS or COMPLETED at least once): paid work. */
  started(): string[];
}

/** fal's 4xx/5xx body: `{ detail }` (a string, or FastAPI's list for a 422). */
export function falError(res: ServerResponse, status: number, detail: unknown, headers: Record<string, string> = {}): void {
  sendJson(res, status, { detail }, { 'x-fal-request-id': 'fal-err-1', ...headers });
}

let sequence = 0;

export async function startFakeFal(): Promise<FakeFal> {
  let origin = '';
  let submits = 0;
  let queueReads = 1;
  let running = false;
  const cancelled: string[] = [];
  const started = new Set<string>();
  const inputs: Array<{ endpoint: string; input: Record<string, unknown>; requestId: string }> = [];
  const reads = new Map<string, number>();
  const scripted: Record<Kind, Responder[]> = { submit: [], status: [], result: [] };
  const urls = (app: string, id: string): Record<string, string> => ({
    // the real fal origin: a gateway that followed these would leave the test's network
    status_url: `https://queue.fal.run/${app}/requests/${id}/status`,
    response_url: `https://queue.fal.run/${app}/requests/${id}`,
    cancel_url: `https://queue.fal.run/${app}/requests/${id}/cancel`,
  });

  const resultOf = (id: string): Record<string, unknown> => {
    const submitted = inputs.find((entry) => entry.requestId === id);
    if (!submitted) return {};
    if (/video|veo/.test(submitted.endpoint)) {
      return { video: { url: `${origin}/files/${id}.webm`, content_type: 'video/webm', file_name: `${id}.webm`, file_size: FAKE_VIDEO.length } };
    }
    const n = typeof submitted.input.num_images === 'number' ? submitted.input.num_images : 1;
    return {
      images: Array.from({ length: n }, (_, index) => ({ url: `${origin}/files/${id}-${index}.png`, content_type: 'image/png', width: 1024, height: 768 })),
      timings: { inference: 1.2 },
      seed: 42,
      has_nsfw_concepts: Array.from({ length: n }, () => false),
      prompt: submitted.input.prompt,
    };
  };

  /** Whether fal knows the request; when not, answers its 404. */
  const known = (id: string, res: ServerResponse): boolean => {
    if (inputs.some((entry) => entry.requestId === id)) return true;
    falError(res, 404, 'Request not found');
    return false;
  };

  const answer = (request: RecordedRequest, res: ServerResponse): void => {
    if (request.method === 'GET' && request.path.startsWith('/files/')) {
      const video = request.path.endsWith('.webm');
      const bytes = video ? FAKE_VIDEO : TINY_PNG;
      res.writeHead(200, { 'content-type': video ? 'video/webm' : 'image/png', 'content-length': bytes.length });
      res.end(bytes);
      return;
    }
    if (request.headers.authorization !== `Key ${FAL_KEY}`) {
      falError(res, 401, 'Authentication is required to perform this action.');
      return;
    }
    const status = STATUS.exec(request.path);
    if (request.method === 'GET' && status) {
      const [, app, id] = status as unknown as [string, string, string];
      if (!known(id, res)) return;
      const seen = (reads.get(id) ?? 0) + 1;
      reads.set(id, seen);
      if (cancelled.includes(id)) {
        // fal ends a cancelled request COMPLETED, with the cancellation as its error
        sendJson(res, 200, { status: 'COMPLETED', error: 'Request was cancelled', error_type: 'request_cancelled', request_id: id, ...urls(app, id) });
        return;
      }
      if (seen > queueReads) started.add(id);
      if (seen > queueReads && running) {
        sendJson(res, 202, { status: 'IN_PROGRESS', logs: null, request_id: id, ...urls(app, id) });
        return;
      }
      const state = seen <= queueReads ? { status: 'IN_QUEUE', queue_position: 0 } : { status: 'COMPLETED', logs: null, metrics: { inference_time: 1.2 } };
      sendJson(res, seen <= queueReads ? 202 : 200, { ...state, request_id: id, ...urls(app, id) });
      return;
    }
    const result = RESULT.exec(request.path);
    if (request.method === 'GET' && result) {
      const id = result[2]!;
      if (!known(id, res)) return;
      sendJson(res, 200, resultOf(id), { 'x-fal-request-id': id });
      return;
    }
    // queue.ts `cancel`: a PUT on the request; fal answers 202 while it was still queued or running
    const cancel = CANCEL.exec(request.path);
    if (request.method === 'PUT' && cancel) {
      const id = cancel[2]!;
      if (!known(id, res)) return;
      cancelled.push(id);
      sendJson(res, 202, { status: 'CANCELLATION_REQUESTED' });
      return;
    }
    if (request.method === 'POST') {
      const endpoint = request.path.replace(/^\//, '').replace(/\?.*$/, '');
      const id = `fal-req-${++sequence}-0000-4a1b`;
      const input = (request.json ?? {}) as Record<string, unknown>;
      submits += 1;
      inputs.push({ endpoint, input, requestId: id });
      const app = endpoint.split('/').slice(0, 2).join('/');
      sendJson(res, 200, { status: 'IN_QUEUE', request_id: id, queue_position: 0, ...urls(app, id) }, { 'x-fal-request-id': id });
      return;
    }
    falError(res, 404, `no route ${request.method} ${request.path}`);
  };

  const fake = await startFakeUpstream(
    (request, res, raw) => {
      if (request.path.startsWith('/files/')) return answer(request, res);
      const kind: Kind = request.method === 'POST' ? 'submit' : STATUS.test(request.path) ? 'status' : 'result';
      const responder = scripted[kind].shift();
      return responder ? responder(request, res, raw) : answer(request, res);
    },
    (path) => !path.startsWith('/files/'),
  );
  origin = fake.origin;
  return Object.assign(fake, {
    submits: () => submits,
    script: (kind: Kind, responder: Responder) => scripted[kind].push(responder),
    inputs: () => inputs,
    setQueueReads: (count: number) => {
      queueReads = count;
    },
    resultOf,
    setRunning: (value: boolean) => {
      running = value;
    },
    cancels: () => [...cancelled],
    started: () => [...started],
  });
}
