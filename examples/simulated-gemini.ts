// A simulated Gemini API for the example (docs/providers/gemini.md): `models/{model}:generateContent`
// answers one rendered PNG as an `inlineData` part, and Veo's `models/{model}:predictLongRunning` starts
// an operation that is done after a few seconds, its video a real, playable WebM (examples/assets) at a
// `files/{id}:download` URI that answers only with the key, as Google's does. The key goes in
// `x-goog-api-key`; errors use Google's `{ error: { code, message, status } }`. Nothing it receives
// leaves the machine.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderPicture } from './render-png.js';
import { BodyNotJson, BodyTooLarge, isObject, listenOnLoopback, parseJson, readBody, sendFile, sendJson } from './simulation-http.js';

export interface SimulatedGeminiOptions {
  /** The key the simulation takes (and downloads require). Default {@link SIMULATED_GEMINI_KEY}. */
  apiKey?: string;
  /** How long a Veo operation runs before it is done, ms. Default 3000. */
  videoMs?: number;
}

export interface SimulatedGemini {
  /** `http://127.0.0.1:<port>/v1beta`, as @google/genai's own base. */
  baseURL: string;
  close(): Promise<void>;
}

/** The key of the simulation, when the example is given none. */
export const SIMULATED_GEMINI_KEY = 'simulated-gemini-key';

/** The small real video every finished operation names: VP8 WebM, 256x144, 3 s, ~9 KB. */
const SAMPLE_VIDEO = readFileSync(new URL('./assets/sample-video.webm', import.meta.url));

const GENERATE = /^\/v1beta\/models\/([^/:]+):generateContent$/;
const CREATE_VIDEO = /^\/v1beta\/models\/([^/:]+):predictLongRunning$/;
const OPERATION = /^\/v1beta\/(models\/[^/:]+\/operations\/[A-Za-z0-9-]+)$/;
const DOWNLOAD = /^\/v1beta\/files\/([A-Za-z0-9-]+):download$/;
const MAX_BODY_BYTES = 48 * 1024 * 1024;
// the simulation renders at most 512 px a side, in the asked aspect ratio
const RENDER_SIDE = 512;
// operations (and their files) the simulation remembers; the oldest are forgotten beyond this
const KEPT_OPERATIONS = 500;

class GoogleFailure extends Error {
  constructor(
    readonly code: number,
    readonly status: string,
    message: string,
  ) {
    super(message);
  }
}

/** Width and height of a rendered picture for `imageConfig.aspectRatio` (`16:9`, ...; square otherwise). */
function renderSize(aspectRatio: unknown): { width: number; height: number } {
  const match = typeof aspectRatio === 'string' ? /^(\d+):(\d+)$/.exec(aspectRatio) : null;
  const ratio = match ? Number(match[1]) / Number(match[2]) : 1;
  return ratio >= 1 ? { width: RENDER_SIDE, height: Math.max(1, Math.round(RENDER_SIDE / ratio)) } : { width: Math.max(1, Math.round(RENDER_SIDE * ratio)), height: RENDER_SIDE };
}

/** One generateContent answer: the parts' text as the picture's prompt, the input images as its references. */
function imageAnswer(body: Record<string, unknown>): Record<string, unknown> {
  const contents = Array.isArray(body.contents) ? body.contents : [];
  const parts = contents.flatMap((content: unknown) => (isObject(content) && Array.isArray(content.parts) ? (content.parts as unknown[]) : []));
  const prompt = parts.flatMap((part) => (isObject(part) && typeof part.text === 'string' ? [part.text] : [])).join('\n');
  const images = parts.flatMap((part) => (isObject(part) && isObject(part.inlineData) && typeof part.inlineData.data === 'string' ? [part.inlineData.data.slice(0, 64)] : []));
  if (prompt === '' && images.length === 0) throw new GoogleFailure(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified');
  const config = isObject(body.generationConfig) && isObject(body.generationConfig.imageConfig) ? body.generationConfig.imageConfig : {};
  const png = renderPicture({ prompt, images, index: 0, ...renderSize(config.aspectRatio) });
  return {
    candidates: [{ content: { role: 'model', parts: [{ inlineData: { mimeType: 'image/png', data: png.toString('base64') } }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: Math.max(1, Math.ceil(prompt.length / 4)), candidatesTokenCount: 1290, totalTokenCount: Math.max(1, Math.ceil(prompt.length / 4)) + 1290 },
    responseId: randomUUID(),
  };
}

export async function startSimulatedGemini(options: SimulatedGeminiOptions = {}): Promise<SimulatedGemini> {
  const apiKey = options.apiKey ?? SIMULATED_GEMINI_KEY;
  const videoMs = options.videoMs ?? 3000;
  const operations = new Map<string, { createdAt: number; fileId: string }>();
  const files = new Set<string>();
  let origin = '';

  const startOperation = (model: string, body: Record<string, unknown>): string => {
    const instance = Array.isArray(body.instances) && isObject(body.instances[0]) ? body.instances[0] : undefined;
    if (!instance || (typeof instance.prompt !== 'string' && !isObject(instance.image))) throw new GoogleFailure(400, 'INVALID_ARGUMENT', 'instances[0] must carry a prompt or an image.');
    const name = `models/${model}/operations/${randomUUID()}`;
    const fileId = randomUUID();
    operations.set(name, { createdAt: Date.now(), fileId });
    files.add(fileId);
    if (operations.size > KEPT_OPERATIONS) {
      const [oldest, kept] = operations.entries().next().value!;
      operations.delete(oldest);
      files.delete(kept.fileId);
    }
    return name;
  };

  const operationBody = (name: string): Record<string, unknown> => {
    const operation = operations.get(name);
    if (!operation) throw new GoogleFailure(404, 'NOT_FOUND', `Operation ${name} not found.`);
    if (Date.now() - operation.createdAt < videoMs) return { name, metadata: {} };
    const uri = `${origin}/v1beta/files/${operation.fileId}:download?alt=media`;
    return {
      name,
      done: true,
      response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse', generateVideoResponse: { generatedSamples: [{ video: { uri } }] } },
    };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    // every route, the download too, takes the key only
    if (req.headers['x-goog-api-key'] !== apiKey) {
      throw new GoogleFailure(
        403,
        'PERMISSION_DENIED',
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      );
    }
    const download = DOWNLOAD.exec(path);
    if ((req.method === 'GET' || req.method === 'HEAD') && download) {
      if (!files.has(download[1]!)) throw new GoogleFailure(404, 'NOT_FOUND', 'File not found.');
      return sendFile(req, res, SAMPLE_VIDEO, 'video/webm');
    }
    const operation = OPERATION.exec(path);
    if (req.method === 'GET' && operation) return sendJson(res, 200, operationBody(operation[1]!));
    const generate = GENERATE.exec(path);
    const createVideo = CREATE_VIDEO.exec(path);
    if (req.method !== 'POST' || (!generate && !createVideo)) throw new GoogleFailure(404, 'NOT_FOUND', `The requested URL ${path} was not found on this server.`);
    const body = parseJson(await readBody(req, MAX_BODY_BYTES));
    if (!isObject(body)) throw new GoogleFailure(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    if (generate) return sendJson(res, 200, imageAnswer(body));
    return sendJson(res, 200, { name: startOperation(createVideo![1]!, body) });
  };

  const listening = await listenOnLoopback((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const failure =
        error instanceof GoogleFailure
          ? error
          : error instanceof BodyTooLarge
            ? new GoogleFailure(413, 'INVALID_ARGUMENT', error.message)
            : error instanceof BodyNotJson
              ? new GoogleFailure(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.')
              : new GoogleFailure(500, 'INTERNAL', 'Internal error encountered.');
      if (res.headersSent) return void res.destroy();
      sendJson(res, failure.code, { error: { code: failure.code, message: failure.message, status: failure.status } });
    });
  });
  origin = listening.origin;
  return { baseURL: `${origin}/v1beta`, close: () => listening.close() };
}
