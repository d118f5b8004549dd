// contract §2.4 b64_json written with the images encoded on the way out: base64 slices of the raw bytes
// (downloaded by gateway/result-images.ts), written as the socket takes them. No base64 string or
// JSON string of the whole answer is ever built, so an image is held about once in memory, not four
// times (raw, base64, JSON, write buffer).
import { ClientGoneError } from '../../errors/client-gone-error.js';
import type { ImageGenerationResponse } from '../../images/image-generation-response.js';
import { encodeImageResponse, imageResponsePieces } from '../../images/image-response-body.js';
import { guardFlush, waitForDrain } from './client-stall.js';
import type { RequestContext } from '../request-context.js';
import { sendRateLimit } from './send-body.js';

export { encodeImageResponse } from '../../images/image-response-body.js';

// a multiple of 3, so each slice encodes to base64 without padding in the middle of the answer
const SLICE = 3 * 64 * 1024;

/** Writes the contract §2.4 body with `images[i]` encoded as data[i].b64_json, honouring backpressure. */
export async function writeImageResponse(context: RequestContext, response: ImageGenerationResponse, images: Array<Buffer | undefined>): Promise<void> {
  const { pieces, length } = imageResponsePieces(response, images);
  const { res, recorder } = context;
  if (recorder) {
    // built only for an answer that is kept (Idempotency-Key, kept work) and small enough
    recorder.record(200, 'application/json; charset=utf-8', length <= recorder.maxBytes ? encodeImageResponse(response, images) : undefined, length);
  }
  res.statusCode = 200;
  sendRateLimit(context);
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', length);
  for (const piece of pieces) {
    if (typeof piece === 'string') await write(context, piece);
    else for (let start = 0; start < piece.length; start += SLICE) await write(context, piece.toString('base64', start, Math.min(start + SLICE, piece.length)));
  }
  res.end();
  guardFlush(context);
}

/** Writes one piece; when the socket is full, waits for the client, which is cut if it stalls (limits.clientStallMs). */
function write(context: RequestContext, chunk: string): Promise<void> | void {
  if (context.res.destroyed) throw new ClientGoneError();
  if (context.res.write(chunk)) return;
  return waitForDrain(context);
}
