// Finding the host's `@opentelemetry/api` when the `telemetry` option does not pass it (docs/observability.md): without the package installed nothing is emitted.
import { createRequire } from 'node:module';
import type { OtelApi } from './otel-api.js';

/**
 * The installed `@opentelemetry/api`, loaded synchronously so the first request is already traced. A
 * CommonJS require works from both bundles (the API registers its globals under one process-wide
 * symbol, so the host's ESM copy and this one share the SDK it registers).
 */
export function loadInstalledApi(): OtelApi | undefined {
  try {
    const load = createRequire(typeof __filename === 'string' ? __filename : import.meta.url);
    return load('@opentelemetry/api') as OtelApi;
  } catch {
    return undefined;
  }
}
