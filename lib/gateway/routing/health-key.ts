// The key of an upstream's health (docs/routing-and-health.md "Keys"): what fails together, i.e. the
// provider, base URL, credential, upstream model and route kind. The credential enters as a short
// hash, so neither the key string nor health() nor a log line ever holds the key itself.
import { createHash } from 'node:crypto';
import type { UpstreamIdentity } from '../../options/routing-options.js';
import type { RouteName, Upstream } from '../../types.js';

const ROUTE_KINDS: Readonly<Record<RouteName, UpstreamIdentity['route']>> = {
  'images.generations': 'images',
  'images.edits': 'images',
  'images.native': 'images',
  'video.tasks': 'video',
  'chat.completions': 'chat',
  responses: 'chat',
  assets: 'assets',
};

// a hash per credential, made once: sha256 is cheap but not free on every request of the hot path
const hashes = new Map<string, string>();
const MAX_HASHES = 4096;

/** 12 characters of the credential's sha256, or 'none'. */
function credentialHash(upstream: Upstream): string {
  const secret = upstream.apiKey ?? upstream.accessKeyId;
  if (!secret) return 'none';
  let hash = hashes.get(secret);
  if (hash === undefined) {
    // keys rotate: a full cache starts over rather than growing with every key ever seen
    if (hashes.size >= MAX_HASHES) hashes.clear();
    hash = createHash('sha256').update(secret).digest('base64url').slice(0, 12);
    hashes.set(secret, hash);
  }
  return hash;
}

/** The health key of `upstream` serving `model` on `route`, as one string (a Map key, a Redis hash field). */
export function healthKeyOf(upstream: Upstream, route: RouteName, model: string): string {
  return `${upstream.provider} ${upstream.baseURL} ${credentialHash(upstream)} ${upstream.model ?? model} ${ROUTE_KINDS[route]}`;
}

/** The key's parts, as health() and onUpstreamHealth tell them. */
export function identityOf(upstream: Upstream, route: RouteName, model: string): UpstreamIdentity {
  return { provider: upstream.provider, baseURL: upstream.baseURL, credential: credentialHash(upstream), model: upstream.model ?? model, route: ROUTE_KINDS[route] };
}
