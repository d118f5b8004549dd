// The gateway's own half-open trial (docs/routing-and-health.md "The trial"): where the vendor has a
// free read that tells health (OpenAI-compatible `GET /models`, Gemini's and Replicate's model reads),
// the trial after a cooldown is that read, made with the key of the upstream's last real request
// (held in memory only, never stored), so no paying caller carries it.
import type { GatewayLimits } from '../../options/request-limits.js';
import { capabilityOf } from '../../providers/registry.js';
import type { UpstreamHttp } from '../../transport/upstream-http.js';
import type { Upstream } from '../../types.js';

/** What routing asks of the vendors' free reads. */
export interface HealthReads {
  /** Whether `upstream`'s provider has a free read. */
  has(upstream: Upstream): boolean;
  /** The read: resolves when the upstream answered 2xx; rejects with the normalized failure otherwise. */
  read(upstream: Upstream, model: string): Promise<void>;
}

// a read that tells health is small and quick: a caller may be waiting on it, so it is bounded apart from the upstream's (long) image deadline
const READ_TIMEOUT_MS = 10_000;

/** The providers' free reads over the gateway's one HTTP module. */
export function healthReads(http: UpstreamHttp, limits: Readonly<GatewayLimits>): HealthReads {
  // nobody aborts a read: its own deadline ends it
  const signal = new AbortController().signal;
  return {
    has: (upstream) => capabilityOf(upstream, 'healthRead') !== undefined,
    read(upstream, model) {
      const read = capabilityOf(upstream, 'healthRead');
      if (!read) return Promise.resolve();
      const timeoutMs = Math.min(upstream.timeoutMs ?? limits.upstreamTimeoutMs, READ_TIMEOUT_MS);
      return Promise.resolve().then(() => read({ http, signal, limits }, { ...upstream, timeoutMs }, model));
    },
  };
}
