// Which Content-Encoding a request body may use (docs/architecture.md "Security boundaries": compressed bodies must not amplify). The
// official SDKs never compress request bodies, so by default anything but `identity` is a 415; the
// `limits.compressedBodies` option allows gzip, deflate and br, decoded under the caps of read-body.ts.
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../errors/gateway-error.js';

export type ContentCoding = 'identity' | 'gzip' | 'deflate' | 'br';

const CODINGS: Readonly<Record<string, ContentCoding>> = { identity: 'identity', gzip: 'gzip', 'x-gzip': 'gzip', deflate: 'deflate', br: 'br' };

/** The body's one coding, or a 415 that says what to send instead. Stacked codings are refused. */
export function contentCodingOf(headers: IncomingHttpHeaders, allowCompressed: boolean): ContentCoding {
  const raw = headers['content-encoding'];
  if (raw === undefined) return 'identity';
  const value = raw.trim().toLowerCase();
  if (value === '' || value === 'identity') return 'identity';
  const shown = raw.slice(0, 40);
  if (!allowCompressed) {
    throw GatewayError.unsupportedMediaType(`Content-Encoding '${shown}' is not accepted: send the request body uncompressed (identity)`);
  }
  const coding = CODINGS[value];
  if (coding === undefined) {
    throw GatewayError.unsupportedMediaType(`Content-Encoding '${shown}' is not supported: send identity, gzip, deflate or br (one coding)`);
  }
  return coding;
}
