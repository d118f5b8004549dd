// The only place the gateway talks HTTP to upstreams (design.md: "HTTP lives in one place"): a
// keep-alive agent per origin, a whole-request deadline, abort when the client goes away, bounded
// buffering, and network failures turned into GatewayErrors. Routes never touch a socket.
//
// Node's own http/https, not axios: measured on this machine, axios added 160-245 µs to every
// upstream round trip (its config merging, header objects and promise chain), which alone is most
// of the gateway's 0.5 ms overhead budget. Nothing axios adds is used here: no redirects, no
// proxies, no transforms; statuses, bodies and limits are read by this module itself.
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { GatewayError } from '../errors/gateway-error.js';

export interface UpstreamRequest {
  /** Provider name, for error messages. */
  provider: string;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer | Readable | FormData;
  /** Whole-request deadline: headers and body. */
  timeoutMs: number;
  /** Aborts the upstream request (the client went away). */
  signal?: AbortSignal;
  /** Largest body read into memory; a larger one fails with 502. */
  maxBytes: number;
  /** Connect to this address whatever DNS says now (callbacks pin the address they checked). */
  pinnedAddress?: { address: string; family: 4 | 6 };
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | undefined>;
  body: Buffer;
}

/** An upstream answer whose body is relayed as it arrives (SSE); error answers come read. */
export type UpstreamStream =
  | {
      ok: true;
      status: number;
      headers: Record<string, string | undefined>;
      body: Readable;
      /** What a mid-stream error means for the caller: timeout (idle), client gone, or upstream failure. */
      failure(error: unknown): Error;
    }
  | { ok: false; status: number; headers: Record<string, string | undefined>; body: Buffer };

/** Raised when the caller disconnected: nothing is answered, nothing is retried. */
export class ClientGoneError extends Error {
  constructor() {
    super('client disconnected');
    this.name = 'ClientGoneError';
  }
}

class DeadlineError extends Error {}

interface Deadline {
  signal: AbortSignal;
  expired(): boolean;
  /** Switches from a whole-request deadline to an idle limit of `ms`; `waiting` time does not count. */
  idle(ms: number, waiting: () => boolean): void;
  /** Records activity for the idle limit. */
  touch(): void;
  clear(): void;
}

export class UpstreamHttp {
  private readonly agents = new Map<string, http.Agent>();

  /** Sends a request and reads the whole response body (bounded). */
  async request(call: UpstreamRequest): Promise<UpstreamResponse> {
    const deadline = this.deadline(call);
    try {
      const response = await this.send(call, deadline.signal);
      const body = await readBounded(response, call.maxBytes, deadline.signal, declaredLength(response.headers)).catch((error: unknown) => {
        throw this.failure(call, error, deadline);
      });
      return { status: response.statusCode ?? 0, headers: flatHeaders(response.headers), body };
    } catch (error) {
      throw this.failure(call, error, deadline);
    } finally {
      deadline.clear();
    }
  }

  /**
   * Sends a request and hands back the body as a stream once a 2xx status arrives. The deadline
   * covers the wait for headers; after that `timeoutMs` is an idle limit, reset by every chunk, so a
   * long stream lives as long as it keeps moving and a stalled one is cut. A non-2xx body is read
   * (bounded) so the route can normalize it.
   */
  async stream(call: UpstreamRequest): Promise<UpstreamStream> {
    const deadline = this.deadline(call);
    let response: Readable & Pick<IncomingMessage, 'statusCode' | 'headers'>;
    try {
      response = await this.send(call, deadline.signal);
    } catch (error) {
      deadline.clear();
      throw this.failure(call, error, deadline);
    }
    const headers = flatHeaders(response.headers);
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      try {
        const body = await readBounded(response, call.maxBytes, deadline.signal);
        return { ok: false, status, headers, body };
      } catch (error) {
        throw this.failure(call, error, deadline);
      } finally {
        deadline.clear();
      }
    }
    const body: Readable = response;
    // a body paused by backpressure (a slow client) is not upstream silence
    deadline.idle(call.timeoutMs, () => body.isPaused());
    body.on('data', deadline.touch);
    const release = (): void => {
      body.off('data', deadline.touch);
      deadline.clear();
    };
    body.once('end', release);
    body.once('close', release);
    body.once('error', release);
    return { ok: true, status, headers, body, failure: (error: unknown) => this.failure(call, error, deadline) };
  }

  /** Downloads a result image (spec §2.4 b64_json), bounded in size and time. */
  async download(url: string, options: { maxBytes: number; timeoutMs: number; signal?: AbortSignal; provider: string }): Promise<Buffer> {
    const response = await this.request({ ...options, method: 'GET', url });
    if (response.status < 200 || response.status >= 300) {
      throw GatewayError.badUpstreamResponse(options.provider, `the result image could not be downloaded (HTTP ${response.status})`);
    }
    return response.body;
  }

  /** Frees every pooled socket. */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  private send(call: UpstreamRequest, signal: AbortSignal): Promise<Readable & Pick<IncomingMessage, 'statusCode' | 'headers'>> {
    const url = new URL(call.url);
    const headers: Record<string, string> = { ...call.headers };
    let body = call.body;
    if (body instanceof FormData) {
      // the web Response encodes a FormData as multipart and names its boundary
      const encoded = new Response(body);
      headers['content-type'] = encoded.headers.get('content-type')!;
      body = Readable.fromWeb(encoded.body! as import('node:stream/web').ReadableStream<Uint8Array>);
    } else if (typeof body === 'string' || Buffer.isBuffer(body)) {
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const options: https.RequestOptions = {
      method: call.method,
      headers,
      agent: this.agentFor(url.origin, call.pinnedAddress !== undefined),
      signal,
      ...(call.pinnedAddress ? { lookup: pinnedLookup(call.pinnedAddress) as unknown as https.RequestOptions['lookup'] } : {}),
    };
    return new Promise((resolve, reject) => {
      const request = (url.protocol === 'https:' ? https : http).request(url, options, (response) => resolve(decoded(response)));
      request.once('error', reject);
      if (body instanceof Readable) {
        body.once('error', (error) => request.destroy(error));
        body.pipe(request);
      } else {
        request.end(body);
      }
    });
  }

  private agentFor(urlOrigin: string, pinned = false): http.Agent {
    // a pinned lookup must not share sockets with unpinned requests to the same origin
    const origin = `${urlOrigin}${pinned ? '#pinned' : ''}`;
    let agent = this.agents.get(origin);
    if (!agent) {
      const options = { keepAlive: true, maxSockets: 256, maxFreeSockets: 64, scheduling: 'lifo' as const };
      agent = origin.startsWith('https:') ? new https.Agent(options) : new http.Agent(options);
      this.agents.set(origin, agent);
    }
    return agent;
  }

  private deadline(call: UpstreamRequest): Deadline {
    const controller = new AbortController();
    const expire = (): void => controller.abort(new DeadlineError());
    let timer = setTimeout(expire, call.timeoutMs);
    timer.unref();
    const onClientGone = (): void => controller.abort(new ClientGoneError());
    if (call.signal?.aborted) onClientGone();
    else call.signal?.addEventListener('abort', onClientGone, { once: true });
    let idleMs = 0;
    let lastTouch = 0;
    return {
      signal: controller.signal,
      expired: () => controller.signal.reason instanceof DeadlineError,
      idle: (ms: number, waiting: () => boolean) => {
        // one timer re-armed lazily: touching costs a clock read, not a timer per chunk
        clearTimeout(timer);
        idleMs = ms;
        lastTouch = performance.now();
        const check = (): void => {
          if (waiting()) lastTouch = performance.now();
          const quiet = performance.now() - lastTouch;
          if (quiet >= idleMs) expire();
          else {
            timer = setTimeout(check, idleMs - quiet);
            timer.unref();
          }
        };
        timer = setTimeout(check, ms);
        timer.unref();
      },
      touch: () => {
        lastTouch = performance.now();
      },
      clear: () => {
        clearTimeout(timer);
        call.signal?.removeEventListener('abort', onClientGone);
      },
    };
  }

  private failure(call: UpstreamRequest, error: unknown, deadline: Pick<Deadline, 'signal' | 'expired'>): Error {
    if (error instanceof GatewayError || error instanceof ClientGoneError) return error;
    if (error instanceof TooLargeError) return GatewayError.badUpstreamResponse(call.provider, `the response is larger than ${call.maxBytes} bytes`);
    if (deadline.signal.aborted) {
      return deadline.expired() ? GatewayError.upstreamTimeout(call.provider, call.timeoutMs) : new ClientGoneError();
    }
    const code = (error as { code?: unknown }).code;
    // an answer that is not HTTP (HPE_*) or claims a compression it does not have (Z_*) was
    // received: the upstream is reachable, its answer is unusable
    if (typeof code === 'string' && (code.startsWith('HPE_') || code.startsWith('Z_'))) {
      return GatewayError.badUpstreamResponse(call.provider, `the answer could not be read (${code})`);
    }
    return GatewayError.upstreamUnreachable(call.provider, typeof code === 'string' ? code : 'network error');
  }
}

class TooLargeError extends Error {}

/** A lookup that answers one fixed address, in the callback form http.request accepts. */
function pinnedLookup(pinned: { address: string; family: 4 | 6 }) {
  return (_hostname: string, options: object, callback: (error: Error | null, address: { address: string; family: 4 | 6 }[] | { address: string; family: 4 | 6 }) => void): void => {
    callback(null, (options as { all?: boolean }).all ? [pinned] : pinned);
  };
}

/** Reads a stream into one Buffer, failing as soon as it passes maxBytes (no unbounded buffering). */
function declaredLength(headers: IncomingHttpHeaders): number | undefined {
  const length = Number(headers['content-length']);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/**
 * Reads a stream into one Buffer, failing as soon as it passes maxBytes (no unbounded buffering).
 * With a declared length the body is refused before it is read when too large, and otherwise read
 * straight into one buffer of that size: a large image is held once, not as chunks plus a copy.
 */
function readBounded(stream: Readable, maxBytes: number, signal: AbortSignal, declared?: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (declared !== undefined && declared > maxBytes) {
      stream.destroy();
      reject(new TooLargeError());
      return;
    }
    const into = declared !== undefined && declared > 64 * 1024 ? Buffer.allocUnsafe(declared) : undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    let filled = 0;
    const onAbort = (): void => {
      stream.destroy();
      reject(signal.reason instanceof Error ? signal.reason : new ClientGoneError());
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        stream.destroy();
        signal.removeEventListener('abort', onAbort);
        reject(new TooLargeError());
        return;
      }
      if (into && chunks.length === 0 && filled + chunk.length <= into.length) {
        chunk.copy(into, filled);
        filled += chunk.length;
      } else chunks.push(chunk);
    });
    stream.once('end', () => {
      signal.removeEventListener('abort', onAbort);
      if (!into) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      else if (chunks.length === 0) resolve(filled === into.length ? into : into.subarray(0, filled));
      // more than declared (Node's parser normally refuses that first): keep every byte, in order
      else resolve(Buffer.concat([into.subarray(0, filled), ...chunks]));
    });
    stream.once('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
  });
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

/**
 * The body as sent, decompressed when the upstream compressed it anyway. The gateway never asks
 * for compression (no Accept-Encoding), so this is the rare path.
 */
function decoded(response: IncomingMessage): Readable & Pick<IncomingMessage, 'statusCode' | 'headers'> {
  const encoding = response.headers['content-encoding'];
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip' ? zlib.createGunzip() : encoding === 'deflate' ? zlib.createInflate() : encoding === 'br' ? zlib.createBrotliDecompress() : undefined;
  if (!decoder) return response;
  const { 'content-encoding': _dropped, 'content-length': _length, ...headers } = response.headers;
  response.once('error', (error) => decoder.destroy(error));
  return Object.assign(response.pipe(decoder), { statusCode: response.statusCode, headers });
}
