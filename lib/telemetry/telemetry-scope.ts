// What the span parts of one Telemetry share (telemetry.ts): the host's API and its tracer, the guard
// around calls into the host's SDK, the metrics, the prompt opt-in and the upstreams' server addresses.
import type { Metrics } from './metrics.js';
import type { OtelApi, OtelTracer } from './otel-api.js';

export interface TelemetryScope {
  readonly api: OtelApi;
  readonly tracer: OtelTracer;
  /** The host opted in to prompt text on attempt spans. */
  readonly capturePrompts: boolean;
  readonly metrics: Metrics;
  /** Runs a call into the host's SDK; one that throws is reported once and answered with `fallback`. */
  guard<T>(fn: () => T, fallback: T): T;
  /** `server.address` of an upstream base URL. */
  hostOf(baseURL: string): string | undefined;
}

/** Base URLs kept at most before the cache is cleared. */
const MAX_HOSTS = 256;

/** `server.address` of upstreams: parsed once per base URL (a small, bounded cache of one Telemetry). */
export class ServerAddresses {
  private readonly hosts = new Map<string, string>();

  of(baseURL: string): string | undefined {
    let host = this.hosts.get(baseURL);
    if (host === undefined) {
      try {
        host = new URL(baseURL).hostname;
      } catch {
        host = '';
      }
      if (this.hosts.size >= MAX_HOSTS) this.hosts.clear();
      this.hosts.set(baseURL, host);
    }
    return host || undefined;
  }
}
