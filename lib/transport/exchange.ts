// One call on an undici pool, as a dispatch handler (upstream-http.ts): it hands over the answer's
// status and headers with its body as a stream, or, for a call that reads the whole answer, reads an
// uncompressed body itself, bounded, so no stream stands between undici and the buffer. It also
// records whether the connection was ever up: the fallback rule asks whether the upstream saw the call.
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { Dispatcher } from 'undici';
import { PREALLOCATE_ABOVE, TooLargeError, declaredLength } from './bounded-read.js';
import type { Answer, WholeAnswer } from './upstream-call.js';

/** What an exchange needs of its pool: the count of calls it holds, for the queue limit (origin-pools.ts). */
export interface CallCounter {
  calls: number;
}

/**
 * One call on a pool, as an undici dispatch handler. `connected` is the fallback rule's question
 * (did the upstream maybe see the request?): undici starts a request (onRequestStart) only on a
 * connection that is up, TCP and TLS, and writes nothing before, so an error before it means no.
 */
export class Exchange implements Dispatcher.DispatchHandler {
  private connected = false;
  private controller: Dispatcher.DispatchController | undefined;
  private cancelled: Error | undefined;
  private body: AnswerBody | undefined;
  private read: WholeRead | undefined;
  private settled = false;
  private done = false;

  /**
   * `neverConnected` collects the errors of calls that failed before their connection was up (the
   * UpstreamHttp's own set); `whole`: read an uncompressed answer here, at most that many bytes.
   */
  constructor(
    private readonly origin: CallCounter,
    private readonly resolve: (answer: WholeAnswer) => void,
    private readonly reject: (error: unknown) => void,
    private readonly neverConnected: WeakSet<object>,
    private readonly whole?: number,
  ) {}

  /** Deadline or client gone: aborts a started request; one still waiting is answered now and aborted when its turn comes. */
  cancel(reason: Error): void {
    if (this.controller) {
      this.controller.abort(reason);
      return;
    }
    this.cancelled = reason;
    this.neverConnected.add(reason);
    this.fail(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.cancelled) controller.abort(this.cancelled);
    else this.connected = true;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    // 1xx (other than an upgrade, which is never asked for) are not answers
    if (statusCode < 200 && statusCode !== 101) return;
    const flat = flatHeaders(headers);
    if (this.whole !== undefined && flat['content-encoding'] === undefined) {
      // as readBounded: a declared length over the cap is refused before a byte is read, and
      // otherwise a large body is read straight into one buffer of that size
      const declared = declaredLength(flat);
      if (declared !== undefined && declared > this.whole) controller.abort(new TooLargeError());
      else this.read = { status: statusCode, headers: flat, chunks: [], size: 0, into: declared !== undefined && declared > PREALLOCATE_ABOVE ? Buffer.allocUnsafe(declared) : undefined, filled: 0 };
      return;
    }
    const body = new AnswerBody(controller);
    this.body = body;
    if (this.settled) {
      body.destroy();
      return;
    }
    this.settled = true;
    this.resolve(decoded(body, flat, statusCode));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const read = this.read;
    if (!read) {
      if (!this.body!.push(chunk)) controller.pause();
      return;
    }
    read.size += chunk.length;
    if (read.size > this.whole!) {
      this.read = undefined;
      controller.abort(new TooLargeError());
    } else if (read.into && read.chunks.length === 0 && read.filled + chunk.length <= read.into.length) {
      chunk.copy(read.into, read.filled);
      read.filled += chunk.length;
    } else read.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.release();
    const read = this.read;
    if (!read) {
      this.body?.push(null);
      return;
    }
    this.read = undefined;
    if (this.settled) return;
    this.settled = true;
    this.resolve({ status: read.status, headers: read.headers, body: wholeBody(read) });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.release();
    if (!this.connected && typeof error === 'object' && error !== null) this.neverConnected.add(error);
    const body = this.body;
    // After the answer was handed over its consumer attaches listeners a few promise turns later;
    // an 'error' emitted before that (a reset in the same read as the headers) would be unheard,
    // which crashes the process. One turn of the loop later every consumer is listening.
    if (body) setImmediate(() => body.destroy(error));
    else this.fail(error);
  }

  private fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(error);
  }

  private release(): void {
    if (this.done) return;
    this.done = true;
    this.origin.calls -= 1;
  }
}

/**
 * The body of one answer as undici delivers it: a chunk refused by the buffer pauses the
 * connection, a read resumes it, and a body destroyed before its end aborts the request (the
 * connection is closed, not returned to the pool half read).
 */
class AnswerBody extends Readable {
  constructor(private readonly controller: Dispatcher.DispatchController) {
    super();
  }

  override _read(): void {
    this.controller.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.readableEnded) this.controller.abort(error ?? new Error('the answer was not read to its end'));
    callback(error);
  }
}

/** An answer read by the handler itself (Exchange with `whole`). */
interface WholeRead {
  status: number;
  headers: Record<string, string | undefined>;
  chunks: Buffer[];
  size: number;
  /** The buffer of the declared length, when it is large; chunks go there while they fit. */
  into: Buffer | undefined;
  filled: number;
}

function wholeBody(read: WholeRead): Buffer {
  const { into, chunks, filled, size } = read;
  if (!into) return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  if (chunks.length === 0) return filled === into.length ? into : into.subarray(0, filled);
  // more than declared (undici's parser normally refuses that first): keep every byte, in order
  return Buffer.concat([into.subarray(0, filled), ...chunks]);
}

/** Headers node:http keeps the first of when repeated (its IncomingMessage rule); others are joined. */
const SINGLE_HEADERS = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) flat[name] = Array.isArray(value) ? (SINGLE_HEADERS.has(name) ? value[0] : value.join(', ')) : value;
  return flat;
}

/**
 * The body as sent, decompressed when the upstream compressed it anyway. The gateway never asks
 * for compression (no Accept-Encoding), so this is the rare path.
 */
function decoded(body: AnswerBody, headers: Record<string, string | undefined>, status: number): Answer {
  const encoding = headers['content-encoding'];
  const decoder = encoding === 'gzip' || encoding === 'x-gzip' ? zlib.createGunzip() : encoding === 'deflate' ? zlib.createInflate() : encoding === 'br' ? zlib.createBrotliDecompress() : undefined;
  if (!decoder) return { status, headers, body };
  const { 'content-encoding': _dropped, 'content-length': _length, ...rest } = headers;
  body.once('error', (error) => decoder.destroy(error));
  // a decoder given up (too large, cancelled) gives up the answer too: its connection is not kept half read
  decoder.once('close', () => {
    if (!body.readableEnded) body.destroy();
  });
  return { status, headers: rest, body: body.pipe(decoder) };
}
