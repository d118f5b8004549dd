// A fake Veo speaking the long-running operation wire format of docs/providers/gemini.md "Video (Veo)"
// (as @google/genai sends and reads it): on the Gemini API, `POST /v1beta/models/{model}:predictLongRunning`
// with `x-goog-api-key`, the operation at `GET /v1beta/{name}`, and the video at a `files/...:download`
// URI that answers only with the key, by a redirect to a file host of another origin (which must never
// see the key); on Vertex AI, the same create at the publisher-model path with a
// bearer token and `POST {model}:fetchPredictOperation` `{ operationName }`, the video as base64 bytes.
// An operation is done at its second read. It counts the paid operations it started; `outcome` scripts
// how the next operations end, `next()` answers the next request instead.
import type { ServerResponse } from 'node:http';
import { GEMINI_KEY, VERTEX_TOKEN, geminiError } from './fake-gemini.js';
import { fakeMp4 } from './fake-media-host.js';
import { type FakeUpstream, type RecordedRequest, sendJson, startFakeUpstream } from './fake-upstream.js';

export const VEO_VIDEO = fakeMp4(48 * 1024);

const CREATE = /^\/v1beta\/models\/([^/:]+):predictLongRunning$/;
const OPERATION = /^\/v1beta\/(models\/[^/:]+\/operations\/[^/:?]+)$/;
const DOWNLOAD = /^\/v1beta\/files\/([^/:]+):download\?alt=media$/;
const VERTEX_MODEL = '/v1/projects/([^/]+)/locations/([^/]+)/publishers/google/models/([^/:]+)';
const VERTEX_CREATE = new RegExp(`^${VERTEX_MODEL}:predictLongRunning$`);
const VERTEX_FETCH = new RegExp(`^${VERTEX_MODEL}:fetchPredictOperation$`);

/** How an operation ends: a video, withheld by the filters (RAI), or an operation error. */
export type VeoOutcome = 'video' | 'rai' | 'error';

interface Operation {
  name: string;
  api: 'gemini' | 'vertex';
  outcome: VeoOutcome;
  reads: number;
  fileId: string;
}

export interface FakeVeo extends FakeUpstream {
  /** `${origin}/v1beta`, as @google/genai's own Gemini API base. */
  baseURL: string;
  /** `${origin}/v1`, the Vertex AI base. */
  vertexBaseURL: string;
  /** How the next operations end (first in first out; `video` when empty). */
  outcomes: VeoOutcome[];
  /** predictLongRunning calls that started an operation (paid work). */
  operationsStarted(): number;
  /** Video downloads answered with the bytes (by the file host the download URI redirects to). */
  downloads(): number;
  /** Requests that reached the file host with the key (it must stay with Google's origin). */
  keyLeaks(): number;
  /** The create bodies received, in order. */
  creates(): Array<Record<string, unknown>>;
}

let sequence = 0;

function operationBody(operation: Operation, origin: string): Record<string, unknown> {
  if (operation.reads < 2) return { name: operation.name, metadata: {} };
  if (operation.outcome === 'error') return { name: operation.name, done: true, error: { code: 3, message: 'The prompt could not be processed.', status: 'INVALID_ARGUMENT' } };
  const rai = { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ["The video was filtered because it violates Google's Responsible AI practices."] };
  if (operation.api === 'gemini') {
    const generateVideoResponse = operation.outcome === 'rai' ? rai : { generatedSamples: [{ video: { uri: `${origin}/v1beta/files/${operation.fileId}:download?alt=media` } }] };
    return { name: operation.name, done: true, response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse', generateVideoResponse } };
  }
  const response = operation.outcome === 'rai' ? rai : { videos: [{ bytesBase64Encoded: VEO_VIDEO.toString('base64'), mimeType: 'video/mp4' }] };
  return { name: operation.name, done: true, response: { '@type': 'type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse', ...response } };
}

export async function startFakeVeo(): Promise<FakeVeo> {
  const operations = new Map<string, Operation>();
  const files = new Set<string>();
  const outcomes: VeoOutcome[] = [];
  const creates: Array<Record<string, unknown>> = [];
  let started = 0;
  let downloads = 0;
  let keyLeaks = 0;
  let origin = '';
  // Google's download answers a redirect to the file's storage, another origin
  const fileHost = await startFakeUpstream((request: RecordedRequest, res: ServerResponse) => {
    if (request.headers['x-goog-api-key'] !== undefined) keyLeaks += 1;
    const id = /^\/veo-files\/([^/?]+)\?sig=ok$/.exec(request.path)?.[1];
    if (!id || !files.has(id)) return geminiError(res, 404, 'NOT_FOUND', 'no such file');
    downloads += 1;
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': VEO_VIDEO.length });
    res.end(VEO_VIDEO);
  });
  const start = (api: 'gemini' | 'vertex', name: string, request: RecordedRequest): Operation => {
    started += 1;
    creates.push((request.json ?? {}) as Record<string, unknown>);
    const operation: Operation = { name, api, outcome: outcomes.shift() ?? 'video', reads: 0, fileId: `file${++sequence}` };
    operations.set(name, operation);
    if (operation.outcome === 'video') files.add(operation.fileId);
    return operation;
  };
  const read = (res: ServerResponse, name: string): void => {
    const operation = operations.get(name);
    if (!operation) return geminiError(res, 404, 'NOT_FOUND', `Operation ${name} not found.`);
    operation.reads += 1;
    sendJson(res, 200, operationBody(operation, origin));
  };
  const fake = await startFakeUpstream((request: RecordedRequest, res: ServerResponse) => {
    const vertexCreate = VERTEX_CREATE.exec(request.path);
    const vertexFetch = VERTEX_FETCH.exec(request.path);
    if (request.method === 'POST' && (vertexCreate || vertexFetch)) {
      if (request.headers.authorization !== `Bearer ${VERTEX_TOKEN}`) {
        return geminiError(res, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
      }
      if (vertexCreate) {
        const [, project, location, model] = vertexCreate;
        const operation = start('vertex', `projects/${project}/locations/${location}/publishers/google/models/${model}/operations/${crypto.randomUUID()}`, request);
        return sendJson(res, 200, { name: operation.name });
      }
      const name = (request.json as { operationName?: unknown } | undefined)?.operationName;
      return read(res, typeof name === 'string' ? name : '');
    }
    const key = request.headers['x-goog-api-key'];
    if (key !== GEMINI_KEY) {
      return geminiError(res, 403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key.");
    }
    const create = CREATE.exec(request.path);
    if (request.method === 'POST' && create) {
      const operation = start('gemini', `models/${create[1]}/operations/op${++sequence}`, request);
      return sendJson(res, 200, { name: operation.name });
    }
    const operation = OPERATION.exec(request.path);
    if (request.method === 'GET' && operation) return read(res, operation[1]!);
    const download = DOWNLOAD.exec(request.path);
    if (request.method === 'GET' && download && files.has(download[1]!)) {
      res.writeHead(302, { location: `${fileHost.origin}/veo-files/${download[1]!}?sig=ok`, 'content-length': 0 });
      return void res.end();
    }
    geminiError(res, 404, 'NOT_FOUND', `no route ${request.path}`);
  });
  origin = fake.origin;
  const closeApi = fake.close.bind(fake);
  return Object.assign(fake, {
    close: () => Promise.all([closeApi(), fileHost.close()]).then(() => undefined),
    keyLeaks: () => keyLeaks,
    baseURL: `${fake.origin}/v1beta`,
    vertexBaseURL: `${fake.origin}/v1`,
    outcomes,
    operationsStarted: () => started,
    downloads: () => downloads,
    creates: () => creates,
  });
}
