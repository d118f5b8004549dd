// The public option types that bound a request (docs/configuration.md): `limits`, `limits.compressedBodies` and the
// `imageModels` families. Types only, with nothing above the leaves: the leaves that apply the
// bounds (default-limits.ts, images/) import them from here. Resolution: gateway/options.ts.

/**
 * Body, image and upstream limits (`limits` option). Every key is optional there; the defaults are
 * `DEFAULT_LIMITS`. A value must be a positive integer.
 * @example limits: { jsonBodyBytes: 64 * 1024 * 1024, upstreamTimeoutMs: 600_000 }
 */
export interface GatewayLimits {
  /** Largest JSON body in bytes. Default 48 MiB: three 10 MB images as Data URLs (base64 adds a third) plus slack. @example limits: { jsonBodyBytes: 64 * 1024 * 1024 } */
  jsonBodyBytes: number;
  /** Largest decoded Data URL image in bytes. Default 10 MiB. @example limits: { dataUrlBytes: 20 * 1024 * 1024 } */
  dataUrlBytes: number;
  /** Most reference images in one request, whatever the family says. Default 3 (contract §8). @example limits: { imagesPerRequest: 2 } */
  imagesPerRequest: number;
  /** Largest uploaded file in a multipart edit, bytes. Default 10 MiB. @example limits: { uploadFileBytes: 20 * 1024 * 1024 } */
  uploadFileBytes: number;
  /** Largest result image the gateway downloads to answer `b64_json`, bytes. Default 32 MiB. @example limits: { downloadBytes: 64 * 1024 * 1024 } */
  downloadBytes: number;
  /** Deadline for one result-image download, ms. Default 60 s. @example limits: { downloadTimeoutMs: 120_000 } */
  downloadTimeoutMs: number;
  /** Default whole-request upstream deadline, ms. Default 300 s (DashScope's own inner timeout is 298 s). @example limits: { upstreamTimeoutMs: 600_000 } */
  upstreamTimeoutMs: number;
  /** Largest upstream JSON response the gateway buffers, bytes. Default 16 MiB. @example limits: { upstreamResponseBytes: 32 * 1024 * 1024 } */
  upstreamResponseBytes: number;
  /**
   * Most object members and array items in one JSON body, counted together before it is parsed
   * (a 413 above). Default 100 000: far beyond any real chat or image request, while a body of
   * millions of tiny members (which would hold the event loop for seconds) is refused in
   * milliseconds. @example limits: { jsonMembers: 500_000 }
   */
  jsonMembers: number;
  /**
   * Largest part of a JSON body that goes through JSON.parse as text, bytes: everything but string
   * values of 64 KiB or more (Data URLs), which are decoded straight from the body's bytes. Parsing
   * costs the event loop ~10-15 ms per MB of small strings and builds several times their size in
   * objects, so this bounds what one request holds everyone else up for. Default 8 MiB (413 above).
   * @example limits: { jsonTextBytes: 16 * 1024 * 1024 }
   */
  jsonTextBytes: number;
  /**
   * Deadline for reading a whole request body (JSON or multipart), ms, counted from the first
   * read. A body still arriving then gets a 408 and the connection is closed. Default 60 s: a
   * 48 MiB body at 1 MB/s fits. @example limits: { bodyReadTimeoutMs: 120_000 }
   */
  bodyReadTimeoutMs: number;
  /**
   * Most requests one caller (`Caller.id`) may have in flight at once; one more is answered 429
   * `rate_limit_exceeded` with `Retry-After`, before its body is read. Default 64: a quarter of an
   * upstream's default pool, so no single tenant can hold every socket, and far above the
   * concurrency the upstreams themselves grant one account for image jobs. Raise it for a host that
   * sends all its own users through one key. @example limits: { inFlightPerCaller: 200 }
   */
  inFlightPerCaller: number;
  /** Most sockets open at once to one upstream origin (keep-alive pool). Default 256. @example limits: { upstreamSockets: 512 } */
  upstreamSockets: number;
  /**
   * Most requests waiting for a socket of one upstream origin while all `upstreamSockets` are busy;
   * one more fails at once with 503 `upstream_busy` (the upstream is not called) instead of queueing
   * without bound. Default 256: at most one more pool's worth waits, about one upstream round trip.
   * @example limits: { upstreamQueue: 64 }
   */
  upstreamQueue: number;
  /**
   * A client that has not taken the answer's next bytes (its socket stayed full) for this long, ms,
   * is cut: the response destroyed, the upstream request aborted, its in-flight slot and sockets
   * freed, a warning logged. Default 30 s: a client reading even a few KB/s is never cut, one that
   * stopped reading holds nothing for long. @example limits: { clientStallMs: 60_000 }
   */
  clientStallMs: number;
  /**
   * Longest quiet stretch of a streamed image answer (`stream: true` on the image routes), ms: an SSE
   * comment (`: keep-alive`) goes out when no event did for this long, so proxies and load balancers
   * that cut idle connections (often at 60 s) keep the stream while the image is made. Default 15 s.
   * @example limits: { streamKeepAliveMs: 5_000 }
   */
  streamKeepAliveMs: number;
}

/**
 * Compressed request bodies (`Content-Encoding: gzip`, `deflate`, `br`) on JSON routes, when the
 * `limits.compressedBodies` option allows them. The decoded size is bounded twice, so a small body cannot
 * inflate into a large one. Default (with `compressedBodies: true`): `DEFAULT_COMPRESSED_BODIES`.
 * @example compressedBodies: { maxDecodedBytes: 4 * 1024 * 1024, maxRatio: 20 }
 */
export interface CompressedBodiesOptions {
  /** Largest decoded body, bytes (never more than `limits.jsonBodyBytes`). Default 1 MiB. @example compressedBodies: { maxDecodedBytes: 4 * 1024 * 1024 } */
  maxDecodedBytes?: number;
  /**
   * Largest decoded/compressed size ratio; bodies under 64 KiB decoded are not held to it.
   * Default 20 (JSON compresses 3-10x; a bomb compresses 1000x and more).
   * @example compressedBodies: { maxRatio: 50 }
   */
  maxRatio?: number;
}

/**
 * One image model family of contract §1 (`imageModels` option): which model names it covers and what a
 * request may hold. Default table: `DEFAULT_IMAGE_MODELS` (the spec's families).
 * @example imageModels: [...DEFAULT_IMAGE_MODELS, { pattern: 'my-image-*', minImages: 0, maxImages: 2, maxN: 4 }]
 */
export interface ImageModelFamily {
  /** Model name, or a prefix ending in `*` (contract §1: "a trailing * means any name that starts with that text"). No default. @example pattern: 'x-image-edit*' */
  pattern: string;
  /** Fewest reference images (0 for text-to-image capable families). No default. @example minImages: 1 */
  minImages: number;
  /** Most reference images (0 for text-to-image only). No default. @example maxImages: 3 */
  maxImages: number;
  /** Largest `parameters.n`. No default. @example maxN: 6 */
  maxN: number;
}
