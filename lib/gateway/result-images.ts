// spec §2.4 b64_json: the gateway downloads each result image (bounded size and time, through the
// shared HTTP module), concurrently because result URLs are short-lived, and writes the answer with
// the images encoded on the way out: base64 slices of the raw bytes, written as the socket takes
// them. No base64 string or JSON string of the whole answer is ever built, so an image is held
// about once in memory, not four times (raw, base64, JSON, write buffer). The upstream names the
// URLs, so they get the public-address rules (UpstreamHttp.download), and what comes back must be
// an image by its bytes before it is handed to the caller as one.
import type { Response } from 'express';
import { ERROR_CODES } from '../errors/error-codes.js';
import { GatewayError } from '../errors/gateway-error.js';
import { guardFlush, waitForDrain } from '../express/client-stall.js';
import { ClientGoneError } from '../transport/upstream-http.js';
import type { CallContext } from '../providers/call-context.js';
import type { ImageGenerationResponse } from '../providers/dashscope.js';
import { sniffImageType } from '../images/sniff-image-type.js';

export interface DownloadPolicy {
  /** `allowPrivateResultUrls`: result hosts on loopback/private networks may be fetched. */
  allowPrivate: boolean;
}

/**
 * The raw bytes of each entry that has a URL and no b64_json yet (undefined for the others). The
 * caller has already cut `response.data` to the images the request allowed: the upstream does not
 * decide how many downloads start.
 */
export async function downloadImages(response: ImageGenerationResponse, call: CallContext, provider: string, policy: DownloadPolicy): Promise<Array<Buffer | undefined>> {
  const { downloadBytes, downloadTimeoutMs } = call.limits;
  return Promise.all(
    response.data.map(async (item) => {
      if (item.b64_json !== '' || item.url === '') return undefined;
      let bytes: Buffer;
      try {
        bytes = await call.http.download(item.url, { provider, maxBytes: downloadBytes, timeoutMs: downloadTimeoutMs, signal: call.signal, allowPrivate: policy.allowPrivate });
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        // the download has its own deadline (limits.downloadTimeoutMs), not the upstream's timeoutMs
        const detail = error.status === 504 ? `the result host did not answer within ${downloadTimeoutMs} ms (the gateway's limits.downloadTimeoutMs).` : error.message.replace(/\.?$/, '.');
        throw downloadFailed(error.status === 504 ? 504 : 502, detail);
      }
      // the bytes go to the caller as an image: an HTML error page or anything else is not one
      if (!sniffImageType(bytes)) throw downloadFailed(502, `the ${provider} result URL did not answer with an image (PNG, JPEG, WebP, GIF, BMP, TIFF, HEIC or AVIF).`);
      return bytes;
    }),
  );
}

function downloadFailed(status: 502 | 504, detail: string): GatewayError {
  return new GatewayError({
    status,
    code: ERROR_CODES.imageDownloadFailed,
    message: `The image was generated but could not be downloaded for b64_json: ${detail} Ask for response_format 'url' instead.`,
  });
}

// a multiple of 3, so each slice encodes to base64 without padding in the middle of the answer
const SLICE = 3 * 64 * 1024;

/** Writes the spec §2.4 body with `images[i]` encoded as data[i].b64_json, honouring backpressure. */
export async function writeImageResponse(res: Response, response: ImageGenerationResponse, images: Array<Buffer | undefined>): Promise<void> {
  const pieces: Array<string | Buffer> = [`{"created":${response.created},"data":[`];
  response.data.forEach((item, index) => {
    const raw = images[index];
    pieces.push(`${index > 0 ? ',' : ''}{"url":${JSON.stringify(item.url)},"b64_json":"`);
    if (raw) pieces.push(raw);
    else pieces.push(item.b64_json);
    pieces.push(`","revised_prompt":${JSON.stringify(item.revised_prompt)}}`);
  });
  pieces.push(`],"extra":${JSON.stringify(response.extra)}}`);
  let length = 0;
  for (const piece of pieces) length += typeof piece === 'string' ? Buffer.byteLength(piece) : 4 * Math.ceil(piece.length / 3);
  res.statusCode = 200;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', length);
  for (const piece of pieces) {
    if (typeof piece === 'string') await write(res, piece);
    else for (let start = 0; start < piece.length; start += SLICE) await write(res, piece.toString('base64', start, Math.min(start + SLICE, piece.length)));
  }
  res.end();
  guardFlush(res);
}

/** Writes one piece; when the socket is full, waits for the client, which is cut if it stalls (limits.clientStallMs). */
function write(res: Response, chunk: string): Promise<void> | void {
  if (res.destroyed) throw new ClientGoneError();
  if (res.write(chunk)) return;
  return waitForDrain(res);
}
