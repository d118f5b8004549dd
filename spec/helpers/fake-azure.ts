// A fake Azure OpenAI resource (docs/providers/azure.md): OpenAI's image routes (upstreams §4) at Azure's
// two URL forms, as openai-node's AzureOpenAI client calls them: `/openai/v1/images/{generations,edits}`,
// and `/openai/deployments/{deployment}/images/{generations,edits}?api-version=…`. It checks what a real
// resource checks (the path form, the api-version of the deployment form, the `api-key` header or an
// Entra bearer token, the image API's own field names) and answers as Azure does: gpt-image bytes as `b64_json`, OpenAI's streamed image
// events, and Azure's own error bodies. Chat completions and responses answer one fixed text. It counts the generations it starts (the paid work).
import type { ServerResponse } from 'node:http';
import { type FakeUpstream, type RecordedRequest, sendJson, startFakeUpstream } from './fake-upstream.js';
import { TINY_PNG } from './images.js';

export const AZURE_KEY = 'azure-resource-key-0123456789';
export const AZURE_TOKEN = 'entra-access-token-0123456789';
export const AZURE_API_VERSION = '2025-04-01-preview';

export interface FakeAzure extends FakeUpstream {
  /** `http://127.0.0.1:<port>`: the resource endpoint, as `https://{resource}.openai.azure.com` would be. */
  endpoint: string;
  /** Generations started (each one paid upstream) among the requests recorded. */
  started(): number;
}

/** Where an image call went: the URL form, the deployment it named, the route. */
export interface AzureCall {
  /** `versioned`: `/openai{path}?api-version=…`, the deployment form's paths outside a deployment (responses). */
  form: 'v1' | 'deployment' | 'versioned';
  deployment?: string;
  route: AzureRoute;
  apiVersion: string | null;
}

type AzureRoute = 'images/generations' | 'images/edits' | 'chat/completions' | 'responses';

const V1 = /^\/openai\/v1\/(images\/generations|images\/edits|chat\/completions|responses)$/;
const DEPLOYMENT = /^\/openai\/deployments\/([^/]+)\/(images\/generations|images\/edits|chat\/completions)$/;
const VERSIONED = /^\/openai\/(responses)$/;
const PNG_BASE64 = TINY_PNG.toString('base64');
// openai-node's ImageGenerateParamsBase and ImageEditParamsBase (src/resources/images.ts); a form's files as `image` or `image[]`
const GENERATE_FIELDS = new Set([
  'prompt',
  'background',
  'model',
  'moderation',
  'n',
  'output_compression',
  'output_format',
  'partial_images',
  'quality',
  'response_format',
  'size',
  'stream',
  'style',
  'user',
]);
const EDIT_FIELDS = new Set([
  'image',
  'image[]',
  'prompt',
  'background',
  'input_fidelity',
  'mask',
  'model',
  'n',
  'output_compression',
  'output_format',
  'partial_images',
  'quality',
  'response_format',
  'size',
  'stream',
  'user',
]);
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The call a recorded request made, or undefined for a path Azure does not serve. */
export function azureCallOf(request: RecordedRequest): AzureCall | undefined {
  const url = new URL(request.path, 'http://fake');
  const apiVersion = url.searchParams.get('api-version');
  const v1 = V1.exec(url.pathname);
  if (v1) return { form: 'v1', route: v1[1] as AzureRoute, apiVersion };
  const named = DEPLOYMENT.exec(url.pathname);
  if (named) return { form: 'deployment', deployment: decodeURIComponent(named[1]!), route: named[2] as AzureRoute, apiVersion };
  const versioned = VERSIONED.exec(url.pathname);
  if (versioned) return { form: 'versioned', route: versioned[1] as AzureRoute, apiVersion };
  return undefined;
}

/** The multipart form a request sent (edits). */
export function formOf(request: RecordedRequest): Promise<FormData> {
  return new Response(new Uint8Array(request.body), { headers: { 'content-type': request.headers['content-type'] ?? '' } }).formData();
}

/** Azure's error envelope: OpenAI's, with Azure's codes (a status as a string for 401, 404 and 429). */
export function azureError(res: ServerResponse, status: number, code: string, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { code, message, ...extra } }, { 'apim-request-id': 'az-req-err', 'x-request-id': 'az-req-err', ...headers });
}

export async function startFakeAzure(): Promise<FakeAzure> {
  // the requests that started paid work: counted among those recorded, so a reset of the record resets it
  const paid = new WeakSet<RecordedRequest>();
  let generations = 0;
  const fake = await startFakeUpstream(async (request, res) => {
    const call = azureCallOf(request);
    const key = request.headers['api-key'];
    const bearer = request.headers.authorization;
    if (key !== AZURE_KEY && bearer !== `Bearer ${AZURE_TOKEN}`) {
      azureError(
        res,
        401,
        '401',
        'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
      );
      return;
    }
    // a deployment-form call without the api-version it was deployed under is not found, as on Azure
    if (request.method !== 'POST' || !call || (call.form !== 'v1' && call.apiVersion !== AZURE_API_VERSION)) {
      azureError(res, 404, '404', 'Resource not found');
      return;
    }
    if (call.route === 'chat/completions' || call.route === 'responses') {
      answerText(request, res, call.route);
      return;
    }
    // as Azure (and OpenAI) do: a field the image API does not know is refused, not ignored
    const unknown =
      call.route === 'images/edits'
        ? [...(await formOf(request)).keys()].find((name) => !EDIT_FIELDS.has(name))
        : Object.keys(isRecord(request.json) ? request.json : {}).find((name) => !GENERATE_FIELDS.has(name));
    if (unknown !== undefined) {
      azureError(res, 400, 'invalid_request_error', `Unrecognized request argument supplied: ${unknown}`);
      return;
    }
    const { stream, partials } = call.route === 'images/edits' ? await formAsk(request) : jsonAsk(request);
    if (call.route === 'images/edits') {
      const form = await formOf(request);
      if (form.getAll('image').length + form.getAll('image[]').length === 0) {
        azureError(res, 400, 'invalid_request_error', "Missing required parameter: 'image'.");
        return;
      }
    }
    paid.add(request);
    generations += 1;
    const id = generations;
    if (stream) {
      const prefix = call.route === 'images/edits' ? 'image_edit' : 'image_generation';
      res.writeHead(200, { 'content-type': 'text/event-stream', 'apim-request-id': `az-stream-${id}`, 'x-request-id': `az-stream-${id}` });
      const image = { b64_json: PNG_BASE64, created_at: 1713833628, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png' };
      for (let index = 0; index < partials; index += 1)
        res.write(`event: ${prefix}.partial_image\ndata: ${JSON.stringify({ type: `${prefix}.partial_image`, ...image, partial_image_index: index })}\n\n`);
      const completed = { type: `${prefix}.completed`, ...image, usage: { input_tokens: 10, output_tokens: 100, total_tokens: 110 } };
      res.end(`event: ${completed.type}\ndata: ${JSON.stringify(completed)}\n\n`);
      return;
    }
    sendJson(
      res,
      200,
      { created: 1713833628, data: [{ b64_json: PNG_BASE64 }], usage: { input_tokens: 10, output_tokens: 100, total_tokens: 110 } },
      { 'apim-request-id': `az-req-${id}`, 'x-request-id': `az-req-${id}` },
    );
  });
  return Object.assign(fake, { endpoint: fake.origin, started: () => fake.requests.filter((request) => paid.has(request)).length });
}

/** The text Azure's chat deployments answer here. */
export const AZURE_TEXT = 'hello from azure';

function answerText(request: RecordedRequest, res: ServerResponse, route: 'chat/completions' | 'responses'): void {
  const model = String((request.json as { model?: unknown } | undefined)?.model);
  const usage = { input_tokens: 3, output_tokens: 4, total_tokens: 7 };
  if (route === 'chat/completions') {
    sendJson(res, 200, {
      id: 'chatcmpl-az',
      object: 'chat.completion',
      created: 1713833628,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: AZURE_TEXT }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    });
    return;
  }
  sendJson(res, 200, {
    id: 'resp_az',
    object: 'response',
    created_at: 1713833628,
    status: 'completed',
    model,
    output: [{ type: 'message', id: 'msg_az', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: AZURE_TEXT, annotations: [] }] }],
    usage,
  });
}

function jsonAsk(request: RecordedRequest): { stream: boolean; partials: number } {
  const body = (request.json ?? {}) as Record<string, unknown>;
  return { stream: body.stream === true, partials: typeof body.partial_images === 'number' ? body.partial_images : 0 };
}

async function formAsk(request: RecordedRequest): Promise<{ stream: boolean; partials: number }> {
  const form = await formOf(request);
  return { stream: form.get('stream') === 'true', partials: Number(form.get('partial_images') ?? 0) || 0 };
}
