// Reading a request body, JSON and multipart alike: which Content-Encoding it may use (compressed
// bodies must not amplify: docs/architecture.md "Security boundaries"), the read itself into one
// Buffer bounded by bytes, decoded size and ratio (with a Content-Length, allocated once and filled in
// place), the router's own read deadline (limits.bodyReadTimeoutMs: a body that dribbles in would
// otherwise hold its buffers and socket until Node's requestTimeout), and a body a host middleware
// already read (docs/getting-started.md "Your parsers first"), answered at once.
import zlib from 'node:zlib';
import type { IncomingMessage, IncomingHttpHeaders } from 'node:http';
import type { Transform } from 'node:stream';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Request, Response } from 'express';
import { ERROR_CODES } from '../../errors/error-codes.js';
import type { Logger } from '../../options/host-hooks.js';

export interface ReadBodyLimits {
  /** Largest body on the wire, and largest decoded body. */
  maxBytes: number;
  /** For a compressed body: the largest decoded size and the largest decoded/compressed ratio. */
  compressed?: { maxDecodedBytes: number; maxRatio: number };
}

/** Decoded bodies below this size are not held to the ratio: tiny bodies compress extremely well. */
const RATIO_FREE_BYTES = 64 * 1024;

/** A body being read: `abort` ends the read with that error (the deadline), once. */
export interface BodyRead {
  body: Promise<Buffer>;
  abort: (error: GatewayError) => void;
}

/**
 * Starts reading. A plain abort function, not an AbortSignal: an AbortController and its
 * EventTarget listener per request cost measurable time on the hot path (docs/architecture.md "Performance").
 */
export function readBody(req: IncomingMessage, coding: ContentCoding, limits: ReadBodyLimits): BodyRead {
  let abort: (error: GatewayError) => void = () => {};
  const body = new Promise<Buffer>((resolve, reject) => {
    const declared = declaredLength(req);
    if (declared !== undefined && declared > limits.maxBytes) {
      reject(tooLarge(limits.maxBytes));
      return;
    }
    const decoder = coding === 'identity' ? undefined : createDecoder(coding);
    const maxDecoded = decoder && limits.compressed ? Math.min(limits.compressed.maxDecodedBytes, limits.maxBytes) : limits.maxBytes;
    // the one Buffer: exact size when declared (identity only: a decoded size is never declared)
    let whole: Buffer | undefined = decoder === undefined && declared !== undefined ? Buffer.allocUnsafe(declared) : undefined;
    const chunks: Buffer[] = [];
    let wire = 0;
    let decoded = 0;
    let done = false;

    const finish = (error: GatewayError | undefined, body?: Buffer): void => {
      if (done) return;
      done = true;
      req.off('data', onWire);
      req.off('end', onWireEnd);
      req.off('close', onClose);
      if (decoder) {
        req.unpipe(decoder);
        decoder.off('data', onDecoded);
        decoder.destroy();
      }
      if (error) {
        whole = undefined;
        chunks.length = 0;
        // the rest of the body is discarded as it comes (Node reads it for keep-alive)
        req.resume();
        reject(error);
      } else {
        resolve(body!);
      }
    };
    abort = (error: GatewayError): void => finish(error);
    const onClose = (): void => {
      if (!req.complete) finish(GatewayError.invalidRequest('The request body ended before its declared length'));
    };
    const collect = (chunk: Buffer, total: number): void => {
      if (whole) chunk.copy(whole, total - chunk.length);
      else chunks.push(chunk);
    };
    const onWire = (chunk: Buffer): void => {
      wire += chunk.length;
      if (wire > limits.maxBytes) return finish(tooLarge(limits.maxBytes));
      if (!decoder) {
        // Node's parser never delivers more than Content-Length; checked anyway before copying
        if (whole && wire > whole.length) return finish(GatewayError.invalidRequest('The request body is longer than its Content-Length'));
        collect(chunk, wire);
        // every declared byte is here: the body is done now, not at 'end' a turn of the loop later
        // (the stream keeps flowing to its end, so the connection stays reusable)
        if (whole && wire === whole.length) finish(undefined, whole);
      }
    };
    const onDecoded = (chunk: Buffer): void => {
      decoded += chunk.length;
      if (decoded > maxDecoded) return finish(GatewayError.tooLarge(`The request body decodes to more than the ${maxDecoded} byte limit for compressed bodies`));
      const ratio = limits.compressed?.maxRatio ?? Number.POSITIVE_INFINITY;
      if (decoded > RATIO_FREE_BYTES && decoded > ratio * wire) {
        return finish(GatewayError.tooLarge(`The compressed request body inflates more than ${ratio} times: send it uncompressed`));
      }
      collect(chunk, decoded);
    };
    const onWireEnd = (): void => {
      if (decoder) return; // the decoder's own end completes the read
      finish(undefined, whole ?? (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, wire)));
    };

    req.on('data', onWire);
    req.on('end', onWireEnd);
    req.on('close', onClose);
    if (decoder) {
      decoder.on('data', onDecoded);
      decoder.once('end', () => finish(undefined, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, decoded)));
      decoder.once('error', () => finish(GatewayError.invalidRequest(`The request body is not valid ${coding} data (Content-Encoding: ${coding})`)));
      req.pipe(decoder);
    }
  });
  return { body, abort: (error) => abort(error) };
}

function createDecoder(coding: Exclude<ContentCoding, 'identity'>): Transform {
  if (coding === 'gzip') return zlib.createGunzip();
  if (coding === 'deflate') return zlib.createInflate();
  return zlib.createBrotliDecompress();
}

function declaredLength(req: IncomingMessage): number | undefined {
  // Node refuses a request with both Transfer-Encoding and Content-Length, and malformed lengths
  if (req.headers['transfer-encoding'] !== undefined) return undefined;
  const header = req.headers['content-length'];
  return header === undefined ? undefined : Number(header);
}

function tooLarge(maxBytes: number): GatewayError {
  return GatewayError.tooLarge(`The request body is larger than the ${maxBytes} byte limit`);
}

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

/**
 * Calls `expire` with a 408 GatewayError when the body is not read within `timeoutMs`; returns the
 * function that stops the clock. On expiry the answer is sent with `Connection: close` (the rest of
 * the body will not be read), and when nothing can be answered any more the socket is closed.
 */
export function startBodyDeadline(req: Request, res: Response, timeoutMs: number, expire: (error: GatewayError) => void): () => void {
  const timer = setTimeout(() => {
    // stop buffering what still arrives; the socket closes once the answer is out
    req.unpipe();
    req.resume();
    if (res.headersSent || res.destroyed || !res.writable) {
      req.socket.destroy();
      return;
    }
    res.setHeader('connection', 'close');
    // Node ends a `Connection: close` socket after the answer; this covers a client that keeps it open
    res.once('finish', () => setTimeout(() => req.socket.destroy(), 1_000).unref());
    expire(
      new GatewayError({
        status: 408,
        code: ERROR_CODES.requestTimeout,
        message: `The request body was not received within ${timeoutMs} ms: send the whole body without pausing`,
      }),
    );
  }, timeoutMs);
  timer.unref();
  return () => clearTimeout(timer);
}

/** True when the request's body stream was already read (or is being read) by someone else. */
export function bodyReadElsewhere(req: Request): boolean {
  return (req as { _body?: boolean })._body === true || req.readableEnded || (req.readableDidRead ?? false);
}

/**
 * The answer for a body a host middleware consumed in a form the gateway cannot use (text, raw
 * bytes, a form, nothing at all). A 500: the client's request was fine, the server's setup is not;
 * the message names nothing the client cannot see, the log line names the fix.
 */
export function bodyAlreadyRead(logger: Logger, route: string): GatewayError {
  logger.error(
    { route, fix: 'app.use(skipGatewayRoutes(express.json())) or mount the gateway before the parser' },
    'a host middleware read the request body before the gateway; answering 500 (docs/getting-started.md "Your parsers first")',
  );
  return new GatewayError({
    status: 500,
    code: ERROR_CODES.internalError,
    message: 'The server read the request body before the gateway could, so the request was not processed. This is a server configuration problem, not a problem with the request: tell the operator.',
  });
}
