// Slow readers (limits.clientStallMs): every place the gateway waits for a client to take more of an
// answer waits here, and a client that has taken nothing for clientStallMs is cut. Without a bound,
// a client that stops reading holds its response, its in-flight slot and (for a stream) an upstream
// socket for as long as it keeps the connection open, which is forever (Node sets no write timeout).
//
// Cutting destroys the response: 'close' follows, which aborts the upstream request (route state),
// frees the caller's slot (caller-in-flight) and the socket; the write sites see ClientGoneError.
import type { RequestHandler, Response } from 'express';
import { DEFAULT_LIMITS } from '../default-limits.js';
import type { Logger } from '../options/host-hooks.js';
import { ClientGoneError } from '../errors/client-gone-error.js';
import { gatewayCaller } from './authenticate.js';
import { findRouteState } from './route-state.js';

interface StallPolicy {
  stallMs: number;
  logger?: Logger;
}

// Per response, set by the middleware: the write helpers (sendBody, the SSE relay, the b64_json
// writer) are called from many places that need not pass the router's options down.
const policies = new WeakMap<Response, StallPolicy>();

/** Middleware: the responses of this router are cut after `stallMs` without progress, and logged. */
export function watchClientStall(stallMs: number, logger: Logger): RequestHandler {
  const policy: StallPolicy = { stallMs, logger };
  return (_req, res, next) => {
    policies.set(res, policy);
    next();
  };
}

/**
 * Waits for 'drain' after a write that returned false. Resolves when the client made room; rejects
 * with ClientGoneError when the client left, or when it took nothing for the stall limit (then the
 * response is cut here).
 */
export function waitForDrain(res: Response): Promise<void> {
  if (res.destroyed) return Promise.reject(new ClientGoneError());
  const policy = policyOf(res);
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
      cut(res, policy);
      reject(new ClientGoneError());
    }, policy.stallMs);
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
export function guardFlush(res: Response): void {
  if (res.destroyed || res.writableFinished || (res.socket?.writableLength ?? 0) === 0) return;
  const policy = policyOf(res);
  const timer = setTimeout(() => {
    res.off('finish', done);
    res.off('close', done);
    if (!res.writableFinished) cut(res, policy);
  }, policy.stallMs);
  timer.unref();
  const done = (): void => {
    clearTimeout(timer);
    res.off('finish', done);
    res.off('close', done);
  };
  res.once('finish', done);
  res.once('close', done);
}

function policyOf(res: Response): StallPolicy {
  return policies.get(res) ?? { stallMs: DEFAULT_LIMITS.clientStallMs };
}

function cut(res: Response, policy: StallPolicy): void {
  if (res.destroyed) return;
  policy.logger?.warn({ caller: gatewayCaller(res)?.id, route: findRouteState(res)?.route, stallMs: policy.stallMs }, 'the client stopped reading; response cut');
  res.destroy();
}
