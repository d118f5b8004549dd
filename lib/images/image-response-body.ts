// The contract §2.4 body of an answer whose images are bytes (b64_json): built as pieces, the raw images
// base64-encoded as they are written (express/write-image-response.ts), or whole in one buffer for an
// answer kept for a later request (an Idempotency-Key's record, on any instance).
import type { ImageGenerationResponse } from './image-generation-response.js';

/** The contract §2.4 body as pieces, `images[i]` raw (base64-encoded as written), and its length. */
export function imageResponsePieces(response: ImageGenerationResponse, images: Array<Buffer | undefined>): { pieces: Array<string | Buffer>; length: number } {
  const pieces: Array<string | Buffer> = [`{"created":${response.created},"data":[`];
  response.data.forEach((item, index) => {
    const raw = images[index];
    pieces.push(`${index > 0 ? ',' : ''}{"url":${JSON.stringify(item.url)},"b64_json":"`);
    if (raw) pieces.push(raw);
    else pieces.push(item.b64_json);
    pieces.push(`","revised_prompt":${JSON.stringify(item.revised_prompt)}${item.provenance ? `,"provenance":${JSON.stringify(item.provenance)}` : ''}}`);
  });
  pieces.push(`],"extra":${JSON.stringify(response.extra)}}`);
  let length = 0;
  for (const piece of pieces) length += typeof piece === 'string' ? Buffer.byteLength(piece) : 4 * Math.ceil(piece.length / 3);
  return { pieces, length };
}

/** The whole body in one buffer (an answer kept for a later request, not written now). */
export function encodeImageResponse(response: ImageGenerationResponse, images: Array<Buffer | undefined>): Buffer {
  const { pieces } = imageResponsePieces(response, images);
  return Buffer.concat(pieces.map((piece) => Buffer.from(typeof piece === 'string' ? piece : piece.toString('base64'))));
}
