// The router's own deadline for reading a request body (limits.bodyReadTimeoutMs), JSON and
// multipart alike. A body that dribbles in (a byte now and then) would otherwise hold its buffers
// and its socket until Node's own requestTimeout (5 min), and that answer is not the error shape.
import type { Request, Response } from 'express';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';

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
