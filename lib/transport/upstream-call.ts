// What one upstream call is and what it answers: the types every part of the transport shares.
// Reached through upstream-http.ts, which re-exports them: the transport has one entry for its users.
// Nothing here names undici: these types reach the published declarations, and a host type-checks them.
import type { Readable } from 'node:stream';
import type { Resolver } from '../security/public-url.js';
import type { SecretCut } from './secret-free-body.js';

/**
 * What a call needs of a cancellation signal: an AbortSignal is one; a route's cheap client-gone watch
 * (express/request-context.ts) is another, so a request that finishes normally makes no AbortController.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface UpstreamRequest {
  /** Provider name, for error messages. */
  provider: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  /** A multipart form is a Readable with its own content type and length (form-body.ts). */
  body?: string | Buffer | Readable;
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
      /**
       * The credentials sent, to cut out of each chunk of `body` before it goes on
       * (transport/secret-free-body.ts): every reader of the body applies it. Undefined: nothing to cut.
       */
      cut?: SecretCut;
      /** What a mid-stream error means for the caller: timeout (idle), client gone, or upstream failure. */
      failure(error: unknown): Error;
    }
  | { ok: false; status: number; headers: Record<string, string | undefined>; body: Buffer };

/** The keep-alive pool per upstream origin (limits.upstreamSockets, limits.upstreamQueue). */
export interface UpstreamPool {
  /** Most sockets open at once to one origin. */
  sockets: number;
  /** Most requests waiting for a socket of one origin; one more fails at once with 503. */
  queue: number;
}

/** An answer once its status and headers are in: the body as it arrives, decoded. */
export interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  body: Readable;
}

/** What a call that reads the whole answer resolves with: the body read already, when it was not compressed. */
export type WholeAnswer = Answer | (Omit<Answer, 'body'> & { body: Buffer });
