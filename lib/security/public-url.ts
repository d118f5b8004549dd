// The one URL check for every URL the gateway did not write itself: media URLs callers send (the
// upstream fetches them from the public internet, contract §4.1, §7) and result URLs upstreams answer
// (the gateway fetches those for b64_json). One set of rules, so no route is the soft spot:
// http(s) only; no userinfo and no backslash (WHATWG URL and other parsers disagree about the host
// of `https://evil.com\@127.0.0.1/`, and the upstream runs one of the others); no whitespace or
// control characters (WHATWG silently strips them); a public host by the one classifier. What is
// forwarded is the normalized `href`, so the upstream parses exactly the URL that was checked.
import { lookup as dnsLookup } from 'node:dns/promises';
import { GatewayError } from '../errors/gateway-error.js';
import { isNonPublicHost, isPublicAddress } from './public-host.js';

export interface PublicUrlPolicy {
  /** Operator opt-in for development: loopback/private hosts pass (the other rules still apply). */
  allowPrivate: boolean;
}

type PublicUrlProblem = 'not_url' | 'scheme' | 'too_long' | 'characters' | 'backslash' | 'credentials' | 'not_public';

export type PublicUrlCheck = { ok: true; url: URL } | { ok: false; problem: PublicUrlProblem; scheme?: string };

/** Signed object-storage URLs run long; anything past this is not a media link. */
const MAX_URL_LENGTH = 8192;

// ASCII whitespace and C0/DEL controls, which WHATWG URL strips or percent-encodes silently
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f]/;

/** The rules without DNS: what a caller-supplied URL must be before anything is sent anywhere. */
export function checkPublicUrl(value: unknown, policy: PublicUrlPolicy): PublicUrlCheck {
  if (typeof value !== 'string' || value === '') return { ok: false, problem: 'not_url' };
  if (value.length > MAX_URL_LENGTH) return { ok: false, problem: 'too_long' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, problem: 'not_url' };
  }
  if (CONTROL_OR_SPACE.test(value)) return { ok: false, problem: 'characters' };
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, problem: 'scheme', scheme: url.protocol };
  if (value.includes('\\')) return { ok: false, problem: 'backslash' };
  // `https://@host/` parses with an empty username, so the raw authority is checked for '@' too
  if (url.username !== '' || url.password !== '' || authorityOf(value).includes('@')) return { ok: false, problem: 'credentials' };
  if (!policy.allowPrivate && isNonPublicHost(url.hostname)) return { ok: false, problem: 'not_public' };
  return { ok: true, url };
}

/** How a route names its URL field's problems (the rules are shared, the hints are the route's). */
export interface UrlWording {
  /** After the field path when the value is no http(s) URL; `scheme` is set when it has another one. */
  notHttp(scheme: string | undefined): string;
  /** After the field path when the host is loopback, private, link-local or metadata. */
  notPublic: string;
}

const MEDIA_URL_WORDING: UrlWording = {
  notHttp: () => 'must be a public http(s) URL',
  notPublic: 'names a loopback, private or link-local host; the URL must be publicly reachable',
};

/**
 * Checks a caller-supplied URL and answers its normalized form, the one to forward; a refused URL
 * is a 400 naming the field, before any upstream is called.
 */
export function requirePublicUrl(value: unknown, path: string, policy: PublicUrlPolicy, wording: UrlWording = MEDIA_URL_WORDING): string {
  const check = checkPublicUrl(value, policy);
  if (check.ok) return check.url.href;
  throw GatewayError.invalidRequest(`${path} ${describeProblem(check, wording)}`, path);
}

export function describeProblem(check: Extract<PublicUrlCheck, { ok: false }>, wording: UrlWording = MEDIA_URL_WORDING): string {
  switch (check.problem) {
    case 'not_url':
      return wording.notHttp(undefined);
    case 'scheme':
      return wording.notHttp(check.scheme);
    case 'too_long':
      return `must be at most ${MAX_URL_LENGTH} characters`;
    case 'characters':
      return 'must not contain spaces or control characters (percent-encode them)';
    case 'backslash':
      return "must not contain a backslash: parsers disagree on the host of such a URL (use '/' or percent-encode it)";
    case 'credentials':
      return 'must not carry credentials (user:password@): the URL must be publicly reachable without login';
    case 'not_public':
      return wording.notPublic;
  }
}

export interface PinnedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * Resolves a host the gateway itself is about to connect to and checks every address it has (one
 * non-public address is enough to refuse: a client may be sent to any of them). Answers the address
 * to pin the connection to, so DNS cannot answer differently between check and connect.
 */
export async function resolvePublicAddress(hostname: string, policy: PublicUrlPolicy, resolve: Resolver = systemResolver): Promise<PinnedAddress> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const addresses = await resolve(host);
  if (addresses.length === 0) throw new NonPublicAddressError(`no address for ${host}`, false);
  if (!policy.allowPrivate) {
    const inside = addresses.find((entry) => !isPublicAddress(entry.address));
    if (inside) throw new NonPublicAddressError(`${host} resolves to a non-public address`, true);
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

export class NonPublicAddressError extends Error {
  /** True when the host resolved inside; false when it did not resolve at all. */
  readonly inside: boolean;
  constructor(message: string, inside: boolean) {
    super(message);
    this.name = 'NonPublicAddressError';
    this.inside = inside;
  }
}

/** The raw text between `scheme://` and the path, query or fragment. */
function authorityOf(value: string): string {
  const start = value.indexOf('//');
  if (start < 0) return '';
  const rest = value.slice(start + 2);
  const end = rest.search(/[/?#]/);
  return end < 0 ? rest : rest.slice(0, end);
}
