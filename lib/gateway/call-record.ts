// What a use case reports about the call it made, for the usage event of the request: the model and
// provider that served it, how many images, the upstream's request id. The inbound side keeps one per
// request (express/route-state.ts) and hands it in; the signal fires when the client goes away.
import type { RateLimitFields } from '../errors/quota-exceeded-error.js';
import type { ProviderName } from '../types.js';
import type { CancelSignal } from '../transport/upstream-http.js';

export interface CallRecord {
  model: string;
  provider?: ProviderName;
  images: number;
  /** What the upstream answered with, before the gateway kept at most the images the request allowed. */
  upstreamImages?: number;
  upstreamRequestId?: string;
  /** Bytes written to result storage for this request (durable results). */
  storedBytes?: number;
  /** `WxH` of each image returned, when the upstream said (UsageEvent.imageSizes). */
  imageSizes?: string[];
  /** The upstream's usage counters, when it gave them (UsageEvent.upstreamUsage). */
  upstreamUsage?: Record<string, number>;
  /** The caller's quotas after this request's charge: sent as RateLimit headers with a 2xx answer. */
  rateLimit?: readonly RateLimitFields[];
  /** Aborted when the client goes away before the response is finished (an AbortSignal, made on first use: storage needs one). */
  readonly signal: AbortSignal;
  /**
   * The same event for upstream calls, without an AbortController per request: most requests finish
   * with their client still there, and a controller plus its listener cost measurable time (issue 15).
   */
  readonly clientGone: CancelSignal;
}
