// A fake OpenAI-compatible upstream (upstreams §4): images (generations, and multipart edits per
// §4.2), chat completions and responses, with the `{ error: { message, type, param, code } }`
// envelope for scripted failures.
import type { ServerResponse } from 'node:http';
import { type FakeUpstream, type RecordedRequest, sendJson, startFakeUpstream } from './fake-upstream.js';

export interface FakeOpenAI extends FakeUpstream {
  /** `${origin}/v1`, the base an OpenAI SDK would use. */
  baseURL: string;
}

/** What the fake answers to `POST /v1/images/edits` (upstreams §4.2: the §4.1 response shape). */
export const OPENAI_EDIT_RESPONSE = Object.freeze({ created: 1713833700, data: [Object.freeze({ b64_json: 'ZWRpdGVkLWltYWdlLWJ5dGVz' })] });
export const OPENAI_EDIT_REQUEST_ID = 'oa-req-edit-1';

export function openaiError(res: ServerResponse, status: number, message: string, type: string, code: string | null, requestId = 'oa-req-err'): void {
  sendJson(res, status, { error: { message, type, param: null, code } }, { 'x-request-id': requestId });
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const fake = await startFakeUpstream((request: RecordedRequest, res: ServerResponse) => {
    const body = (request.json ?? {}) as Record<string, unknown>;
    if (request.method === 'POST' && request.path === '/v1/images/generations') {
      sendJson(res, 200, { created: 1713833628, data: [{ url: 'https://cdn.openai.example/img-1.png', revised_prompt: `rev: ${String(body.prompt)}` }] }, { 'x-request-id': 'oa-req-1' });
      return;
    }
    if (request.method === 'POST' && request.path === '/v1/images/edits') {
      // a multipart body: recorded raw (request.body) for the test to parse; answered like OpenAI
      sendJson(res, 200, OPENAI_EDIT_RESPONSE, { 'x-request-id': OPENAI_EDIT_REQUEST_ID });
      return;
    }
    openaiError(res, 404, `Unknown path ${request.path}`, 'invalid_request_error', 'not_found');
  });
  return Object.assign(fake, { baseURL: `${fake.origin}/v1` });
}
