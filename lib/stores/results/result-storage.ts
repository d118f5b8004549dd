// The ResultStorage interface (docs/architecture.md "Long-lived work", contract §2.4 note "durable results"): where the gateway
// re-hosts generated images and videos so the URLs it answers outlive the upstream's 24-hour links.
// Small on purpose: put a stream, sign a readable URL for a key, delete. Two implementations ship
// (local-result-storage.ts for one machine, s3-result-storage.ts for any S3-protocol service); a
// host may write its own against this interface.
import type { Readable } from 'node:stream';

export interface PutInfo {
  /** The sniffed MIME type (`image/png`, `video/mp4`, …), never the upstream's Content-Type. */
  contentType: string;
  /** Aborted when the gateway gives up on this put (storageTimeoutMs): stop writing and reject. */
  signal: AbortSignal;
}

export interface UrlContext {
  /**
   * The gateway's own absolute base URL as the current request reached it (`https://host/mount`),
   * or the one recorded when a video task was created. Only stores that serve their objects
   * through the router (localResultStorage without `publicBaseUrl`) need it.
   */
  requestBase?: string;
}

/** A stored object as the router's result route serves it (localResultStorage only). */
export interface ServedResult {
  body: Readable;
  contentType: string;
  size: number;
  /**
   * Optional: the bytes from `start` to `end` (inclusive) as a fresh stream, so the route answers a
   * `Range` request with 206 (browsers' video players seek with it; Safari plays nothing without it).
   */
  slice?: (start: number, end: number) => Readable;
}

/** The answer of a signed read: the object, or why not (both map to the contract §2.5 error object). */
export type ReadOutcome = { ok: true; result: ServedResult } | { ok: false; reason: 'not_found' | 'expired' };

export interface ResultStorage {
  /**
   * Stores `body` under `key` and resolves with the bytes written once the object is durable.
   * Rejects (or rejects when `info.signal` aborts) when it could not: the gateway then falls back
   * or fails as `storage.onFailure` says. Must consume or destroy `body`.
   */
  put(key: string, body: Readable, info: PutInfo): Promise<number>;
  /** A URL anyone can GET the object at for a while (presigned, HMAC-signed, or a public CDN URL). */
  url(key: string, context: UrlContext): Promise<string>;
  /** Deletes one object; a missing object is not an error. */
  delete(key: string): Promise<void>;
  /** Deletes every object whose key starts with `prefix` (a tenant's results); resolves with how many. */
  deletePrefix(prefix: string): Promise<number>;
  /**
   * Optional: the router serves this store's objects itself at `GET /v1/results/<key>` with these
   * query parameters (localResultStorage). Stores with their own HTTP endpoint leave it out.
   */
  read?(key: string, query: Record<string, unknown>): Promise<ReadOutcome>;
  /** Optional: stops the store's timers (retention sweeps); called by `router.close()`. */
  close?(): Promise<void>;
}
