// Where the gateway may POST callbacks (contract §6.3, §5.5): an https URL of a public host that is no
// temporary public proxy, with no credentials and never the caller's own API key in it. The name is
// checked when the task is created and the resolved addresses again at every delivery, and the
// delivery connects to exactly the address that was checked, so DNS cannot point it inside later
// (rebinding). The URL-shape rules (no backslash, userinfo, spaces or controls) are the shared ones
// of public-url.ts, so callbacks and media URLs cannot drift apart.
import { decodePercentRepeatedly } from './percent-decode.js';
import { type PublicUrlCheck, checkPublicUrl, describeProblem } from './public-url.js';

export interface CallbackUrlPolicy {
  /** Development and tests only: http and loopback/private targets are allowed. */
  allowLocal: boolean;
  /** Operator additions to TEMPORARY_PROXY_HOSTS: lower-case host names, each with its subdomains. */
  blockedHosts?: readonly string[];
  /** Hosts (with subdomains) exempt from the proxy list, e.g. the operator's own reserved ngrok domain. */
  allowedHosts?: readonly string[];
}

export type CallbackUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

const MAX_LENGTH = 2048;

/**
 * contract §6.3: "no temporary public proxies". Tunnel services (a laptop made reachable for an hour)
 * and request bins (anyone holding the link reads every delivery) are refused by suffix on label
 * boundaries: an entry covers the name itself and every subdomain. Compiled from the services'
 * own documentation and the domains their clients hand out (state of 2024/2025); keep it sorted
 * by kind, and extend it per deployment with `callbacks.blockedHosts`. Deliberately absent:
 * general platforms that also host production services (ts.net, vercel.app, herokuapp.com, ...),
 * where a suffix would refuse legitimate receivers.
 */
export const TEMPORARY_PROXY_HOSTS: readonly string[] = Object.freeze([
  // tunnels
  'ngrok.io',
  'ngrok.app',
  'ngrok.dev',
  'ngrok-free.app',
  'ngrok-free.dev',
  'ngrok.pizza', // ngrok
  'trycloudflare.com', // Cloudflare quick tunnels (cloudflared tunnel --url)
  'loca.lt',
  'localtunnel.me', // localtunnel
  'serveo.net',
  'serveousercontent.com', // serveo
  'localhost.run',
  'lhr.life',
  'lhr.rocks', // localhost.run
  'pagekite.me', // PageKite
  'telebit.io',
  'telebit.cloud', // Telebit
  'tunnelmole.net',
  'tunnelmole.com', // Tunnelmole
  'pinggy.io',
  'pinggy.link',
  'pinggy.online',
  'pinggy.net', // Pinggy
  'bore.pub', // bore
  'expose.dev',
  'sharedwithexpose.com', // Expose (Beyond Code)
  'loclx.io',
  'localxpose.io', // LocalXpose
  'zrok.io', // zrok public shares
  'devtunnels.ms', // Microsoft dev tunnels (VS Code port forwarding)
  'app.github.dev', // GitHub Codespaces forwarded ports
  'loophole.site', // Loophole
  'tunnelto.dev', // tunnelto
  'localtonet.com', // Localtonet
  'jprq.io',
  'jprq.site',
  'jprq.live', // jprq
  'pktriot.net', // Packetriot
  'openport.io', // Openport
  'portmap.io',
  'portmap.host', // Portmap.io
  'srv.us', // srv.us (ssh -R tunnels)
  'tunnel.pyjam.as', // pyjam.as WireGuard tunnels (pyjam.as itself is their site)
  'tuns.sh', // pico.sh tunnels
  'localto.net', // Localtonet's handed-out names
  'ply.gg', // playit.gg
  // request bins and webhook inspectors
  'webhook.site',
  'm.pipedream.net', // Pipedream RequestBin endpoints (pipedream.net itself is their site)
  'requestbin.com',
  'requestbin.net',
  'requestcatcher.com',
  'requestinspector.com',
  'requestrepo.com',
  'beeceptor.com',
  'hookbin.com',
  'hookb.in', // Hookbin (hookb.in carried the endpoints)
  'smee.io', // smee.io webhook relay to a local machine
  'putsreq.com',
  'postb.in', // PostBin
  'ptsv2.com',
  'ptsv3.com', // Post Test Server
  'mockbin.org',
  'mockbin.io',
  'webhook.cool',
  'typedwebhook.tools',
  // out-of-band interaction catchers (interactsh, Burp Collaborator): exfiltration endpoints
  'interact.sh',
  'oast.fun',
  'oast.live',
  'oast.me',
  'oast.online',
  'oast.pro',
  'oast.site',
  'oastify.com',
  'burpcollaborator.net',
  'ceye.io',
  'dnslog.cn', // CEYE and DNSLog, the same kind
]);

const PROXY_REASON = 'names a temporary public proxy (a tunnel or request-bin service such as ngrok, Cloudflare quick tunnels or webhook.site); use your own server-side HTTPS address';

const NOT_HTTPS = 'must be an https URL of your own server';

/** The shared rules' verdict in the words callers of the task API already get. */
function reasonFor(check: Extract<PublicUrlCheck, { ok: false }>): string {
  switch (check.problem) {
    case 'not_url':
      return 'must be an absolute https URL';
    case 'scheme':
      return NOT_HTTPS;
    case 'credentials':
      return 'must not carry credentials (user:password@)';
    case 'not_public':
      return 'must name a public host: loopback, private, link-local and metadata addresses are refused';
    default:
      return describeProblem(check);
  }
}

/** The checks that need no DNS. `callerKey` is the bearer key of the creating request. */
export function checkCallbackUrl(value: unknown, policy: CallbackUrlPolicy, callerKey?: string): CallbackUrlCheck {
  if (typeof value === 'string' && value.length > MAX_LENGTH) return { ok: false, reason: `must be at most ${MAX_LENGTH} characters` };
  const shape = checkPublicUrl(value, { allowPrivate: policy.allowLocal });
  if (!shape.ok) return { ok: false, reason: reasonFor(shape) };
  const { url } = shape;
  if (url.protocol !== 'https:' && !policy.allowLocal) return { ok: false, reason: NOT_HTTPS };
  // the key check first: a caller who put their key in the URL must learn that, whatever else is wrong
  const leak = callerKey ? findKey(value as string, url, callerKey) : undefined;
  if (leak === 'key') return { ok: false, reason: 'must not contain your API key (no keys or secrets in callback URLs)' };
  if (leak === 'too_deep') return { ok: false, reason: `must not be percent-encoded more than ${MAX_DECODE_ROUNDS} times over` };
  if (isTemporaryProxy(url.hostname, policy)) return { ok: false, reason: PROXY_REASON };
  return { ok: true, url };
}

/**
 * True when the host is on the built-in list or the operator's `blockedHosts` and not on its
 * `allowedHosts`. The host is WHATWG-parsed (punycode, percent escapes and IDNA dots normalized,
 * lower case), so only trailing dots are left to strip: all of them, as `x.ngrok.io..` still
 * reaches x.ngrok.io through resolvers that drop empty labels.
 */
function isTemporaryProxy(hostname: string, policy: Pick<CallbackUrlPolicy, 'blockedHosts' | 'allowedHosts'>): boolean {
  const host = hostname.toLowerCase().replace(/\.+$/, '');
  const listed = TEMPORARY_PROXY_HOSTS.some((entry) => onOrUnder(host, entry)) || (policy.blockedHosts ?? []).some((entry) => onOrUnder(host, entry));
  return listed && !(policy.allowedHosts ?? []).some((entry) => onOrUnder(host, entry));
}

function onOrUnder(host: string, entry: string): boolean {
  return host === entry || host.endsWith(`.${entry}`);
}

// Layers of encoding beyond this are refused rather than decoded further: no honest URL has them.
const MAX_DECODE_ROUNDS = 8;

/**
 * contract §5.5: the key must not travel in the URL in any spelling a receiver or log could turn back
 * into it. The raw string, the parsed (normalized) href and every component are decoded layer by
 * layer, malformed escapes tolerated, and searched for the key and its encoded forms (see
 * keyNeedles). Case-sensitive, like keys, except in the host, which URL parsing lower-cases, and
 * for hex, whose digits mean the same in either case. No minimum key length: a short key is still a key.
 */
function findKey(raw: string, url: URL, key: string): 'key' | 'too_deep' | undefined {
  const { exact, hex } = keyNeedles(key);
  const parts = [raw, url.href, url.hostname, url.username, url.password, url.hash.slice(1), ...url.pathname.split('/')];
  for (const [name, value] of url.searchParams) parts.push(name, value);
  const holds = (text: string): boolean => exact.some((needle) => text.includes(needle)) || (hex !== undefined && text.toLowerCase().includes(hex));
  for (const part of parts) {
    const decoded = decodePercentRepeatedly(part, MAX_DECODE_ROUNDS);
    if (holds(part) || holds(decoded.text)) return 'key';
    // still changing at the bound: it cannot be shown not to hide the key, so it is refused
    if (!decoded.stable) return 'too_deep';
  }
  // the host is lower-cased by parsing (and by DNS), so there the key is compared without case
  return url.hostname.includes(key.toLowerCase()) ? 'key' : undefined;
}

// The encoded forms of a very short key are a few common characters: searched from 8 characters on.
const MIN_ENCODED_KEY_LENGTH = 8;

/**
 * What to search for: the key itself, its lower-case hex, and its base64 and base64url forms at
 * all three byte alignments. Basic-auth habits put something before the key (`:KEY`, `api:KEY`,
 * `Bearer KEY`), which shifts it by 0, 1 or 2 bytes within base64's 3-byte groups; each shift
 * gives a different encoding. Of each, only the stable core is kept: the characters made of key
 * bits alone, without the first and last ones that neighbouring bytes (or padding) would change.
 * A core is found inside any base64 of any text containing the key, padded or not.
 */
function keyNeedles(key: string): { exact: string[]; hex?: string } {
  if (key.length < MIN_ENCODED_KEY_LENGTH) return { exact: [key] };
  const bytes = Buffer.from(key);
  const exact = [key];
  for (let shift = 0; shift < 3; shift += 1) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    // base64 character i carries bits [6i, 6i + 6); the key holds bits [8 * shift, 8 * (shift + n))
    const core = encoded.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6));
    exact.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return { exact, hex: bytes.toString('hex') };
}
