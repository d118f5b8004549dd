// Public types shared by the options, the routes and the adapters (design.md, "Public contract").
import type { Request } from 'express';

/** Who is calling. `id` names the tenant: tasks and assets belong to it. Hosts may add fields. */
export interface Caller {
  id: string;
  [extra: string]: unknown;
}

/** Checks a bearer key. Return the caller, or null/undefined for an unknown or deactivated key. */
export type VerifyKey = (key: string, req: Request) => Caller | null | undefined | Promise<Caller | null | undefined>;

/** The endpoint a request is for: a closed union, so resolvers can switch on it exhaustively. */
export type RouteName =
  | 'images.generations'
  | 'images.edits'
  | 'chat.completions'
  | 'responses'
  | 'video.tasks'
  | 'assets'
  | 'images.native';

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
  req?: Request;
}

/**
 * Where a model goes. Return null/undefined for a model this caller may not use (404), one upstream,
 * or a list tried in order when one fails before answering (connection error, 429, 5xx).
 */
export type ResolveUpstream = (
  input: ResolveUpstreamInput,
) => Upstream | readonly Upstream[] | null | undefined | Promise<Upstream | readonly Upstream[] | null | undefined>;

/** One finished request, for metering and billing. */
export interface UsageEvent {
  caller: Caller;
  route: RouteName;
  model: string;
  provider?: ProviderName;
  /** Images returned to the caller (image routes), 0 otherwise. */
  images: number;
  /** HTTP status sent to the caller. */
  status: number;
  latencyMs: number;
  /** The upstream's request id, when it gave one. */
  upstreamRequestId?: string;
}

export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** One image model family of spec §1: which model names it covers and what a request may hold. */
export interface ImageModelFamily {
  /** Model name, or a prefix ending in `*` (spec §1: "a trailing * means any name that starts with that text"). */
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
  /** Most reference images in one request, whatever the family says. Default 3 (spec §8). */
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
}

/** Callback delivery for video tasks (spec §6). */
export interface CallbackOptions {
  /** Standard Webhooks secret (`whsec_…`): every delivery is signed. Default: unsigned. */
  signingSecret?: string;
  /** Attempts per task state before giving up. Default 8. */
  maxAttempts?: number;
  /** Development and tests only: http and loopback/private callback targets. Default false. */
  allowLocal?: boolean;
  /** Timeout of one delivery attempt, ms. Default 10 s. */
  timeoutMs?: number;
  /** First retry delay, ms; doubled each retry, with jitter. Default 2 s. */
  retryBaseMs?: number;
  /** Longest retry delay, ms. Default 5 min. */
  retryMaxMs?: number;
  /**
   * Delays between polls of a task with a callback, ms; the last one repeats. Default
   * [60 s, 45 s, 30 s, 20 s, 15 s]: the first query a minute after submission, intervals shortened
   * gradually, never below 15 s (spec §8: no needless high-frequency polling).
   */
  pollIntervalsMs?: readonly number[];
  /** Stop following a task that has not ended after this long, ms. Default 48 h (Ark's default expiry). */
  maxFollowMs?: number;
}
