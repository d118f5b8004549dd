// What the router builds once and hands to every route and use case: resolved options, the one
// upstream HTTP module and the compiled image rules. They read these; they create nothing per process.
import type { UpstreamHttp } from '../transport/upstream-http.js';
import type { ImageRequestRules } from '../images/image-request.js';
import type { ResolvedOptions } from './resolve-options.js';
import type { Quotas } from './tenancy/quotas.js';

export interface GatewayDeps {
  options: ResolvedOptions;
  http: UpstreamHttp;
  imageRules: ImageRequestRules;
  /** Per-caller quotas (options.quotas); charges nothing when none are configured. */
  quotas: Quotas;
}
