// Writes a whole answer: status, type and length, nothing else. Express's res.send/res.json would
// also hash every body for an ETag, which API answers never use and which cost measurable time on
// the hot path (the benchmark's profile). A small answer is one res.end; a large one (an upstream's
// JSON can be up to limits.upstreamResponseBytes) goes out in slices as the client takes them, so
// a client that stops reading is cut after limits.clientStallMs instead of holding it forever.
import { guardFlush, waitForDrain } from './client-stall.js';
import type { RequestContext } from '../request-context.js';
import { rateLimitHeaders } from '../../errors/quota-exceeded-error.js';

// Each wait for the client covers at most one slice: a client must take 256 KiB per stall limit
// (under 10 KB/s at the 30 s default) to be kept, whatever the size of the whole answer.
const SLICE = 256 * 1024;

export function sendBody(context: RequestContext, status: number, contentType: string, body: Buffer | string): void {
  const { res } = context;
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  // an Idempotency-Key request keeps what it answered, byte for byte (idempotency.ts)
  const recorder = context.recorder;
  recorder?.record(status, contentType, length <= recorder.maxBytes ? body : undefined, length);
  res.statusCode = status;
  if (status < 300) sendRateLimit(context);
  res.setHeader('content-type', contentType);
  res.setHeader('content-length', length);
  if (length <= SLICE) {
    res.end(body);
    guardFlush(context);
    return;
  }
  void writeSlices(context, typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
}

export function sendJson(context: RequestContext, status: number, value: unknown): void {
  sendBody(context, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

async function writeSlices(context: RequestContext, body: Buffer): Promise<void> {
  const { res } = context;
  try {
    for (let start = 0; start < body.length; start += SLICE) {
      if (res.destroyed) return;
      if (!res.write(body.subarray(start, start + SLICE))) await waitForDrain(context);
    }
    res.end();
    guardFlush(context);
  } catch {
    // the client left or was cut for stalling (logged there): nobody is left to answer
  }
}

/** The caller's quotas after this request (draft-ietf-httpapi-ratelimit-headers), when it was charged. */
export function sendRateLimit(context: RequestContext): void {
  const { res } = context;
  const fields = context.usage.rateLimit;
  if (!fields || fields.length === 0) return;
  const { policy, limit } = rateLimitHeaders(fields);
  res.setHeader('ratelimit-policy', policy);
  res.setHeader('ratelimit', limit);
}
