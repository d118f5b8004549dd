// Re-hosting results into the operator's storage (docs/architecture.md "Long-lived work"; contract §2.4 and §4.2 notes on durable
// URLs): a result URL is streamed from the upstream into the store (the public-address rules of
// UpstreamHttp.download, bounded size, type sniffed from the first bytes, never a whole-file buffer),
// bytes the gateway already holds (b64_json) are stored from that one buffer. A failing or slow store
// is a StorageFailure: the caller of these functions answers the upstream URL (saying so in `extra`) or
// a 502 storage_failed, as `storage.onFailure` says. A lying upstream (not an image, too large) is the
// upstream's fault: 502 image_download_failed, never stored.
import { PassThrough, Readable, Transform } from 'node:stream';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { ClientGoneError } from '../../errors/client-gone-error.js';
import { sniffImageType } from '../../images/sniff-image-type.js';
import { newResultKey } from '../../stores/results/result-keys.js';
import type { ResultStorage } from '../../stores/results/result-storage.js';
import type { UpstreamHttp } from '../../transport/upstream-http.js';
import type { Caller } from '../../types.js';
import type { GatewayLimits } from '../../options/request-limits.js';
import type { Logger } from '../../options/host-hooks.js';
import type { Telemetry } from '../../telemetry/telemetry.js';

/** `options.storage` as resolved (options.ts). */
export interface ResolvedStorage {
  readonly store: ResultStorage;
  readonly onFailure: 'upstream_url' | 'error';
  readonly timeoutMs: number;
  readonly maxVideoBytes: number;
}

export interface RehostContext {
  storage: ResolvedStorage;
  http: UpstreamHttp;
  limits: Readonly<GatewayLimits>;
  logger: Logger;
  /** Stored bytes are counted in the `image_gateway.storage.bytes` metric (docs/observability.md). */
  telemetry: Telemetry;
  allowPrivate: boolean;
  caller: Caller;
  provider: string;
  signal: AbortSignal;
  /**
   * The headers a download of `url` needs (a provider's `resultHeaders`: its key, for its own origin
   * only); never logged, never part of an error.
   */
  headersFor?: (url: string) => Promise<Record<string, string> | undefined>;
}

export interface Stored {
  key: string;
  bytes: number;
}

/** The store failed or did not answer in time: the result itself was fine. */
export class StorageFailure extends Error {
  override readonly name = 'StorageFailure';
}

// the redirects a credentialed result download follows
const MAX_REDIRECTS = 3;

// enough for every signature sniffImageType and sniffVideoType read
const HEAD_BYTES = 32;

/**
 * The bytes of a stored file kept as they pass, up to `max`: past it they are let go and `overflowed`
 * says so, so a video read for its Content Credentials never holds more than that in memory
 * (docs/provenance.md "The added time").
 */
export class KeptBytes {
  readonly chunks: Buffer[] = [];
  size = 0;
  overflowed = false;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    if (this.overflowed) return;
    this.size += chunk.length;
    if (this.size <= this.max) this.chunks.push(chunk);
    else {
      this.overflowed = true;
      this.chunks.length = 0;
    }
  }
}

/**
 * Downloads `url` and stores it; with `keep`, the bytes stored are also kept as they pass (a video
 * task's video, read for its Content Credentials: docs/video-tasks-and-callbacks.md).
 */
export async function storeFromUrl(context: RehostContext, url: string, kind: 'image' | 'video', keep?: KeptBytes): Promise<Stored> {
  const { limits, storage } = context;
  // an upstream that answers the bytes themselves (Veo on Vertex AI) gives them as a data: URL
  if (/^data:/i.test(url)) return storeDataUrl(context, url, kind, keep);
  let source: Readable;
  try {
    const headers = await context.headersFor?.(url);
    source = await context.http.downloadStream(url, {
      // a provider's own result URL (Veo's) redirects to the file, as `curl -L` follows it in Google's docs
      ...(headers ? { headers, redirects: MAX_REDIRECTS } : {}),
      provider: context.provider,
      maxBytes: kind === 'image' ? limits.downloadBytes : storage.maxVideoBytes,
      timeoutMs: kind === 'image' ? limits.downloadTimeoutMs : Math.max(limits.downloadTimeoutMs, storage.timeoutMs),
      signal: context.signal,
      allowPrivate: context.allowPrivate,
    });
  } catch (error) {
    throw downloadFailed(error, kind);
  }
  let head: Buffer;
  let body: Readable;
  try {
    ({ head, body } = await peek(source, HEAD_BYTES));
  } catch (error) {
    throw downloadFailed(error, kind);
  }
  const contentType = kind === 'image' ? sniffImageType(head) : (sniffVideoType(head) ?? sniffImageType(head));
  if (!contentType) {
    body.destroy();
    throw notMedia(context.provider, kind);
  }
  // a failure of the download mid-way is the upstream's, not the store's. The body is listened to
  // from here on: a store that is still connecting (or never reads) must not leave its 'error'
  // unheard (an unhandled 'error' event is a crash), and the answer need not wait for the store
  let downloadError: unknown;
  source.once('error', (error) => (downloadError = error));
  body.on('error', () => undefined);
  const broken = new Promise<never>((_resolve, reject) => source.once('error', reject));
  try {
    return await Promise.race([put(context, keep ? tapped(body, keep) : body, contentType), broken]);
  } catch (error) {
    // the download stops with the store: its socket goes back now, not at the download deadline
    source.destroy();
    if (downloadError !== undefined) throw downloadFailed(downloadError, kind);
    throw error;
  }
}

/** A base64 data: URL's bytes, bounded like a download, stored when they are the media asked for. */
async function storeDataUrl(context: RehostContext, url: string, kind: 'image' | 'video', keep?: KeptBytes): Promise<Stored> {
  const comma = url.indexOf(',');
  const max = kind === 'image' ? context.limits.downloadBytes : context.storage.maxVideoBytes;
  if (comma === -1 || !/;base64$/i.test(url.slice(0, comma)) || ((url.length - comma - 1) * 3) / 4 > max + 3) throw notMedia(context.provider, kind);
  const bytes = Buffer.from(url.slice(comma + 1), 'base64');
  const contentType = kind === 'image' ? sniffImageType(bytes) : (sniffVideoType(bytes) ?? sniffImageType(bytes));
  if (!contentType || bytes.length > max) throw notMedia(context.provider, kind);
  keep?.push(bytes);
  return put(context, Readable.from([bytes]), contentType);
}

/** `body` passed on unchanged, each chunk also kept; an error of `body` ends it too. */
function tapped(body: Readable, keep: KeptBytes): Readable {
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      keep.push(chunk);
      done(null, chunk);
    },
  });
  body.once('error', (error) => tap.destroy(error));
  return body.pipe(tap);
}

/** Stores bytes the gateway already holds (a b64_json download or an upstream's base64). */
export async function storeBytes(context: RehostContext, bytes: Buffer): Promise<Stored> {
  const contentType = sniffImageType(bytes);
  if (!contentType) throw notMedia(context.provider, 'image');
  return put(context, Readable.from([bytes]), contentType);
}

/** The signed (or public) URL of a stored key; a store that cannot sign is a StorageFailure. */
export async function urlOf(storage: ResolvedStorage, key: string, requestBase: string | undefined): Promise<string> {
  try {
    return await withTimeout(storage.timeoutMs, () => storage.store.url(key, { requestBase }));
  } catch (error) {
    throw new StorageFailure(`the result store could not sign a URL: ${messageOf(error)}`, { cause: error });
  }
}

/** Logs a storage failure and says whether the request answers the upstream URL instead (else it throws 502). */
export function storageFallback(storage: ResolvedStorage, logger: Logger, failure: StorageFailure, fields: Record<string, unknown>): string {
  logger.error({ ...fields, error: failure.message }, 'result storage failed');
  if (storage.onFailure === 'error') {
    throw new GatewayError({
      status: 502,
      code: ERROR_CODES.storageFailed,
      message: 'The result was generated but could not be stored for a durable URL. Retry, or ask the operator to check the result storage.',
      retryable: true,
    });
  }
  return 'the result could not be stored; the URL is the upstream\u2019s own and expires within a day';
}

async function put(context: RehostContext, body: Readable, contentType: string): Promise<Stored> {
  const key = newResultKey(context.caller.id, contentType);
  try {
    const bytes = await withTimeout(context.storage.timeoutMs, (signal) => context.storage.store.put(key, body, { contentType, signal }));
    context.telemetry.recordStorageBytes(bytes, 'put');
    return { key, bytes };
  } catch (error) {
    body.destroy();
    if (error instanceof ClientGoneError) throw error;
    // a half-written object is not left behind (best effort: the store may be the thing that is down)
    void context.storage.store.delete(key).catch(() => undefined);
    throw new StorageFailure(`the result store did not take the result: ${messageOf(error)}`, { cause: error });
  }
}

/** Runs `work` with a signal aborted after `ms`; rejects then whether or not `work` honours it. */
async function withTimeout<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`no answer within ${ms} ms (storage.timeoutMs)`);
      controller.abort(error);
      reject(error);
    }, ms);
    timer.unref();
  });
  try {
    return await Promise.race([work(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The first `size` bytes of `source` (fewer if it ends) and a stream of all of it, head included. */
function peek(source: Readable, size: number): Promise<{ head: Buffer; body: Readable }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const finish = (ended: boolean): void => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.pause();
      const head = Buffer.concat(chunks, length);
      const body = new PassThrough();
      body.write(head);
      if (ended) body.end();
      else {
        source.once('error', (error) => body.destroy(error));
        source.pipe(body);
      }
      resolve({ head: head.subarray(0, size), body });
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= size) finish(false);
    };
    const onEnd = (): void => finish(true);
    const onError = (error: Error): void => reject(error);
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onError);
  });
}

/** `video/mp4`, `video/quicktime` or `video/webm` by the first bytes; undefined otherwise. */
function sniffVideoType(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 12)).toString('latin1');
  if (head.slice(4, 8) === 'ftyp') return head.slice(8, 12) === 'qt  ' ? 'video/quicktime' : sniffImageType(bytes) ? undefined : 'video/mp4';
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) return 'video/webm';
  return undefined;
}

/**
 * The upstream's result is not an image or a video: no retry will store it (the bytes are what they
 * are), so a task's follower delivers the upstream URL with a note instead of retrying forever.
 */
export class NotMediaResult extends GatewayError {}

function notMedia(provider: string, kind: 'image' | 'video'): GatewayError {
  return new NotMediaResult({
    status: 502,
    code: ERROR_CODES.imageDownloadFailed,
    message: `The ${provider} result URL did not answer with ${kind === 'image' ? 'an image (PNG, JPEG, WebP, GIF, BMP, TIFF, HEIC or AVIF)' : 'a video (MP4, MOV or WebM)'}, so it was not stored.`,
  });
}

function downloadFailed(error: unknown, kind: 'image' | 'video'): Error {
  if (!(error instanceof GatewayError)) return error instanceof Error ? error : new Error(String(error));
  const detail = error.status === 504 ? 'the result host did not answer in time.' : error.message.replace(/\.?$/, '.');
  return new GatewayError({
    status: error.status === 504 ? 504 : 502,
    code: ERROR_CODES.imageDownloadFailed,
    message: `The ${kind} was generated but could not be downloaded for storage: ${detail}`,
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
