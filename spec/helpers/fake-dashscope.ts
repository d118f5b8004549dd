// A fake DashScope speaking upstreams §1.3/§1.4 exactly: the sync multimodal-generation endpoint
// (one choice per image, task_metric, usage, request_id, x-request-id header) and result images
// served as real PNG bytes under /results/. Tests script failures with `next()`.
import type { ServerResponse } from 'node:http';
import { type FakeUpstream, type RecordedRequest, sendJson, startFakeUpstream } from './fake-upstream.js';
import { TINY_PNG } from './images.js';

export const DASHSCOPE_PATH = '/api/v1/services/aigc/multimodal-generation/generation';

export interface FakeDashscope extends FakeUpstream {
  /** The base URL a resolver gives the gateway: `${origin}/api/v1`. */
  baseURL: string;
  /** URL of a result image on this server. */
  resultUrl(name: string): string;
}

let sequence = 0;

export function dashscopeSuccess(imageUrls: string[], requestId = `ds-req-${++sequence}`): Record<string, unknown> {
  return {
    output: {
      choices: imageUrls.map((url) => ({ finish_reason: 'stop', message: { role: 'assistant', content: [{ image: url }] } })),
      task_metric: { TOTAL: imageUrls.length, SUCCEEDED: imageUrls.length, FAILED: 0 },
    },
    usage: { height: 928, image_count: imageUrls.length, width: 1664 },
    request_id: requestId,
  };
}

export function dashscopeError(res: ServerResponse, status: number, code: string, message: string, requestId = `ds-err-${++sequence}`): void {
  sendJson(res, status, { request_id: requestId, code, message }, { 'x-request-id': requestId });
}

export async function startFakeDashscope(): Promise<FakeDashscope> {
  let origin = '';
  const fake = await startFakeUpstream(
    (request: RecordedRequest, res: ServerResponse) => {
      if (request.method === 'GET' && request.path.startsWith('/results/')) {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': TINY_PNG.length });
        res.end(TINY_PNG);
        return;
      }
      if (request.method !== 'POST' || request.path !== DASHSCOPE_PATH) {
        sendJson(res, 404, { code: 'NotFound', message: `no route ${request.path}`, request_id: 'ds-404' });
        return;
      }
      if (!request.headers.authorization?.startsWith('Bearer ')) {
        dashscopeError(res, 401, 'InvalidApiKey', 'Invalid API-key provided.');
        return;
      }
      const body = request.json as { parameters?: { n?: number } } | undefined;
      const n = body?.parameters?.n ?? 1;
      const payload = dashscopeSuccess(Array.from({ length: n }, (_, index) => `${origin}/results/image-${index + 1}.png?Expires=1781778573&Signature=abc`));
      sendJson(res, 200, payload, { 'x-request-id': String(payload.request_id) });
    },
    (path) => !path.startsWith('/results/'),
  );
  origin = fake.origin;
  return Object.assign(fake, {
    baseURL: `${fake.origin}/api/v1`,
    resultUrl: (name: string) => `${fake.origin}/results/${name}`,
  });
}
