// The only place the gateway talks HTTP to upstreams (docs/architecture.md: "HTTP lives in one place"): a
// keep-alive pool per origin, a whole-request deadline, abort when the client goes away, bounded
// buffering, and network failures turned into GatewayErrors. Routes never touch a socket.
//
// On undici's Pool (the npm package, by Node's own maintainers, pure JS), driven through its
// dispatch handler interface: measured on this machine it answers more requests per second than
// node:http's agent at 64 connections (README "Benchmarks", issue 15). Not axios: it added 160-245 µs
// to every upstream round trip. Nothing a higher-level API adds is used here: no redirects, no
// proxies, no transforms; statuses, bodies and limits are read by this module itself.
import type { LookupFunction } from 'node:net';
import { Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';
import { type Dispatcher, Pool, buildConnector } from 'undici';
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

/** What send() resolves with once the status and headers are in: the body as it arrives, decoded. */
interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  body: Readable;
}

/** What a call that reads the whole answer resolves with: the body read already, when it was not compressed. */
type WholeAnswer = Answer | (Omit<Answer, 'body'> & { body: Buffer });

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

/** One pool and how many calls it holds (running or waiting for a connection), for the queue limit. */
interface OriginPool {
  pool: Pool;
  calls: number;
}

/** Pools kept at most; past this, idle ones are closed (a pool per result host or callback address). */
const MAX_POOLS = 256;

export class UpstreamHttp {
  private readonly pools = new Map<string, OriginPool>();

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
      const answer = await this.send(call, deadline, call.maxBytes);
      if (Buffer.isBuffer(answer.body)) return { status: answer.status, headers: answer.headers, body: answer.body };
      // a failed read lands in the catch below, like a failed send: one mapping for both
      const body = await readBounded(answer.body, call.maxBytes, deadline, declaredLength(answer.headers));
      return { status: answer.status, headers: answer.headers, body };
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
    let answer: Answer;
    try {
      answer = await this.send(call, deadline);
    } catch (error) {
      deadline.clear();
      throw this.failure(call, error, deadline);
    }
    const { status, headers } = answer;
    if (status < 200 || status >= 300) {
      try {
        const body = await readBounded(answer.body, call.maxBytes, deadline);
        return { ok: false, status, headers, body };
      } catch (error) {
        throw this.failure(call, error, deadline);
      } finally {
        deadline.clear();
      }
    }
    const body = answer.body;
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
    let response: Readable;
    try {
      const answer = await this.send(call, deadline);
      response = answer.body;
      const declared = declaredLength(answer.headers);
      if (answer.status < 200 || answer.status >= 300) {
        response.destroy();
        throw GatewayError.badUpstreamResponse(options.provider, `the result could not be downloaded (HTTP ${answer.status})`);
      }
      if (declared !== undefined && declared > call.maxBytes) {
        response.destroy();
        throw new TooLargeError();
      }
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
    for (const { pool } of this.pools.values()) pool.destroy().catch(() => {});
    this.pools.clear();
  }

  /**
   * Sends the request; resolves when the answer's headers are in. With `whole` (the most bytes to
   * read), an answer that is not compressed is read by the handler itself, bounded, and resolves
   * when complete: no stream between undici and the buffer (issue 15: fewer objects per call).
   */
  private send(call: UpstreamRequest, deadline: Pick<Deadline, 'onCancel'>): Promise<Answer>;
  private send(call: UpstreamRequest, deadline: Pick<Deadline, 'onCancel'>, whole: number): Promise<WholeAnswer>;
  private send(call: UpstreamRequest, deadline: Pick<Deadline, 'onCancel'>, whole?: number): Promise<WholeAnswer> {
    const target = targetOf(call.url);
    const headers: Record<string, string> = { ...call.headers };
    if (target.authorization && headers.authorization === undefined) headers.authorization = target.authorization;
    this.propagate?.(headers);
    let body = call.body;
    if (body instanceof FormData) {
      // the web Response encodes a FormData as multipart and names its boundary
      const encoded = new Response(body);
      headers['content-type'] = encoded.headers.get('content-type')!;
      body = Readable.fromWeb(encoded.body! as import('node:stream/web').ReadableStream<Uint8Array>);
    }
    const origin = this.poolFor(target.origin, call);
    return new Promise((resolve, reject) => {
      const exchange = new Exchange(origin, resolve, reject, whole);
      // cancelled (deadline, client gone): aborted with the reason, which failure() maps
      deadline.onCancel((reason) => exchange.cancel(reason));
      origin.calls += 1;
      origin.pool.dispatch({ method: call.method, path: target.path, headers, body: body ?? null }, exchange);
    });
  }

  /**
   * The pool of one origin. When all its connections are busy and `pool.queue` requests already wait
   * for one, this request fails now with 503 upstream_busy, before anything is sent: an unbounded queue
   * behind a silent upstream made every later request (any tenant's) wait out the timeouts ahead.
   * Retryable: the upstream never saw it, so a fallback upstream may take it.
   *
   * A lookup belongs to the pool (undici passes `connect.lookup` to net/tls.connect when it opens a
   * connection), so a checked lookup gets pools of its own: a pinned address one per address, a
   * public-only lookup one per resolver. None shares a connection with unchecked requests to the
   * same origin.
   */
  private poolFor(origin: string, call: UpstreamRequest): OriginPool {
    let key = origin;
    let lookup: (() => LookupFunction) | undefined;
    if (call.pinnedAddress) {
      const pinned = call.pinnedAddress;
      key = `${origin}#pinned:${pinned.address}`;
      lookup = () => pinnedLookup(pinned);
    } else if (call.publicOnly) {
      const resolve = call.publicOnly.resolve;
      key = `${origin}#public:${resolverId(resolve)}`;
      lookup = () => publicLookup(resolve);
    }
    let entry = this.pools.get(key);
    if (!entry) {
      if (this.pools.size >= MAX_POOLS) this.closeIdlePools();
      // the deadline of each call is this module's (Deadline): no connect timeout of undici's own
      const connector = buildConnector({ timeout: 0, ...(lookup ? { lookup: lookup() } : {}) });
      const created: OriginPool = { pool: undefined as unknown as Pool, calls: 0 };
      created.pool = new Pool(origin, {
        connections: this.pool.sockets,
        // nor its header and body timers: the deadline and the stream's idle limit cover both
        headersTimeout: 0,
        bodyTimeout: 0,
        // undici 7 reconnects after a running request is aborted, for that aborted request (undici
        // issue 5845), and leaves the new connection open and idle: a silent upstream would keep one
        // socket per timeout. A connection no call waits for is refused instead (the client drops it).
        connect: (options, callback) => {
          if (created.calls === 0) callback(new Error('no call waits for this connection'), null);
          else connector(options, callback);
        },
      });
      entry = created;
      this.pools.set(key, entry);
    }
    const waiting = entry.calls - this.pool.sockets;
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
    return entry;
  }

  private closeIdlePools(): void {
    for (const [key, entry] of this.pools) {
      if (entry.calls > 0) continue;
      entry.pool.close().catch(() => {});
      this.pools.delete(key);
    }
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
    // undici's parser errors do not always name llhttp's code
    const code = (error as { code?: unknown }).code ?? (error instanceof Error && error.name === 'HTTPParserError' ? 'HPE_INVALID' : undefined);
    // an answer that is not HTTP (HPE_*, or headers past undici's limit) or claims a compression it
    // does not have (Z_*) was received: the upstream is reachable, its answer is unusable
    if (typeof code === 'string' && (code.startsWith('HPE_') || code.startsWith('Z_') || code === 'UND_ERR_HEADERS_OVERFLOW')) {
      return GatewayError.badUpstreamResponse(call.provider, `the answer could not be read (${code})`);
    }
    return GatewayError.upstreamUnreachable(call.provider, typeof code === 'string' ? (RESET_CODES.has(code) ? 'ECONNRESET' : code) : 'network error', { notStarted });
  }
}

class TooLargeError extends Error {}

/**
 * undici's names for a connection the upstream closed or cut before the answer was whole; the
 * gateway's messages call it what node:http did (and what callers already match on): ECONNRESET.
 */
const RESET_CODES = new Set(['UND_ERR_SOCKET', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH']);

interface Target {
  origin: string;
  /** Path and query, as the request line carries them. */
  path: string;
  /** Basic credentials from the URL's userinfo (what node:http made of `auth`). */
  authorization?: string;
}

// The parsed request URLs: most calls go to the same few endpoints, and parsing one costs a URL
// object and its options per call (issue 15). Bounded: cleared when full.
const targets = new Map<string, Target>();

function targetOf(href: string): Target {
  let target = targets.get(href);
  if (!target) {
    const url = new URL(href);
    const auth = url.username || url.password ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
    target = { origin: url.origin, path: `${url.pathname}${url.search}`, ...(auth ? { authorization: `Basic ${Buffer.from(auth).toString('base64')}` } : {}) };
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
function publicLookup(resolve: Resolver | undefined): LookupFunction {
  return ((hostname: string, options: object, callback: (error: Error | null, address?: { address: string; family: 4 | 6 }[] | { address: string; family: 4 | 6 }) => void): void => {
    resolvePublicAddress(hostname, { allowPrivate: false }, resolve).then(
      (pinned) => callback(null, (options as { all?: boolean }).all ? [pinned] : pinned),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
    );
  }) as unknown as LookupFunction;
}

// Each resolver (tests replace DNS) gets a pool of its own: the lookup is the pool's
const resolverIds = new WeakMap<Resolver, number>();
let nextResolverId = 1;
function resolverId(resolve: Resolver | undefined): string {
  if (!resolve) return 'dns';
  let id = resolverIds.get(resolve);
  if (id === undefined) {
    id = nextResolverId++;
    resolverIds.set(resolve, id);
  }
  return String(id);
}

/**
 * A lookup that answers one fixed address, in the callback form net.connect accepts. It answers
 * on a later turn of the event loop, as a real DNS lookup does: answered synchronously, a connect()
 * the kernel refuses at once (ENETUNREACH, EPERM from a firewall, EADDRNOTAVAIL) fails inside
 * net.connect, before the connector has attached its 'error' listener (with node:http that error
 * killed the process; the spec for it stays, whatever the client).
 */
function pinnedLookup(pinned: { address: string; family: 4 | 6 }): LookupFunction {
  return ((_hostname: string, options: object, callback: (error: Error | null, address: { address: string; family: 4 | 6 }[] | { address: string; family: 4 | 6 }) => void): void => {
    const answer = (options as { all?: boolean }).all ? [pinned] : pinned;
    setImmediate(() => callback(null, answer));
  }) as unknown as LookupFunction;
}

/** Reads a stream into one Buffer, failing as soon as it passes maxBytes (no unbounded buffering). */
function declaredLength(headers: Record<string, string | undefined>): number | undefined {
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

/**
 * One call on a pool, as an undici dispatch handler. `connected` is the fallback rule's question
 * (did the upstream maybe see the request?): undici starts a request (onRequestStart) only on a
 * connection that is up, TCP and TLS, and writes nothing before, so an error before it means no.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private connected = false;
  private controller: Dispatcher.DispatchController | undefined;
  private cancelled: Error | undefined;
  private body: AnswerBody | undefined;
  private read: WholeRead | undefined;
  private settled = false;
  private done = false;

  /** `whole`: read an uncompressed answer here, at most that many bytes (request()). */
  constructor(
    private readonly origin: OriginPool,
    private readonly resolve: (answer: WholeAnswer) => void,
    private readonly reject: (error: unknown) => void,
    private readonly whole?: number,
  ) {}

  /** Deadline or client gone: aborts a started request; one still waiting is answered now and aborted when its turn comes. */
  cancel(reason: Error): void {
    if (this.controller) {
      this.controller.abort(reason);
      return;
    }
    this.cancelled = reason;
    NEVER_CONNECTED.add(reason);
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
      else this.read = { status: statusCode, headers: flat, chunks: [], size: 0, into: declared !== undefined && declared > 64 * 1024 ? Buffer.allocUnsafe(declared) : undefined, filled: 0 };
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
    if (!this.connected && typeof error === 'object' && error !== null) NEVER_CONNECTED.add(error);
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
