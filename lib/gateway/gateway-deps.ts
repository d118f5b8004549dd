// What the router builds once and hands to every route: resolved options, the one upstream HTTP
// module and the compiled validators. Routes read these; they create nothing per process themselves.
import type { UpstreamHttp } from '../transport/upstream-http.js';
import type { ImageRequestRules } from '../images/image-request.js';
import type { ResolvedOptions } from './options.js';

export interface RouteDeps {
  options: ResolvedOptions;
  http: UpstreamHttp;
  imageRules: ImageRequestRules;
}
