// A simulated Azure OpenAI resource for the example (docs/providers/azure.md): OpenAI's image routes at
// Azure's two URL forms, `/openai/v1/images/{generations,edits}` and
// `/openai/deployments/{deployment}/images/{generations,edits}?api-version=…`, with the `api-key` header
// (or an Entra bearer token). gpt-image deployments answer bytes only, so every answer is `b64_json`; a
// `stream: true` request gets OpenAI's image events (partial images, then one completed event per image).
// Errors are Azure's OpenAI-style error object. The picture follows from the prompt (render-png.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderPicture } from './render-png.js';
import { BodyNotJson, BodyTooLarge, bearerKey, isObject, listenOnLoopback, parseJson, readBody, sendJson } from './simulation-http.js';

export interface SimulatedAzure {
  /** The resource endpoint, as `https://{resource}.openai.azure.com` would be: `http://127.0.0.1:<port>`. */
  endpoint: string;
  close(): Promise<void>;
}

// the edits route takes uploads: up to 16 images of 50 MB each upstream; the simulation keeps it small
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const V1 = /^\/openai\/v1\/images\/(generations|edits)$/;
const DEPLOYMENT = /^\/openai\/deployments\/[^/]+\/images\/(generations|edits)$/;
// gpt-image sizes (upstreams §4.1); `auto` draws a square
const SIZES: ReadonlySet<string> = new Set(['auto', '1024x1024', '1536x1024', '1024x1536']);

class AzureFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/** The fields of a generation or an edit, from its JSON body or its form. */
interface Ask {
  prompt: string;
  n: number;
  size: string;
  quality: string;
  stream: boolean;
  partials: number;
  images: string[];
}

async function askOf(req: IncomingMessage, route: string): Promise<Ask> {
  const bytes = await readBody(req, MAX_BODY_BYTES);
  if (route === 'edits') {
    const form = await new Request('http://simulated-azure/', { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? '' }, body: bytes }).formData().catch(() => {
      throw new AzureFailure(400, 'invalid_request_error', 'The request body is not a multipart form.');
    });
    const images = [...form.getAll('image'), ...form.getAll('image[]')].map((file, index) => (typeof file === 'string' ? file : `upload-${index}-${file.size}`));
    if (images.length === 0) throw new AzureFailure(400, 'invalid_request_error', "Missing required parameter: 'image'.", 'image');
    const text = (name: string): string => {
      const value = form.get(name);
      return typeof value === 'string' ? value : '';
    };
    return {
      prompt: text('prompt'),
      n: Number(text('n') || 1),
      size: text('size') || 'auto',
      quality: text('quality') || 'auto',
      stream: text('stream') === 'true',
      partials: Number(text('partial_images') || 0),
      images,
    };
  }
  const body = parseJson(bytes);
  if (!isObject(body)) throw new AzureFailure(400, 'invalid_request_error', 'The request body must be a JSON object.');
  return {
    prompt: typeof body.prompt === 'string' ? body.prompt : '',
    n: typeof body.n === 'number' ? body.n : 1,
    size: typeof body.size === 'string' ? body.size : 'auto',
    quality: typeof body.quality === 'string' ? body.quality : 'auto',
    stream: body.stream === true,
    partials: typeof body.partial_images === 'number' ? body.partial_images : 0,
    images: [],
  };
}

export async function startSimulatedAzure(): Promise<SimulatedAzure> {
  let served = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://simulated-azure');
    // Azure takes its resource key in `api-key`, or an Entra ID token as a bearer
    if (!req.headers['api-key'] && !bearerKey(req)) throw new AzureFailure(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint.');
    const route = V1.exec(url.pathname)?.[1] ?? DEPLOYMENT.exec(url.pathname)?.[1];
    if (req.method !== 'POST' || !route) throw new AzureFailure(404, '404', 'Resource not found');
    if (DEPLOYMENT.test(url.pathname) && !url.searchParams.get('api-version')) throw new AzureFailure(404, '404', 'Resource not found');
    const ask = await askOf(req, route);
    if (!ask.prompt.trim()) throw new AzureFailure(400, 'invalid_request_error', "Missing required parameter: 'prompt'.", 'prompt');
    if (!SIZES.has(ask.size))
      throw new AzureFailure(400, 'invalid_value', `Invalid value: '${ask.size.slice(0, 40)}'. Supported values are: 'auto', '1024x1024', '1536x1024', and '1024x1536'.`, 'size');
    if (!Number.isInteger(ask.n) || ask.n < 1 || ask.n > 10) throw new AzureFailure(400, 'integer_above_max_value', 'Invalid n: it must be from 1 to 10.', 'n');
    // Azure's content filter, so the example can show the refusal: a prompt naming it is refused
    if (/content filter/i.test(ask.prompt)) throw new AzureFailure(400, 'content_filter', "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", 'prompt');
    const [width, height] = ask.size === 'auto' ? [1024, 1024] : ask.size.split('x').map(Number);
    const size = `${width}x${height}`;
    served += 1;
    const created = Math.floor(Date.now() / 1000);
    // a small picture stands for the full size: the example stays quick and light
    const pictures = Array.from({ length: ask.n }, (_, index) =>
      renderPicture({ prompt: ask.prompt, images: ask.images, index, width: Math.round(width! / 8), height: Math.round(height! / 8) }).toString('base64'),
    );
    const usage = { input_tokens: Math.ceil(ask.prompt.length / 4), output_tokens: 272 * ask.n, total_tokens: Math.ceil(ask.prompt.length / 4) + 272 * ask.n };
    const headers = { 'apim-request-id': `az-sim-${served}`, 'x-request-id': `az-sim-${served}` };
    if (!ask.stream) {
      sendJson(res, 200, { created, data: pictures.map((b64) => ({ b64_json: b64 })), size, quality: ask.quality, output_format: 'png', usage }, headers);
      return;
    }
    const prefix = route === 'edits' ? 'image_edit' : 'image_generation';
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
    for (const b64 of pictures) {
      const image = { b64_json: b64, created_at: created, size, quality: ask.quality, background: 'opaque', output_format: 'png' };
      for (let index = 0; index < Math.min(3, Math.max(0, ask.partials)); index += 1) {
        res.write(`event: ${prefix}.partial_image\ndata: ${JSON.stringify({ type: `${prefix}.partial_image`, ...image, partial_image_index: index })}\n\n`);
      }
      res.write(`event: ${prefix}.completed\ndata: ${JSON.stringify({ type: `${prefix}.completed`, ...image, usage })}\n\n`);
    }
    res.end();
  };

  const listening = await listenOnLoopback((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const failure =
        error instanceof AzureFailure
          ? error
          : error instanceof BodyTooLarge
            ? new AzureFailure(413, 'request_too_large', 'The request body is too large.')
            : error instanceof BodyNotJson
              ? new AzureFailure(400, 'invalid_request_error', 'The request body is not valid JSON.')
              : new AzureFailure(500, 'server_error', 'The simulated Azure OpenAI resource failed.');
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendJson(res, failure.status, { error: { message: failure.message, type: 'invalid_request_error', param: failure.param, code: failure.code } });
    });
  });
  return { endpoint: listening.origin, close: () => listening.close() };
}
