// A fake OpenAI-compatible LLM upstream (upstreams §4.3, §4.4) for chat completions and the
// Responses API, plain and streamed, and Ark's native image route (§2.7, error envelope §2.8).
// Streams are sent chunk by chunk with a delay, and the fake records when it sent the last one. A
// responses body with the `image_generation` tool, and a chat body that asks for images (`modalities`
// with `image`, or a model of `imageModels`), are answered with `images` as the vendors answer them.
// Like an OpenAI-compatible server that does not know a field, it refuses the fields in `refuses` with
// OpenAI's 400 before any work, and counts the chat and responses answers it started (the paid work).
import type { ServerResponse } from 'node:http';
import { type FakeUpstream, type RecordedRequest, sendJson, startFakeUpstream } from './fake-upstream.js';
import { BLUE_PNG } from './solid-png.js';

export interface FakeLlm extends FakeUpstream {
  baseURL: string;
  /** performance.now() when the last chunk of the latest stream was written. */
  lastChunkSentAt: number;
  /** Delay between stream chunks, ms. */
  chunkDelayMs: number;
  /** Top-level body fields answered with a 400 "Unrecognized request argument" before any work. Default none. */
  refuses: Set<string>;
  /** Chat completions and responses started (each one paid upstream), streamed or not. */
  paidWork(): number;
  /** The images an image-making chat or response is answered with. Default one blue PNG. */
  images: Buffer[];
  /** Models whose chat answers carry images without `modalities`. Default none. */
  imageModels: Set<string>;
}

/** A chat completion with images (`message.images[]`, Data URLs), as OpenRouter-style vendors answer. */
export function chatWithImages(model: string, text: string, images: readonly Buffer[]): Record<string, unknown> {
  const answer = chatCompletion(model, text);
  const [choice] = answer.choices as Array<{ message: Record<string, unknown> }>;
  choice!.message.images = images.map((image) => ({ type: 'image_url', image_url: { url: `data:image/png;base64,${image.toString('base64')}` } }));
  return answer;
}

/** A response with one `image_generation_call` item per image (`result` in base64), after its text. */
export function responseWithImages(model: string, text: string, images: readonly Buffer[]): Record<string, unknown> {
  const answer = responseObject(model, text);
  const calls = images.map((image, index) => ({ type: 'image_generation_call', id: `ig_${index + 1}`, status: 'completed', result: image.toString('base64') }));
  return { ...answer, output: [...(answer.output as unknown[]), ...calls] };
}

const makesImages = (fake: FakeLlm, body: Record<string, unknown>): boolean =>
  (Array.isArray(body.tools) && body.tools.some((tool) => (tool as { type?: unknown }).type === 'image_generation')) ||
  (Array.isArray(body.modalities) && body.modalities.includes('image')) ||
  fake.imageModels.has(String(body.model));

export function chatCompletion(model: string, text: string): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1720000000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
  };
}

/** upstreams §4.3: role chunk, one chunk per word, finish chunk, [DONE]. */
export function chatChunks(model: string, words: string[]): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1720000000, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return [chunk({ role: 'assistant', content: '' }, null), ...words.map((word) => chunk({ content: word }, null)), chunk({}, 'stop'), 'data: [DONE]\n\n'];
}

export function responseObject(model: string, text: string, status = 'completed'): Record<string, unknown> {
  return {
    id: 'resp_1',
    object: 'response',
    created_at: 1720000000,
    status,
    model,
    output: status === 'completed' ? [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }] : [],
    usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
  };
}

/** upstreams §4.4: named events with increasing sequence_number, ending on response.completed. */
export function responseEvents(model: string, words: string[]): string[] {
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`;
  const text = words.join('');
  return [
    event('response.created', { response: responseObject(model, '', 'in_progress') }),
    event('response.output_item.added', { output_index: 0, item: { type: 'message', id: 'msg_1', status: 'in_progress', role: 'assistant', content: [] } }),
    ...words.map((delta) => event('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta, logprobs: [] })),
    event('response.output_text.done', { item_id: 'msg_1', output_index: 0, content_index: 0, text, logprobs: [] }),
    event('response.completed', { response: responseObject(model, text) }),
  ];
}

export async function writeSlowly(fake: FakeLlm, res: ServerResponse, chunks: string[], options: { dieAfter?: number } = {}): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': 'llm-stream-1' });
  for (let index = 0; index < chunks.length; index += 1) {
    if (res.destroyed) return;
    if (options.dieAfter !== undefined && index === options.dieAfter) {
      res.socket?.destroy();
      return;
    }
    res.write(chunks[index]);
    if (index === chunks.length - 1) fake.lastChunkSentAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, fake.chunkDelayMs));
  }
  res.end();
}

export async function startFakeLlm(): Promise<FakeLlm> {
  // eslint-disable-next-line prefer-const -- assigned once, after the server it is read from exists
  let self: FakeLlm | undefined;
  let paid = 0;
  const fake = await startFakeUpstream(async (request: RecordedRequest, res: ServerResponse) => {
    const body = (request.json ?? {}) as Record<string, unknown>;
    const model = String(body.model);
    const path = request.path.replace(/^\/(v1|api\/v3|compatible-mode\/v1)/, '');
    const refused = Object.keys(body).find((name) => self!.refuses.has(name));
    if (refused !== undefined && request.method === 'POST') {
      return sendJson(res, 400, { error: { message: `Unrecognized request argument supplied: ${refused}`, type: 'invalid_request_error', param: null, code: null } });
    }
    if (request.method === 'POST' && (path === '/chat/completions' || path === '/responses')) paid += 1;
    if (request.method === 'POST' && path === '/chat/completions') {
      if (body.stream === true) return writeSlowly(self!, res, chatChunks(model, ['Hel', 'lo', ' there']));
      if (makesImages(self!, body)) return sendJson(res, 200, chatWithImages(model, 'Here it is', self!.images), { 'x-request-id': 'llm-req-1' });
      return sendJson(res, 200, chatCompletion(model, 'Hello there'), { 'x-request-id': 'llm-req-1' });
    }
    if (request.method === 'POST' && path === '/responses') {
      if (body.stream === true) return writeSlowly(self!, res, responseEvents(model, ['Hel', 'lo']));
      if (makesImages(self!, body)) return sendJson(res, 200, responseWithImages(model, 'Here it is', self!.images), { 'x-request-id': 'llm-req-2' });
      return sendJson(res, 200, responseObject(model, 'Hello'), { 'x-request-id': 'llm-req-2' });
    }
    // the free read the gateway makes as a half-open trial (docs/routing-and-health.md "The trial")
    if (request.method === 'GET' && path === '/models') return sendJson(res, 200, { object: 'list', data: [{ id: 'up-chat', object: 'model', created: 1757323224, owned_by: 'fake' }] });
    if (request.method === 'POST' && path === '/images/generations') {
      return sendJson(res, 200, {
        model,
        created: 1757323224,
        data: [{ url: 'https://ark.example/img.jpeg', size: '2048x2048' }],
        usage: { generated_images: 1, output_tokens: 16280, total_tokens: 16280 },
      });
    }
    return sendJson(res, 404, { error: { code: 'NotFound', message: `no route ${request.path}`, param: '', type: 'NotFound' } });
  });
  self = Object.assign(fake, {
    baseURL: `${fake.origin}/v1`,
    lastChunkSentAt: 0,
    chunkDelayMs: 60,
    refuses: new Set<string>(),
    paidWork: () => paid,
    images: [BLUE_PNG],
    imageModels: new Set<string>(),
  });
  return self;
}
