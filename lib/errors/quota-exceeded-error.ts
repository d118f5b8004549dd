// The 429 of a quota (docs/tenancy-and-billing.md): the contract §2.5 object with `rate_limit_exceeded`,
// plus what the error middleware turns into the IETF RateLimit-Policy and RateLimit header fields
// (draft-ietf-httpapi-ratelimit-headers-10: `"name";q=<quota>;w=<window s>` and `"name";r=<remaining>;t=<reset s>`).
import { ERROR_CODES } from './error-codes.js';
import { GatewayError } from './gateway-error.js';

export interface RateLimitFields {
  /** The policy's name, e.g. `images`. */
  name: string;
  /** The quota in the policy's units. */
  quota: number;
  /** The window in seconds (absent for a concurrency limit, which has none). */
  windowSeconds?: number;
  /** What is left now. */
  remaining: number;
  /** Seconds until some of the quota is available again. */
  resetSeconds: number;
}

export class QuotaExceededError extends GatewayError {
  readonly rateLimit: RateLimitFields;

  constructor(message: string, rateLimit: RateLimitFields) {
    super({ status: 429, code: ERROR_CODES.rateLimitExceeded, message, retryAfterSeconds: Math.max(1, rateLimit.resetSeconds) });
    this.name = 'QuotaExceededError';
    this.rateLimit = rateLimit;
  }

  /** `RateLimit-Policy` and `RateLimit` header values of the limit that refused. */
  headers(): { policy: string; limit: string } {
    return rateLimitHeaders([this.rateLimit]);
  }
}

/**
 * `RateLimit-Policy` and `RateLimit` header values (draft-ietf-httpapi-ratelimit-headers-10 §3, §4):
 * one list member per policy, e.g. `"requests";q=60;w=60, "images";q=20;w=60` and
 * `"requests";r=59;t=60, "images";r=16;t=60`.
 */
export function rateLimitHeaders(fields: readonly RateLimitFields[]): { policy: string; limit: string } {
  return {
    policy: fields.map(({ name, quota, windowSeconds }) => `"${name}";q=${quota}${windowSeconds !== undefined ? `;w=${windowSeconds}` : ''}`).join(', '),
    limit: fields.map(({ name, remaining, resetSeconds }) => `"${name}";r=${Math.max(0, remaining)};t=${Math.max(0, resetSeconds)}`).join(', '),
  };
}
