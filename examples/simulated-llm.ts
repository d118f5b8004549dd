// A simulated OpenAI-compatible upstream for the example: `POST /v1/chat/completions` and
// `POST /v1/responses`, plain and streamed, in the wire formats of upstreams §4.3 (chat chunks
// ending in `data: [DONE]`) and §4.4 (named Responses events with an increasing sequence_number,
// ending on response.completed), errors as the §4.5 object. It answers by echoing the last user text,
// so a reader sees their own words come back through the gateway.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyNotJson, BodyTooLarge, bearerKey, isObject, listenOnLoopback, parseJson, readBody, sendJson } from './simulation-http.js';

export interface SimulatedLlm {
  /** The OpenAI SDK-style base, `http://127.0.0.1:<port>/v1`. */
  baseURL: string;
  close(): Promise<void>;
}

export interface SimulatedLlmOptions {
  /** Delay between streamed chunks, ms, so streaming is visible in a terminal. Default 40. */
  chunkDelayMs?: number;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

class LlmFailure extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

export async function startSimulatedLlm(options: SimulatedLlmOptions = {}): Promise<SimulatedLlm> {
  const delay = options.chunkDelayMs ?? 40;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (!bearerKey(req)) throw new LlmFailure(401, 'invalid_request_error', 'invalid_api_key', 'You did not provide an API key.');
    if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/v1/responses')) {
      throw new LlmFailure(404, 'invalid_request_error', 'unknown_url', `Invalid URL (${req.method ?? 'GET'} ${path.slice(0, 100)})`);
    }
    const body = parseJson(await readBody(req, MAX_BODY_BYTES));
    if (!isObject(body) || typeof body.model !== 'string') throw new LlmFailure(400, 'invalid_request_error', 'missing_required_parameter', 'Missing required parameter: model.', 'model');
    const model = body.model;
    if (path === '/v1/chat/completions') {
      const text = reply(lastChatText(body.messages));
      if (body.stream === true) return stream(res, chatChunks(model, words(text), isObject(body.stream_options) && body.stream_options.include_usage === true), delay);
      return sendJson(res, 200, chatCompletion(model, text), { 'x-request-id': `req_${randomBytes(12).toString('hex')}` });
    }
    const text = reply(responsesText(body.input));
    if (body.stream === true) return stream(res, responseEvents(model, words(text)), delay);
    return sendJson(res, 200, responseObject(model, text), { 'x-request-id': `req_${randomBytes(12).toString('hex')}` });
  };

  const listening = await listenOnLoopback((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const failure =
        error instanceof LlmFailure
          ? error
          : error instanceof BodyTooLarge || error instanceof BodyNotJson
            ? new LlmFailure(400, 'invalid_request_error', 'invalid_body', error.message)
            : new LlmFailure(500, 'server_error', 'server_error', 'The simulation failed.');
      if (failure.status === 500) console.error('[simulated-llm]', error);
      req.resume();
      if (res.headersSent) {
        res.end();
        return;
      }
      sendJson(res, failure.status, { error: { message: failure.message, type: failure.type, param: failure.param, code: failure.code } });
    });
  });
  return { baseURL: `${listening.origin}/v1`, close: () => listening.close() };
}

function reply(said: string): string {
  const quoted = said.trim() === '' ? 'nothing' : `"${said.trim().slice(0, 300)}"`;
  return `You said ${quoted}. This is the simulated OpenAI-compatible upstream of the example; set OPENAI_API_KEY for a real model.`;
}

/** The text of the last user message (content as a string or as parts with `text`). */
function lastChatText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message: unknown = messages[index];
    if (isObject(message) && message.role === 'user') return textOf(message.content);
  }
  return '';
}

function responsesText(input: unknown): string {
  if (typeof input === 'string') return input;
  return lastChatText(input);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: unknown) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join(' ');
}

/** Words with their following space, so the chunks join back to the text exactly. */
function words(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [text];
}

const now = () => Math.floor(Date.now() / 1000);

function chatCompletion(model: string, text: string): Record<string, unknown> {
  return {
    id: `chatcmpl-${randomBytes(8).toString('hex')}`,
    object: 'chat.completion',
    created: now(),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: words(text).length, total_tokens: 12 + words(text).length },
  };
}

/** §4.3: role chunk, one chunk per word, finish chunk, optional usage chunk, [DONE]. */
function chatChunks(model: string, parts: string[], includeUsage: boolean): string[] {
  const id = `chatcmpl-${randomBytes(8).toString('hex')}`;
  const created = now();
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`;
  const choice = (delta: Record<string, unknown>, finish: string | null) => ({ index: 0, delta, finish_reason: finish });
  return [
    chunk([choice({ role: 'assistant', content: '' }, null)]),
    ...parts.map((part) => chunk([choice({ content: part }, null)])),
    chunk([choice({}, 'stop')]),
    ...(includeUsage ? [chunk([], { usage: { prompt_tokens: 12, completion_tokens: parts.length, total_tokens: 12 + parts.length } })] : []),
    'data: [DONE]\n\n',
  ];
}

function responseObject(model: string, text: string, status = 'completed'): Record<string, unknown> {
  return {
    id: 'resp_simulated',
    object: 'response',
    created_at: now(),
    status,
    model,
    output: status === 'completed' ? [{ type: 'message', id: 'msg_simulated', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }] : [],
    usage: { input_tokens: 12, output_tokens: words(text).length, total_tokens: 12 + words(text).length },
  };
}

/** §4.4: named events, increasing sequence_number, ending on response.completed (no [DONE]). */
function responseEvents(model: string, parts: string[]): string[] {
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`;
  const text = parts.join('');
  const at = { item_id: 'msg_simulated', output_index: 0, content_index: 0 };
  return [
    event('response.created', { response: responseObject(model, '', 'in_progress') }),
    event('response.in_progress', { response: responseObject(model, '', 'in_progress') }),
    event('response.output_item.added', { output_index: 0, item: { type: 'message', id: 'msg_simulated', status: 'in_progress', role: 'assistant', content: [] } }),
    event('response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [] } }),
    ...parts.map((delta) => event('response.output_text.delta', { ...at, delta, logprobs: [] })),
    event('response.output_text.done', { ...at, text, logprobs: [] }),
    event('response.content_part.done', { ...at, part: { type: 'output_text', text, annotations: [] } }),
    event('response.output_item.done', {
      output_index: 0,
      item: { type: 'message', id: 'msg_simulated', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] },
    }),
    event('response.completed', { response: responseObject(model, text) }),
  ];
}

async function stream(res: ServerResponse, chunks: string[], delayMs: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': `req_${randomBytes(12).toString('hex')}` });
  for (const chunk of chunks) {
    // a client that left (or a gateway that aborted) ends the stream here
    if (res.destroyed) return;
    res.write(chunk);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  res.end();
}
