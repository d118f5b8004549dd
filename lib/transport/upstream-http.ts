// The only place the gateway talks HTTP to upstreams (docs/architecture.md: "HTTP lives in one place"): a
// keep-alive pool per origin, a whole-request deadline, abort when the client goes away, bounded
// buffering, and network failures turned into GatewayErrors. Routes never touch a socket.
//
// On undici's Pool (the npm package, by Node's own maintainers, pure JS), driven through its
// dispatch handler interface: measured on this machine it answers more requests per second than
// node:http's agent at 64 connections (docs/benchmarks.md). Not axios: it added 160-245 µs
// to every upstream round trip. Nothing a higher-level API adds is used here: no redirects, no
// proxies, no transforms; statuses, bodies and limits are read by the transport itself.
//
// This module is the transport's entry: the pools (origin-pools.ts), deadlines (deadline.ts), the
// dispatch handler (exchange.ts), bounded reads (bounded-read.ts), result-URL rules
// (result-download.ts) and the error mapping (upstream-failure.ts) are its parts. All state is the
// instance's: two routers in one process share nothing.
import { Readable } from 'node:stream';
import { DEFAULT_LIMITS } from '../default-limits.js';
import { GatewayError } from '../errors/gateway-error.js';
import { TooLargeError, boundedStream, declaredLength, readBounded } from './bounded-read.js';
import { type Deadline, startDeadline } from './deadline.js';
import { Exchange } from './exchange.js';
import { OriginPools, RequestTargets } from './origin-pools.js';
import { type DownloadOptions, resultDownloadCall } from './result-download.js';
import type { Answer, UpstreamPool, UpstreamRequest, UpstreamResponse, UpstreamStream, WholeAnswer } from './upstream-call.js';
import { upstreamFailure } from './upstream-failure.js';

export type { CancelSignal, UpstreamRequest, UpstreamResponse, UpstreamStream } from './upstream-call.js';

/** The statuses a download follows when it is allowed redirects. */
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export class UpstreamHttp {
  private readonly pools: OriginPools;
  private readonly targets = new RequestTargets();
  /** Errors of requests that failed before their connection was up: the upstream never saw them. */
  private readonly neverConnected = new WeakSet<object>();

  /**
   * `propagate` adds the active trace context (`traceparent`) to every outgoing request: upstream
   * calls, downloads and callbacks alike (docs/observability.md).
   */
  constructor(
    pool: UpstreamPool = { sockets: DEFAULT_LIMITS.upstreamSockets, queue: DEFAULT_LIMITS.upstreamQueue },
    private readonly propagate?: (headers: Record<string, string>) => void,
  ) {
    this.pools = new OriginPools(pool);
  }

  /** Sends a request and reads the whole response body (bounded). */
  async request(call: UpstreamRequest): Promise<UpstreamResponse> {
    const deadline = startDeadline(call);
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
    const deadline = startDeadline(call);
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
   * Downloads a result image (contract §2.4 b64_json), bounded in size and time, under the result-URL
   * rules of result-download.ts; no redirects.
   */
  async download(url: string, options: DownloadOptions): Promise<Buffer> {
    const response = await this.request(resultDownloadCall(url, options));
    if (response.status < 200 || response.status >= 300) {
      throw GatewayError.badUpstreamResponse(options.provider, `the result image could not be downloaded (HTTP ${response.status})`);
    }
    return response.body;
  }

  /**
   * download() without the buffer, for re-hosting into storage (docs/durable-results.md): the same URL
   * rules, the same deadline (`timeoutMs` for the whole transfer), and a body that fails with a
   * GatewayError as soon as it passes `maxBytes` (a declared Content-Length over the cap is refused
   * before any byte is read). The caller must consume or destroy the body. It follows redirects only
   * when `options.redirects` allows them (a provider's own result URLs, which redirect to the file).
   */
  async downloadStream(url: string, options: DownloadOptions): Promise<Readable> {
    const call = resultDownloadCall(url, options);
    const deadline = startDeadline(call);
    let response: Readable;
    try {
      const answer = await this.send(call, deadline);
      response = answer.body;
      const declared = declaredLength(answer.headers);
      const location = answer.headers.location;
      if (REDIRECTS.has(answer.status) && location && (options.redirects ?? 0) > 0) {
        response.destroy();
        deadline.clear();
        const next = new URL(location, call.url);
        // credentials stay with the origin they were given for
        const { headers, ...rest } = options;
        const sameOrigin = next.origin === new URL(call.url).origin;
        return await this.downloadStream(next.href, { ...rest, ...(sameOrigin && headers ? { headers } : {}), redirects: (options.redirects ?? 0) - 1 });
      }
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
    return boundedStream(
      response,
      call.maxBytes,
      (error) => this.failure(call, error, deadline),
      () => deadline.clear(),
    );
  }

  /** Frees every pooled socket. */
  close(): void {
    this.pools.close();
  }

  /**
   * Sends the request; resolves when the answer's headers are in. With `whole` (the most bytes to
   * read), an answer that is not compressed is read by the handler itself, bounded, and resolves
   * when complete: no stream between undici and the buffer (fewer objects per call).
   */
  private send(call: UpstreamRequest, deadline: Pick<Deadline, 'onCancel'>): Promise<Answer>;
  private send(call: UpstreamRequest, deadline: Pick<Deadline, 'onCancel'>, whole: number): Promise<WholeAnswer>;
  private send(call: UpstreamRequest, deadline: Pick<Deadline, 'onCancel'>, whole?: number): Promise<WholeAnswer> {
    const target = this.targets.of(call.url);
    const headers: Record<string, string> = { ...call.headers };
    if (target.authorization && headers.authorization === undefined) headers.authorization = target.authorization;
    this.propagate?.(headers);
    const body = call.body;
    const origin = this.pools.poolFor(target.origin, call);
    return new Promise((resolve, reject) => {
      const exchange = new Exchange(origin, resolve, reject, this.neverConnected, whole);
      // cancelled (deadline, client gone): aborted with the reason, which failure() maps
      deadline.onCancel((reason) => exchange.cancel(reason));
      origin.calls += 1;
      origin.pool.dispatch({ method: call.method, path: target.path, headers, body: body ?? null }, exchange);
    });
  }

  private failure(call: UpstreamRequest, error: unknown, deadline: Pick<Deadline, 'reason' | 'expired'>): Error {
    return upstreamFailure(call, error, deadline, this.neverConnected);
  }
}
