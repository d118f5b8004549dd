// Relays an upstream server-sent-event stream to the client chunk by chunk as it arrives: headers
// flushed at once, no buffering, no compression (no-transform), backpressure respected. A mid-stream
// failure ends the stream with one error event in the client's format (upstreams §4.3, §4.4).
// A client that stops reading is cut after limits.clientStallMs (client-stall.ts), never waited on
// forever: the paused upstream body would otherwise hold its socket and the caller's slot for good.
import { GatewayError } from '../../errors/gateway-error.js';
import { guardFlush, waitForDrain } from './client-stall.js';
import { sendRateLimit } from './send-body.js';
import { ClientGoneError } from '../../errors/client-gone-error.js';
import type { UpstreamStream } from '../../transport/upstream-http.js';
import type { RequestContext } from '../request-context.js';

/**
 * `data` = chat-completions style `data: {"error":…}`; `event` = Responses style `event: error`;
 * `image` = the image streams' `event: error` whose data carries the error object (docs/routes.md
 * "Streamed images": the openai SDK throws an APIError for any event whose data has `error`).
 */
export type SseErrorFormat = 'data' | 'event' | 'image';

/** What a relay may add to the upstream's bytes. */
export interface RelayOptions {
  /**
   * An SSE comment (`: keep-alive`) when nothing was written for this long, ms, between two events
   * only (never inside one): proxies that cut idle connections keep the stream.
   */
  keepAliveMs?: number;
  /**
   * Asked when the upstream's stream ended normally: a failure it returns is told as the stream's last
   * event (an image stream that ended without a completed image is no success).
   */
  endedWith?: () => GatewayError | undefined;
}

const KEEP_ALIVE = ': keep-alive\n\n';

/**
 * The keep-alive timer's period for a limit: a tenth under it, so a timer that fires late (a busy
 * event loop, the ramp of a burst) still keeps every quiet stretch within the limit.
 */
export function keepAliveCadence(keepAliveMs: number): number {
  // Node turns a period past 2^31 - 1 ms into 1 ms: a huge limit must not mean a comment every tick
  return Math.max(1, Math.floor(Math.min(keepAliveMs, MAX_TIMER_MS) * 0.9));
}

const MAX_TIMER_MS = 2 ** 31 - 1;

type OpenStream = Extract<UpstreamStream, { ok: true }>;

const SEQUENCE = /"sequence_number"\s*:\s*(\d+)/g;

/**
 * Resolves when the stream is over: with the GatewayError told to the client when it failed mid-way
 * (the route hands it to the error middleware, which logs it and records its code: the response
 * itself is already complete), undefined when it ended normally or the client left.
 */
export function relaySse(
  context: RequestContext,
  upstream: OpenStream,
  format: SseErrorFormat,
  onFailure?: (error: GatewayError) => void,
  /**
   * Sees each chunk as it came (what a stream returned, for the usage event); a Buffer it returns is
   * sent instead of the chunk (an image stream cut to the images charged, image-streams.ts).
   */
  onChunk?: (chunk: Buffer) => Buffer | void,
  options: RelayOptions = {},
): Promise<GatewayError | undefined> {
  const { res } = context;
  const body = upstream.body;
  // the credentials sent are cut from each chunk as it is taken (transport/secret-free-body.ts)
  const cut = upstream.cut;
  // a response already opened (an image stream's keep-alive came first) keeps its status and headers
  if (!res.headersSent) openEventStream(context, upstream.status, upstream.headers['content-type']);
  // Headers flushed in this turn of the event loop, but not alone when the first chunk came in the
  // same read as the upstream's headers: then the first write carries both, one syscall and one
  // packet, instead of the headers now and the chunk in a second write. The chunk waits in the
  // body's buffer: it flows on the ticks queued now, before the check phase.
  if (body.readableLength === 0 && !res.headersSent) setImmediate(flushWhenQuiet, res);

  let tail = '\n\n';
  let lastSequence = -1;
  let wrote = false;
  const keepAlive = options.keepAliveMs
    ? setInterval(
        () => {
          // between two events only, and only after a quiet interval; a paused body is waiting on the client
          if (!wrote && tail.endsWith('\n\n') && !body.isPaused() && !res.destroyed) res.write(KEEP_ALIVE);
          wrote = false;
        },
        // two ticks per period: a comment goes out after one to two quiet ticks, within the limit
        Math.max(1, Math.floor(keepAliveCadence(options.keepAliveMs) / 2)),
      )
    : undefined;
  keepAlive?.unref();
  return new Promise<GatewayError | undefined>((resolve) => {
    let failed: GatewayError | undefined;
    const finish = (): void => {
      if (keepAlive) clearInterval(keepAlive);
      body.off('data', onData);
      res.off('close', onClose);
      resolve(failed);
    };
    const relay = (clean: Buffer): void => {
      if (clean.length === 0) return;
      const chunk = onChunk?.(clean) ?? clean;
      if (chunk.length === 0) return;
      wrote = true;
      if (format === 'event') lastSequence = lastSequenceIn(chunk, lastSequence);
      tail = chunk.length >= 2 ? chunk.toString('latin1', chunk.length - 2) : tail.slice(-1) + chunk.toString('latin1');
      joinTheEnd(res);
      if (!res.write(chunk)) {
        body.pause();
        // a cut (stall) or a departed client ends in 'close', which onClose handles
        waitForDrain(context).then(
          () => body.resume(),
          () => {},
        );
      }
    };
    const onData = (received: Buffer): void => relay(cut ? cut.take(received) : received);
    const onClose = (): void => {
      // the client left: the route's abort signal has already cancelled the upstream request
      body.destroy();
      finish();
    };
    body.on('data', onData);
    res.once('close', onClose);
    body.once('end', () => {
      // what the cut held back (an end that might have begun a credential) goes out before the end
      const rest = cut?.end();
      if (rest && !res.destroyed) relay(rest);
      const failure = res.destroyed ? undefined : options.endedWith?.();
      if (failure) {
        failed = failure;
        onFailure?.(failure);
        res.end(errorEvent(failure, format, lastSequence + 1));
      } else res.end();
      guardFlush(context);
      finish();
    });
    body.once('error', (error: unknown) => {
      const failure = upstream.failure(error);
      if (!(failure instanceof ClientGoneError) && !res.destroyed) {
        const gatewayError = failure instanceof GatewayError ? failure : GatewayError.internal();
        failed = gatewayError;
        // before the end: the usage event goes out on 'close' and must carry the code
        onFailure?.(gatewayError);
        const separator = tail.endsWith('\n\n') ? '' : tail.endsWith('\n') ? '\n' : '\n\n';
        res.end(separator + errorEvent(gatewayError, format, lastSequence + 1));
        guardFlush(context);
      }
      finish();
    });
  });
}

/** The headers alone, when no chunk went out with them in the turn the stream opened. */
function flushWhenQuiet(res: RequestContext['res']): void {
  if (!res.headersSent && !res.destroyed) res.flushHeaders();
}

/** Status and headers of an event stream: no buffering, no compression (no-transform), no length. */
export function openEventStream(context: RequestContext, status: number, upstreamType?: string): void {
  const { res } = context;
  res.status(status);
  res.setHeader('content-type', upstreamType?.startsWith('text/event-stream') ? upstreamType : 'text/event-stream; charset=utf-8');
  // no-transform keeps compression middleware off the stream; X-Accel-Buffering keeps nginx from buffering
  res.setHeader('cache-control', 'no-cache, no-transform');
  res.setHeader('x-accel-buffering', 'no');
  res.removeHeader('content-length');
  // the caller's quotas after this request's charge, as every answer of a charged request carries them
  sendRateLimit(context);
  res.socket?.setNoDelay(true);
}

/**
 * Lets the stream's end go out in the same write as its last chunk. Node corks a chunked response
 * for each write and uncorks it on the next tick, which runs before the upstream body's 'end'
 * (queued when the same read carried the upstream's last chunk and its end): the last event went in
 * one write and the terminating chunk in a second one. One more cork level, released by a
 * microtask (after the tick queue, so after that 'end' and the res.end() it calls, which flushes
 * everything at once), joins them. No chunk waits: when no end follows, the microtask flushes in
 * the same turn of the event loop, right after the ticks already queued.
 */
function joinTheEnd(res: RequestContext['res']): void {
  const socket = res.socket;
  if (!socket || socket.destroyed) return;
  socket.cork();
  queueMicrotask(() => socket.uncork());
}

function lastSequenceIn(chunk: Buffer, previous: number): number {
  let last = previous;
  for (const match of chunk.toString('utf8').matchAll(SEQUENCE)) last = Number(match[1]);
  return last;
}

/** The error event of upstreams §4.3 (chat: the SDK raises on a data object with `error`) or §4.4. */
export function errorEvent(error: GatewayError, format: SseErrorFormat, sequenceNumber: number): string {
  if (format === 'image') return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { message: error.message, type: error.type, param: error.param ?? null, code: error.code } })}\n\n`;
  if (format === 'event') {
    const data = { type: 'error', code: error.code, message: error.message, param: error.param ?? null, sequence_number: sequenceNumber };
    return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
  }
  return `data: ${JSON.stringify({ error: { message: error.message, type: error.type, param: error.param ?? null, code: error.code } })}\n\n`;
}
