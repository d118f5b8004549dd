// Public types shared by the options, the routes and the adapters (docs/architecture.md, "Public contract").
// express's Request under a name of its own, apart from Node's global (fetch) one (scripts/build.ts)
import type { Request as ExpressRequest } from 'express';

/** Who is calling. `id` names the tenant: tasks and assets belong to it. Hosts may add fields. */
export interface Caller {
  id: string;
  [extra: string]: unknown;
}

/** Checks a bearer key. Return the caller, or null/undefined for an unknown or deactivated key. */
export type VerifyKey = (key: string, req: ExpressRequest) => Caller | null | undefined | Promise<Caller | null | undefined>;

/** The endpoint a request is for: a closed union, so resolvers can switch on it exhaustively. */
export type RouteName = 'images.generations' | 'images.edits' | 'chat.completions' | 'responses' | 'video.tasks' | 'assets' | 'images.native';

export type ProviderName = 'dashscope' | 'ark' | 'openai';

/** Where one request goes. Keys are used for the call only: never stored, never logged. */
export interface Upstream {
  provider: ProviderName;
  /**
   * Each vendor SDK's own base, the adapter appends its paths:
   * dashscope `https://dashscope-intl.aliyuncs.com/api/v1`, ark `https://ark.cn-beijing.volces.com/api/v3`,
   * openai `https://api.openai.com/v1`.
   */
  baseURL: string;
  /** Bearer key sent upstream. */
  apiKey?: string;
  /** Upstream model name when it differs from the caller-facing one. */
  model?: string;
  /** Whole-request deadline in ms. Default: `limits.upstreamTimeoutMs` (image jobs are slow). */
  timeoutMs?: number;
  /** Extra headers sent upstream (for example `X-DashScope-DataInspection`). */
  headers?: Record<string, string>;
  /** Volcengine OpenAPI credentials (route `assets` only: AK/SK-signed, not Bearer). */
  accessKeyId?: string;
  secretAccessKey?: string;
  region?: string;
}

export interface ResolveUpstreamInput {
  model: string;
  route: RouteName;
  caller: Caller;
  /** The request being served; absent for background work (task polls behind callbacks). */
  req?: ExpressRequest;
}

/**
 * Where a model goes. Return null/undefined for a model this caller may not use (404), one upstream,
 * or a list tried in order when one fails before answering (connection error, 429, 5xx).
 */
export type ResolveUpstream = (input: ResolveUpstreamInput) => Upstream | readonly Upstream[] | null | undefined | Promise<Upstream | readonly Upstream[] | null | undefined>;

/**
 * One billable outcome, for metering and billing (README "Tenant controls", the billing contract): one
 * per finished request, and one more per video task when it reaches a terminal state. Fields report
 * what the upstream returned, not what was asked. An Idempotency-Key replay emits no event.
 */
export interface UsageEvent {
  caller: Caller;
  route: RouteName;
  model: string;
  provider?: ProviderName;
  /** Images returned to the caller (image routes), 0 otherwise. */
  images: number;
  /**
   * Images the upstream answered with, on image routes the gateway translates (DashScope). More than
   * `images` when the upstream returned more than the request allowed (`parameters.n`, at most the
   * family's `maxN`): the extra ones were dropped, neither downloaded nor returned.
   */
  upstreamImages?: number;
  /** HTTP status sent to the caller. */
  status: number;
  latencyMs: number;
  /** The upstream's request id, when it gave one. */
  upstreamRequestId?: string;
  /**
   * The `error.code` the caller got (contract §2.5), when the request was answered with an error. On
   * a task's terminal event: Ark's `error.code` of a failed task.
   */
  errorCode?: string;
  /** Bytes written to result storage for this request (`storage` option, durable results); absent when nothing was stored. */
  storedBytes?: number;
  /** `WxH` of each returned image, in order, when the upstream said (Ark `data[].size`, OpenAI gpt-image `size`). */
  imageSizes?: string[];
  /** The upstream's own usage counters, numbers only, as it gave them (`total_tokens`, `generated_images`, ...). */
  upstreamUsage?: Record<string, number>;
  /**
   * Tokens as the upstream reported them (chat completions and responses, streamed ones from their
   * last event): `input`, `output`, and `cached` and `reasoning` where it said.
   */
  tokens?: { input: number; output: number; cached?: number; reasoning?: number };
  /**
   * Paid upstream work the caller did not receive: the request reached an upstream that may have
   * started generating, and then failed or lost its client. `images` is how many the upstream made
   * (`known: true`, it answered them) or may have made (`known: false`: the number asked, the most
   * it could be). Bill or absorb them; a retry that received kept work has no event of its own.
   */
  undelivered?: { images: number; known: boolean };
  /**
   * Only on the one event of a video task's terminal state (`succeeded`, `failed`, `expired`, ...),
   * emitted once whichever instance saw it (a query or the callback poller). `latencyMs` is then the
   * time since the task was created. Bill video on these events, not on the create request's.
   */
  task?: { id: string; status: string };
  /** On a succeeded task's terminal event: what Ark reports it generated. */
  video?: { seconds?: number; resolution?: string };
}

/**
 * Where the gateway logs: pino's calling convention (`logger.warn(fields, message)`), so a pino (or
 * bunyan-style) logger is passed as it is and the fields arrive as structured fields. `child`, when
 * present, is called once with `{ component: 'express-image-gateway' }`. Never given a key or image bytes.
 * @example logger: pino()
 */
export interface Logger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  child?(bindings: Record<string, unknown>): Logger;
}

/** One image model family of contract §1: which model names it covers and what a request may hold. */
export interface ImageModelFamily {
  /** Model name, or a prefix ending in `*` (contract §1: "a trailing * means any name that starts with that text"). */
  pattern: string;
  /** Fewest reference images (0 for text-to-image capable families). */
  minImages: number;
  /** Most reference images (0 for text-to-image only). */
  maxImages: number;
  /** Largest `parameters.n`. */
  maxN: number;
}

export interface GatewayLimits {
  /** Largest JSON body in bytes. Default 48 MiB: three 10 MB images as Data URLs (base64 adds a third) plus slack. */
  jsonBodyBytes: number;
  /** Largest decoded Data URL image in bytes. Default 10 MiB. */
  dataUrlBytes: number;
  /** Most reference images in one request, whatever the family says. Default 3 (contract §8). */
  imagesPerRequest: number;
  /** Largest uploaded file in a multipart edit, bytes. Default 10 MiB. */
  uploadFileBytes: number;
  /** Largest result image the gateway downloads to answer `b64_json`, bytes. Default 32 MiB. */
  downloadBytes: number;
  /** Deadline for one result-image download, ms. Default 60 s. */
  downloadTimeoutMs: number;
  /** Default whole-request upstream deadline, ms. Default 300 s (DashScope's own inner timeout is 298 s). */
  upstreamTimeoutMs: number;
  /** Largest upstream JSON response the gateway buffers, bytes. Default 16 MiB. */
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
}

/**
 * Compressed request bodies (`Content-Encoding: gzip`, `deflate`, `br`) on JSON routes, when the
 * `compressedBodies` option allows them. The decoded size is bounded twice, so a small body cannot
 * inflate into a large one.
 */
export interface CompressedBodiesOptions {
  /** Largest decoded body, bytes (never more than `limits.jsonBodyBytes`). Default 1 MiB. */
  maxDecodedBytes?: number;
  /**
   * Largest decoded/compressed size ratio; bodies under 64 KiB decoded are not held to it.
   * Default 20 (JSON compresses 3-10x; a bomb compresses 1000x and more).
   */
  maxRatio?: number;
}

/** Callback delivery for video tasks (contract §6). */
export interface CallbackOptions {
  /** Standard Webhooks secret (`whsec_…`): every delivery is signed. Default: unsigned. */
  signingSecret?: string;
  /** Attempts per task state before giving up. Default 8. */
  maxAttempts?: number;
  /** Development and tests only: http and loopback/private callback targets. Default false. */
  allowLocal?: boolean;
  /** Timeout of one delivery attempt, ms. Default 10 s. */
  timeoutMs?: number;
  /**
   * First retry delay, ms; doubled each retry, with jitter. Default 2 s. Used by callback deliveries
   * and by task polls that could not be made (store, resolver or Ark unavailable).
   */
  retryBaseMs?: number;
  /** Longest retry delay, ms. Default 5 min. */
  retryMaxMs?: number;
  /**
   * Delays between polls of a task with a callback, ms; the last one repeats. Default
   * `[60 s, 45 s, 30 s, 20 s, 15 s]`: the first query a minute after submission, intervals shortened
   * gradually, never below 15 s (contract §8: no needless high-frequency polling).
   */
  pollIntervalsMs?: readonly number[];
  /**
   * Stop following a task that has not ended after this long, ms. Default 48 h (Ark's default expiry).
   * Also bounds the retries of a poll that keeps failing: about `maxFollowMs / retryMaxMs` attempts
   * (at least `maxAttempts`), then following ends with an error in the log.
   */
  maxFollowMs?: number;
  /**
   * More callback hosts to refuse as temporary public proxies (contract §6.3), beside the built-in
   * `TEMPORARY_PROXY_HOSTS` (ngrok, Cloudflare quick tunnels, localtunnel, webhook.site, ...). Each
   * entry is a bare host name and covers its subdomains. Default `[]`.
   * @example blockedHosts: ['tunnels.example-vendor.net']
   */
  blockedHosts?: readonly string[];
  /**
   * Hosts (with their subdomains) exempt from the temporary-proxy list: for an operator whose own
   * receiver lives on such a service, e.g. a reserved ngrok domain. Default `[]`.
   * @example allowedHosts: ['acme.ngrok.app']
   */
  allowedHosts?: readonly string[];
}

/** One entry a `listModels` hook may return beside plain names (OpenAI `Model` fields). */
export interface ListedModel {
  id: string;
  /** Default `'gateway'`. */
  owned_by?: string;
  /** Unix seconds. Default 0. */
  created?: number;
}

/** Names the models `GET /v1/models` lists for a caller. */
export type ListModels = (caller: Caller) => readonly (string | ListedModel)[] | Promise<readonly (string | ListedModel)[]>;
