// A fake image vendor that answers every request it is written with the id the vendor's bill names it by,
// whatever it answers (docs/tenancy-and-billing.md "The books"): OpenAI's image routes (JSON and the
// relayed stream, upstreams §4), DashScope's multimodal generation (§1.3, `request_id` in the body and the
// `x-request-id` header, §1.4 for its errors), DashScope's asynchronous synthesis (§1.5: a task, billed
// under its task id, read at `GET /api/v1/tasks/{id}`) and Ark's Seedream images (§2.7, JSON and the
// group stream, `x-request-id`). It records each written request with the id it answered and whether it
// started paid work, so a spec compares the usage events' `vendorWork.attempts` with the vendor's bill
// line for line. What it does is chosen per request by a word in the prompt:
// - `[5xx]`: works (paid), then answers 500 in the vendor's error envelope;
// - `[429]`: refuses with 429 before any work; `[429@<name>]`: only the fake of that name refuses;
// - `[garbage]`: works (paid), then answers 200 with a body that is not JSON;
// - `[cut]`: a stream that starts (headers, its first event), then the connection is cut;
// - anything else: one image, in the vendor's answer.
import type { ServerResponse } from 'node:http';
import { type FakeUpstream, type RecordedRequest, sendJson, startFakeUpstream } from './fake-upstream.js';
import { TINY_JPEG, TINY_PNG } from './images.js';

const OPENAI_PATHS = new Set(['/v1/images/generations', '/v1/images/edits']);
const DASHSCOPE_PATH = '/api/v1/services/aigc/multimodal-generation/generation';
const ARK_PATH = '/api/v3/images/generations';
const DASHSCOPE_SYNTHESIS = '/api/v1/services/aigc/text2image/image-synthesis';
const DASHSCOPE_TASK = /^\/api\/v1\/tasks\/([^/]+)$/;

/** One line of the vendor's bill: a request written to it, the id it answered (a task's id for a task it made), whether it did paid work. */
export interface BillLine {
  id: string;
  path: string;
  /** The vendor started the work (billed): everything but a refusal. */
  paid: boolean;
  request: RecordedRequest;
}

export interface FakeBilledVendor extends FakeUpstream {
  /** `${origin}/v1`: an OpenAI-compatible upstream's base. */
  openaiBaseURL: string;
  /** `${origin}/api/v1`: a DashScope upstream's base. */
  dashscopeBaseURL: string;
  /** `${origin}/api/v3`: an Ark upstream's base. */
  arkBaseURL: string;
  /** Every request written to a paid path, in order, with the id answered. */
  bill: BillLine[];
  /** This vendor's name in its ids (`<name>-<n>`): two fakes' bills never share an id. */
  name: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Starts the fake; `name` prefixes the ids it answers (default `vendor`). */
export async function startFakeBilledVendor(name = 'vendor'): Promise<FakeBilledVendor> {
  const bill: BillLine[] = [];
  let origin = '';
  const fake = await startFakeUpstream(
    async (request: RecordedRequest, res: ServerResponse) => {
      if (request.method === 'GET' && request.path.startsWith('/results/')) {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': TINY_PNG.length });
        res.end(TINY_PNG);
        return;
      }
      const task = request.method === 'GET' ? DASHSCOPE_TASK.exec(request.path) : null;
      if (task) {
        const results = [{ url: `${origin}/results/${task[1]!}.png` }];
        return sendJson(res, 200, { request_id: `${name}-read-${task[1]!}`, output: { task_id: task[1], task_status: 'SUCCEEDED', results }, usage: { image_count: 1 } });
      }
      const family = OPENAI_PATHS.has(request.path) ? 'openai' : request.path === DASHSCOPE_PATH || request.path === DASHSCOPE_SYNTHESIS ? 'dashscope' : request.path === ARK_PATH ? 'ark' : undefined;
      if (request.method !== 'POST' || !family) return sendJson(res, 404, { error: { message: `no route ${request.path}`, type: 'invalid_request_error', param: null, code: 'not_found' } });
      const text = request.body.toString('utf8');
      const id = `${name}-${bill.length + 1}`;
      const headers = { 'x-request-id': id };
      const refused = text.includes('[429]') || text.includes(`[429@${name}]`);
      bill.push({ id, path: request.path, paid: !refused, request });
      if (refused) {
        if (family === 'dashscope') return sendJson(res, 429, { request_id: id, code: 'Throttling.RateQuota', message: 'Requests rate limit exceeded.' }, headers);
        return sendJson(res, 429, { error: { message: 'Rate limit reached.', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, headers);
      }
      if (text.includes('[5xx]')) {
        if (family === 'dashscope') return sendJson(res, 500, { request_id: id, code: 'InternalError', message: 'An internal error has occured.' }, headers);
        return sendJson(res, 500, { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } }, headers);
      }
      if (text.includes('[garbage]')) {
        res.writeHead(200, { 'content-type': 'application/json', ...headers });
        res.end('{"data": [');
        return;
      }
      const stream = (request.json as { stream?: unknown } | undefined)?.stream === true || /name="stream"\r\n\r\ntrue/.test(text);
      if (stream && family === 'openai') return openaiStream(res, headers, text.includes('[cut]'));
      if (stream && family === 'ark') return arkStream(res, headers, text.includes('[cut]'), String((request.json as { model?: unknown }).model));
      if (request.path === DASHSCOPE_SYNTHESIS) {
        // the task is what DashScope bills: its line names the task id
        const line = bill.at(-1)!;
        line.id = `${name}-task-${bill.length}`;
        return sendJson(res, 200, { request_id: id, output: { task_status: 'PENDING', task_id: line.id } }, headers);
      }
      if (family === 'dashscope') {
        const choice = { finish_reason: 'stop', message: { role: 'assistant', content: [{ image: `${origin}/results/${id}.png` }] } };
        return sendJson(res, 200, { output: { choices: [choice], task_metric: { TOTAL: 1, SUCCEEDED: 1, FAILED: 0 } }, usage: { width: 1024, height: 1024, image_count: 1 }, request_id: id }, headers);
      }
      if (family === 'ark')
        return sendJson(res, 200, { model: 'seedream', created: 1757323224, data: [{ url: `${origin}/results/${id}.png`, size: '1024x1024' }], usage: { generated_images: 1 } }, headers);
      return sendJson(res, 200, { created: 1713833628, data: [{ b64_json: TINY_PNG.toString('base64') }] }, headers);
    },
    (path) => !path.startsWith('/results/'),
  );
  origin = fake.origin;
  return Object.assign(fake, { openaiBaseURL: `${origin}/v1`, dashscopeBaseURL: `${origin}/api/v1`, arkBaseURL: `${origin}/api/v3`, bill, name });
}

/** OpenAI's streamed image (upstreams §4.2): a partial image, then the completed one; or cut after the partial. */
async function openaiStream(res: ServerResponse, headers: Record<string, string>, cut: boolean): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', ...headers });
  const image = { b64_json: TINY_PNG.toString('base64'), created_at: 1713833628, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png' };
  res.write(`event: image_generation.partial_image\ndata: ${JSON.stringify({ type: 'image_generation.partial_image', ...image, partial_image_index: 0 })}\n\n`);
  await sleep(50);
  if (cut) return void res.destroy();
  const usage = { input_tokens: 10, output_tokens: 100, total_tokens: 110, input_tokens_details: { image_tokens: 0, text_tokens: 10 } };
  res.end(`event: image_generation.completed\ndata: ${JSON.stringify({ type: 'image_generation.completed', ...image, usage })}\n\n`);
}

/** Ark's group stream (upstreams §2.7): one image, then completed; or cut after the image. */
async function arkStream(res: ServerResponse, headers: Record<string, string>, cut: boolean, model: string): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', ...headers });
  const image = { type: 'image_generation.partial_succeeded', model, created: 1757323224, image_index: 0, b64_json: TINY_JPEG.toString('base64'), size: '1024x1024' };
  res.write(`event: ${image.type}\ndata: ${JSON.stringify(image)}\n\n`);
  await sleep(50);
  if (cut) return void res.destroy();
  const completed = { type: 'image_generation.completed', model, created: 1757323224, usage: { generated_images: 1, output_tokens: 4096, total_tokens: 4096 } };
  res.end(`event: image_generation.completed\ndata: ${JSON.stringify(completed)}\n\ndata: [DONE]\n\n`);
}
