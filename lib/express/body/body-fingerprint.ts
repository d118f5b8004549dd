// The fingerprint of a request body, for Idempotency-Key (idempotency.ts): "the same request" is the
// same bytes. The JSON parser hashes the bytes it read (only for requests that carry the header); a
// body parsed by the host, or a multipart form, is hashed from what its parser produced.
import { createHash } from 'node:crypto';
import { uploadedChunks } from './upload-chunks.js';
import type { RequestContext } from '../request-context.js';

/** Called by the JSON parser with the exact (decoded) body bytes: hashed when the request has an Idempotency-Key, or `always`. */
export function fingerprintBytes(context: RequestContext, bytes: Buffer, always = false): void {
  if (!always && context.req.headers['idempotency-key'] === undefined) return;
  context.fingerprint = createHash('sha256').update(bytes).digest('base64url');
}

/** The body's fingerprint: the bytes' hash when the gateway read them, else a hash of the parsed fields and files. */
export function bodyFingerprint(context: RequestContext): string {
  if (context.fingerprint) return context.fingerprint;
  const { req } = context;
  const hash = createHash('sha256').update(JSON.stringify(req.body ?? null));
  // multer's files: each one's field, name, type and bytes, in arrival order
  for (const file of Array.isArray(req.files) ? req.files : []) {
    hash.update(`\0${file.fieldname}\0${file.originalname}\0${file.mimetype}\0${file.size}\0`);
    for (const chunk of uploadedChunks(file)) hash.update(chunk);
  }
  return hash.digest('base64url');
}
