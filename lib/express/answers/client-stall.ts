// Slow readers (limits.clientStallMs): every place the gateway waits for a client to take more of an
// answer waits here, and a client that has taken nothing for clientStallMs is cut. Without a bound,
// a client that stops reading holds its response, its in-flight slot and (for a stream) an upstream
// socket for as long as it keeps the connection open, which is forever (Node sets no write timeout).
//
// Cutting destroys the response: 'close' follows, which aborts the upstream request (route state),
// frees the caller's slot (caller-in-flight) and the socket; the write sites see ClientGoneError.
import { ClientGoneError } from '../../errors/client-gone-error.js';
import type { RequestContext } from '../request-context.js';

/**
 * Waits for 'drain' after a write that returned false. Resolves when the client made room; rejects
 * with ClientGoneError when the client left, or when it took nothing for the stall limit (then the
 * response is cut here).
 */
export function waitForDrain(context: RequestContext): Promise<void> {
  const { res } = context;
  if (res.destroyed) return Promise.reject(new ClientGoneError());
  return new Promise<void>((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
    };
    const onDrain = (): void => {
      done();
      resolve();
    };
    const onClose = (): void => {
      done();
      if (res.writableFinished) resolve();
      else reject(new ClientGoneError());
    };
    const timer = setTimeout(() => {
      done();
      cut(context);
      reject(new ClientGoneError());
    }, context.stallMs);
    timer.unref();
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

/**
 * Call right after res.end(): when bytes are still queued for a client that stopped reading, the
 * response is cut if they are not taken within the stall limit. Nothing is armed when the kernel
 * took the whole answer at once (the usual case), so small answers cost no timer.
 */
export function guardFlush(context: RequestContext): void {
  const { res } = context;
  if (res.destroyed || res.writableFinished || (res.socket?.writableLength ?? 0) === 0) return;
  const timer = setTimeout(() => {
    res.off('finish', done);
    res.off('close', done);
    if (!res.writableFinished) cut(context);
  }, context.stallMs);
  timer.unref();
  const done = (): void => {
    clearTimeout(timer);
    res.off('finish', done);
    res.off('close', done);
  };
  res.once('finish', done);
  res.once('close', done);
}

function cut(context: RequestContext): void {
  const { res } = context;
  if (res.destroyed) return;
  context.logger.warn({ requestId: context.requestId, caller: context.caller?.id, route: context.route, stallMs: context.stallMs }, 'the client stopped reading; response cut');
  res.destroy();
}
