// The parsed request URLs of one UpstreamHttp (upstream-http.ts): most calls go to the same few
// endpoints, and parsing one costs a URL object and its options per call (docs/benchmarks.md).
// Bounded: cleared when full. Kept by the instance, never shared between routers.
export interface Target {
  origin: string;
  /** Path and query, as the request line carries them. */
  path: string;
  /** Basic credentials from the URL's userinfo (what node:http made of `auth`). */
  authorization?: string;
}

/** Targets kept at most before the cache is cleared. */
const MAX_TARGETS = 256;

export class RequestTargets {
  private readonly targets = new Map<string, Target>();

  /** The origin, path and userinfo credentials of `href`, parsed once while it stays cached. */
  of(href: string): Target {
    let target = this.targets.get(href);
    if (!target) {
      const url = new URL(href);
      const auth = url.username || url.password ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
      target = { origin: url.origin, path: `${url.pathname}${url.search}`, ...(auth ? { authorization: `Basic ${Buffer.from(auth).toString('base64')}` } : {}) };
      if (this.targets.size >= MAX_TARGETS) this.targets.clear();
      this.targets.set(href, target);
    }
    return target;
  }
}
