// The only place the gateway talks HTTP to upstreams (docs/architecture.md: "HTTP lives in one place"): a
// keep-alive agent per origin, a whole-request deadline, abort when the client goes away, bounded
// buffering, and network failures turned into GatewayErrors. Routes never touch a socket.
//
// Node's own http/https, not axios: measured on this machine, axios added 160-245 µs to every
// upstream round trip (its config merging, header objects and promise chain), which alone is most
// of the gateway's 0.5 ms overhead budget. Nothing axios adds is used here: no redirects, no
// proxies, no transforms; statuses, bodies and limits are read by this module itself.
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { Readable, Transform } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { urlToHttpOptions } from 'node:url';
import zlib from 'node:zlib';
import { ERROR_CODES } from '../errors/error-codes.js';
import { ClientGoneError } from '../errors/client-gone-error.js';
import { GatewayError } from '../errors/gateway-error.js';
import { DEFAULT_LIMITS } from '../default-limits.js';
import { NonPublicAddressError, type Resolver, checkPublicUrl, describeProblem, resolvePublicAddress } from '../security/public-url.js';

/**
 * What a call needs of a cancellation signal: an AbortSignal is one; a route's cheap client-gone watch
 * (express/route-state.ts) is another, so a request that finishes normally makes no AbortController.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

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
  signal?: CancelSignal;
  /** Largest body read into memory; a larger one fails with 502. */
  maxBytes: number;
  /** Connect to this address whatever DNS says now (callbacks pin the address they checked). */
  pinnedAddress?: { address: string; family: 4 | 6 };
  /**
   * Connect only to public addresses: the name is resolved, every address checked, and the socket
   * connects to the checked one (no rebinding between check and connect). IP literals are not looked
   * up by Node, so the caller checks those (checkPublicUrl) before sending.
   */
  publicOnly?: { resolve?: Resolver };
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

class DeadlineError extends Error {}

/**
 * A call's deadline and cancellation. Plain listeners, not an AbortController: a controller, its
 * signal and the listener node:http adds for it cost measurable time per call (issue 15).
 */
interface Deadline {
  /** Why the call was cancelled (DeadlineError or ClientGoneError); undefined while it runs. */
  reason: () => Error | undefined;
  /** Runs `listener` on cancellation (at once when already cancelled); returns its remover. */
  onCancel: (listener: (reason: Error) => void) => () => void;
  expired: () => boolean;
  /** Switches from a whole-request deadline to an idle limit of `ms`; `waiting` time does not count. */
  idle: (ms: number, waiting: () => boolean) => void;
  /** Records activity for the idle limit. */
  touch: () => void;
  clear: () => void;
}

/** The keep-alive pool per upstream origin (limits.upstreamSockets, limits.upstreamQueue). */
export interface UpstreamPool {
  /** Most sockets open at once to one origin. */
  sockets: number;
  /** Most requests waiting for a socket of one origin; one more fails at once with 503. */
  queue: number;
}

export class UpstreamHttp {
  private readonly agents = new Map<string, http.Agent>();

  /**
   * `propagate` adds the active trace context (`traceparent`) to every outgoing request: upstream
   * calls, downloads and callbacks alike (README "Observability").
   */
  constructor(
    private readonly pool: UpstreamPool = { sockets: DEFAULT_LIMITS.upstreamSockets, queue: DEFAULT_LIMITS.upstreamQueue },
    private readonly propagate?: (headers: Record<string, string>) => void,
  ) {}

  /** Sends a request and reads the whole response body (bounded). */
  async request(call: UpstreamRequest): Promise<UpstreamResponse> {
    const deadline = this.deadline(call);
    try {
      const response = await this.send(call, deadline);
      // a failed read lands in the catch below, like a failed send: one mapping for both
      const body = await readBounded(response, call.maxBytes, deadline, declaredLength(response.headers));
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
      response = await this.send(call, deadline);
    } catch (error) {
      deadline.clear();
      throw this.failure(call, error, deadline);
    }
    const headers = flatHeaders(response.headers);
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      try {
        const body = await readBounded(response, call.maxBytes, deadline);
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

  /**
   * Downloads a result image (contract §2.4 b64_json), bounded in size and time. The URL comes from the
   * upstream, so it gets the rules of a caller's URL: http(s), no userinfo or backslash, and unless
   * `allowPrivate`, only public addresses, checked after resolution and pinned; no redirects.
   */
  async download(url: string, options: DownloadOptions): Promise<Buffer> {
    const { allowPrivate, resolve, ...limits } = options;
    const check = checkPublicUrl(url, { allowPrivate });
    if (!check.ok) {
      throw GatewayError.badUpstreamResponse(options.provider, `the result URL was refused: it ${describeProblem(check, RESULT_URL_WORDING)}`);
    }
    const response = await this.request({ ...limits, method: 'GET', url: check.url.href, ...(allowPrivate ? {} : { publicOnly: { resolve } }) });
    if (response.status < 200 || response.status >= 300) {
      throw GatewayError.badUpstreamResponse(options.provider, `the result image could not be downloaded (HTTP ${response.status})`);
    }
    return response.body;
  }

  /**
   * download() without the buffer, for re-hosting into storage (issue 12): the same URL rules, the
   * same deadline (`timeoutMs` for the whole transfer), and a body that fails with a GatewayError
   * as soon as it passes `maxBytes` (a declared Content-Length over the cap is refused before any
   * byte is read). The caller must consume or destroy the body.
   */
  async downloadStream(url: string, options: DownloadOptions): Promise<Readable> {
    const { allowPrivate, resolve, ...limits } = options;
    const check = checkPublicUrl(url, { allowPrivate });
    if (!check.ok) {
      throw GatewayError.badUpstreamResponse(options.provider, `the result URL was refused: it ${describeProblem(check, RESULT_URL_WORDING)}`);
    }
    const call: UpstreamRequest = { ...limits, method: 'GET', url: check.url.href, ...(allowPrivate ? {} : { publicOnly: { resolve } }) };
    const deadline = this.deadline(call);
    let response: Readable & Pick<IncomingMessage, 'statusCode' | 'headers'>;
    try {
      response = await this.send(call, deadline);
      const status = response.statusCode ?? 0;
      const declared = declaredLength(response.headers);
      if (status < 200 || status >= 300) throw GatewayError.badUpstreamResponse(options.provider, `the result could not be downloaded (HTTP ${status})`);
      if (declared !== undefined && declared > call.maxBytes) throw new TooLargeError();
    } catch (error) {
      deadline.clear();
      throw this.failure(call, error, deadline);
    }
    let size = 0;
    const bounded = new Transform({
      transform: (chunk: Buffer, _encoding, callback) => {
        size += chunk.length;
        callback(size > call.maxBytes ? this.failure(call, new TooLargeError(), deadline) : null, chunk);
      },
    });
    response.once('error', (error) => bounded.destroy(this.failure(call, error, deadline)));
    bounded.once('close', () => {
      deadline.clear();
      if (!response.readableEnded) response.destroy();
    });
    return response.pipe(bounded);
  }

  /** Frees every pooled socket. */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  private send(call: UpstreamRequest, deadline: Pick<Deadline, 'onCancel'>): Promise<Readable & Pick<IncomingMessage, 'statusCode' | 'headers'>> {
    const target = targetOf(call.url);
    const headers: Record<string, string> = { ...call.headers };
    this.propagate?.(headers);
    let body = call.body;
    if (body instanceof FormData) {
      // the web Response encodes a FormData as multipart and names its boundary
      const encoded = new Response(body);
      headers['content-type'] = encoded.headers.get('content-type')!;
      body = Readable.fromWeb(encoded.body! as import('node:stream/web').ReadableStream<Uint8Array>);
    } else if (typeof body === 'string' || Buffer.isBuffer(body)) {
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const lookup = call.pinnedAddress ? pinnedLookup(call.pinnedAddress) : call.publicOnly ? publicLookup(call.publicOnly.resolve) : undefined;
    const options: https.RequestOptions = {
      method: call.method,
      headers,
      // a checked lookup must not share pooled sockets with unchecked requests to the same origin
      ...target.options,
      agent: this.agentFor(target.origin, lookup !== undefined),
      ...(lookup ? { lookup: lookup as unknown as https.RequestOptions['lookup'] } : {}),
    };
    return new Promise((resolve, reject) => {
      const request = (target.https ? https : http).request(options, (response) => resolve(decoded(response)));
      // The fallback rule needs to know whether the upstream may have seen the request: not before
      // the connection (TCP, and TLS for https) is up, since nothing is written until then.
      let connected = false;
      request.once('socket', (socket: Socket) => {
        if (request.reusedSocket) connected = true;
        else socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', () => (connected = true));
      });
      // cancelled (deadline, client gone): destroyed with the reason, which failure() maps
      deadline.onCancel((reason) => request.destroy(reason));
      request.once('error', (error) => {
        if (!connected && typeof error === 'object' && error !== null) NEVER_CONNECTED.add(error);
        reject(error);
      });
      if (body instanceof Readable) {
        body.once('error', (error) => request.destroy(error));
        body.pipe(request);
      } else {
        request.end(body);
      }
    });
  }

  /**
   * The pool of one origin. When all its sockets are busy and `pool.queue` requests already wait for
   * one, this request fails now with 503 upstream_busy, before anything is sent: an unbounded queue
   * behind a silent upstream made every later request (any tenant's) wait out the timeouts ahead.
   * Retryable: the upstream never saw it, so a fallback upstream may take it.
   */
  private agentFor(urlOrigin: string, pinned = false): http.Agent {
    // a pinned lookup must not share sockets with unpinned requests to the same origin
    const origin = `${urlOrigin}${pinned ? '#pinned' : ''}`;
    let agent = this.agents.get(origin);
    if (!agent) {
      const options = { keepAlive: true, maxSockets: this.pool.sockets, maxFreeSockets: Math.min(64, this.pool.sockets), scheduling: 'lifo' as const };
      agent = origin.startsWith('https:') ? new https.Agent(options) : new http.Agent(options);
      this.agents.set(origin, agent);
    }
    // Node queues a request in agent.requests only when every socket is taken
    let waiting = 0;
    for (const queued of Object.values(agent.requests)) waiting += queued?.length ?? 0;
    if (waiting >= this.pool.queue) {
      throw new GatewayError({
        status: 503,
        code: ERROR_CODES.upstreamBusy,
        message: `The upstream is busy: all ${this.pool.sockets} connections to it are in use and ${waiting} requests are already waiting for one. Retry shortly.`,
        retryable: true,
        notStarted: true,
        retryAfterSeconds: 1,
      });
    }
    return agent;
  }

  private deadline(call: UpstreamRequest): Deadline {
    let reason: Error | undefined;
    let listeners: ((reason: Error) => void)[] = [];
    const cancel = (why: Error): void => {
      if (reason) return;
      reason = why;
      const waiting = listeners;
      listeners = [];
      for (const listener of waiting) listener(why);
    };
    const expire = (): void => cancel(new DeadlineError());
    let timer = setTimeout(expire, call.timeoutMs);
    timer.unref();
    const onClientGone = (): void => cancel(new ClientGoneError());
    if (call.signal?.aborted) onClientGone();
    else call.signal?.addEventListener('abort', onClientGone, { once: true });
    let idleMs = 0;
    let lastTouch = 0;
    return {
      reason: () => reason,
      onCancel: (listener) => {
        if (reason) {
          listener(reason);
          return () => {};
        }
        listeners.push(listener);
        return () => {
          listeners = listeners.filter((other) => other !== listener);
        };
      },
      expired: () => reason instanceof DeadlineError,
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
        listeners = [];
        call.signal?.removeEventListener('abort', onClientGone);
      },
    };
  }

  private failure(call: UpstreamRequest, error: unknown, deadline: Pick<Deadline, 'reason' | 'expired'>): Error {
    if (error instanceof GatewayError || error instanceof ClientGoneError) return error;
    if (error instanceof TooLargeError) return GatewayError.badUpstreamResponse(call.provider, `the response is larger than ${call.maxBytes} bytes`);
    if (error instanceof NonPublicAddressError && error.inside) {
      return GatewayError.badUpstreamResponse(call.provider, 'its URL names a host that resolves to a loopback, private or link-local address, which the gateway does not connect to');
    }
    const notStarted = typeof error === 'object' && error !== null && NEVER_CONNECTED.has(error);
    if (deadline.reason()) {
      return deadline.expired() ? GatewayError.upstreamTimeout(call.provider, call.timeoutMs, { notStarted }) : new ClientGoneError();
    }
    const code = (error as { code?: unknown }).code;
    // an answer that is not HTTP (HPE_*) or claims a compression it does not have (Z_*) was
    // received: the upstream is reachable, its answer is unusable
    if (typeof code === 'string' && (code.startsWith('HPE_') || code.startsWith('Z_'))) {
      return GatewayError.badUpstreamResponse(call.provider, `the answer could not be read (${code})`);
    }
    return GatewayError.upstreamUnreachable(call.provider, typeof code === 'string' ? code : 'network error', { notStarted });
  }
}

class TooLargeError extends Error {}

interface Target {
  origin: string;
  https: boolean;
  /** host, port, path: what http.request takes from a URL (urlToHttpOptions). */
  options: https.RequestOptions;
}

// The parsed request URLs: most calls go to the same few endpoints, and parsing one costs a URL
// object and its options per call (issue 15). Bounded: cleared when full.
const targets = new Map<string, Target>();

function targetOf(href: string): Target {
  let target = targets.get(href);
  if (!target) {
    const url = new URL(href);
    const { protocol, hostname, port, path, auth } = urlToHttpOptions(url);
    target = { origin: url.origin, https: url.protocol === 'https:', options: { protocol, hostname, port, path, ...(auth ? { auth } : {}) } };
    if (targets.size >= 256) targets.clear();
    targets.set(href, target);
  }
  return target;
}

/** Errors of requests that failed before their connection was up: the upstream never saw them. */
const NEVER_CONNECTED = new WeakSet<object>();

export interface DownloadOptions {
  maxBytes: number;
  timeoutMs: number;
  signal?: CancelSignal;
  provider: string;
  /** Operator opt-in (`allowPrivateResultUrls`): result hosts on loopback/private networks. */
  allowPrivate: boolean;
  /** DNS, replaceable in tests. */
  resolve?: Resolver;
}

const RESULT_URL_WORDING = {
  notHttp: (scheme: string | undefined) => (scheme ? `must be an http(s) URL, not '${scheme}'` : 'must be an http(s) URL'),
  notPublic: 'names a loopback, private or link-local host, which the gateway does not connect to',
};

/**
 * A lookup that resolves the name and answers only when every address is public (the check and the
 * connect see the same answer). A refused name fails the request like any other lookup error.
 */
function publicLookup(resolve: Resolver | undefined) {
  return (hostname: string, options: object, callback: (error: Error | null, address?: { address: string; family: 4 | 6 }[] | { address: string; family: 4 | 6 }) => void): void => {
    resolvePublicAddress(hostname, { allowPrivate: false }, resolve).then(
      (pinned) => callback(null, (options as { all?: boolean }).all ? [pinned] : pinned),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
    );
  };
}

/**
 * A lookup that answers one fixed address, in the callback form http.request accepts. It answers
 * on a later turn of the event loop, as a real DNS lookup does: answered synchronously, a connect()
 * the kernel refuses at once (ENETUNREACH, EPERM from a firewall, EADDRNOTAVAIL) destroys the socket
 * before the ClientRequest has attached its 'error' listener, and that error kills the process.
 */
function pinnedLookup(pinned: { address: string; family: 4 | 6 }) {
  return (_hostname: string, options: object, callback: (error: Error | null, address: { address: string; family: 4 | 6 }[] | { address: string; family: 4 | 6 }) => void): void => {
    const answer = (options as { all?: boolean }).all ? [pinned] : pinned;
    setImmediate(() => callback(null, answer));
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
function readBounded(stream: Readable, maxBytes: number, deadline: Pick<Deadline, 'onCancel'>, declared?: number): Promise<Buffer> {
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
    const stopListening = deadline.onCancel((reason) => {
      stream.destroy();
      reject(reason);
    });
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        stream.destroy();
        stopListening();
        reject(new TooLargeError());
        return;
      }
      if (into && chunks.length === 0 && filled + chunk.length <= into.length) {
        chunk.copy(into, filled);
        filled += chunk.length;
      } else chunks.push(chunk);
    });
    stream.once('end', () => {
      stopListening();
      if (!into) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      else if (chunks.length === 0) resolve(filled === into.length ? into : into.subarray(0, filled));
      // more than declared (Node's parser normally refuses that first): keep every byte, in order
      else resolve(Buffer.concat([into.subarray(0, filled), ...chunks]));
    });
    stream.once('error', (error) => {
      stopListening();
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
  const decoder = encoding === 'gzip' || encoding === 'x-gzip' ? zlib.createGunzip() : encoding === 'deflate' ? zlib.createInflate() : encoding === 'br' ? zlib.createBrotliDecompress() : undefined;
  if (!decoder) return response;
  const { 'content-encoding': _dropped, 'content-length': _length, ...headers } = response.headers;
  response.once('error', (error) => decoder.destroy(error));
  return Object.assign(response.pipe(decoder), { statusCode: response.statusCode, headers });
}
