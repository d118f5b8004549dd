// The rules of a result download (UpstreamHttp.download and downloadStream, contract §2.4 b64_json):
// the URL comes from the upstream, so it gets the rules of a caller's URL: http(s), no userinfo or
// backslash, and unless `allowPrivate`, only public addresses, checked after resolution and pinned.
import { GatewayError } from '../errors/gateway-error.js';
import { type Resolver, checkPublicUrl, describeProblem } from '../security/public-url.js';
import type { CancelSignal, UpstreamRequest } from './upstream-call.js';

export interface DownloadOptions {
  maxBytes: number;
  timeoutMs: number;
  signal?: CancelSignal;
  provider: string;
  /** Operator opt-in (`allow.privateResultUrls`): result hosts on loopback/private networks. */
  allowPrivate: boolean;
  /** DNS, replaceable in tests. */
  resolve?: Resolver;
  /** Request headers: the credentials a provider gives for its own result origin (video-tasks/video-task-results.ts). */
  headers?: Record<string, string>;
  /**
   * Redirects to follow (downloadStream only; default none). Each target passes the same URL rules,
   * and `headers` go only to the first URL's origin.
   */
  redirects?: number;
}

const RESULT_URL_WORDING = {
  notHttp: (scheme: string | undefined) => (scheme ? `must be an http(s) URL, not '${scheme}'` : 'must be an http(s) URL'),
  notPublic: 'names a loopback, private or link-local host, which the gateway does not connect to',
};

/** The GET of a result URL, public-only unless allowed; a URL the rules refuse throws a 502 that says why. */
export function resultDownloadCall(url: string, options: DownloadOptions): UpstreamRequest {
  const { allowPrivate, resolve, redirects: _redirects, ...limits } = options;
  const check = checkPublicUrl(url, { allowPrivate });
  if (!check.ok) {
    throw GatewayError.badUpstreamResponse(options.provider, `the result URL was refused: it ${describeProblem(check, RESULT_URL_WORDING)}`);
  }
  return { ...limits, method: 'GET', url: check.url.href, ...(allowPrivate ? {} : { publicOnly: { resolve } }) };
}
