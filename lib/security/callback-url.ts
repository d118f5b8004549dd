// Where the gateway may POST callbacks (spec §6.3, §5.5): an https URL of a public host, with no
// credentials and never the caller's own API key in it. The name is checked when the task is created
// and the resolved addresses again at every delivery, and the delivery connects to exactly the
// address that was checked, so DNS cannot point it inside later (rebinding).
import { lookup as dnsLookup } from 'node:dns/promises';
import { isNonPublicHost, isPublicAddress } from './public-host.js';

export interface CallbackUrlPolicy {
  /** Development and tests only: http and loopback/private targets are allowed. */
  allowLocal: boolean;
}

export type CallbackUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

const MAX_LENGTH = 2048;

/** The checks that need no DNS. `callerKey` is the bearer key of the creating request. */
export function checkCallbackUrl(value: unknown, policy: CallbackUrlPolicy, callerKey?: string): CallbackUrlCheck {
  if (typeof value !== 'string' || value === '') return { ok: false, reason: 'must be a non-empty string' };
  if (value.length > MAX_LENGTH) return { ok: false, reason: `must be at most ${MAX_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: 'must be an absolute https URL' };
  }
  if (url.protocol !== 'https:' && !(policy.allowLocal && url.protocol === 'http:')) {
    return { ok: false, reason: 'must be an https URL (spec §6: a server-side HTTPS address)' };
  }
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials (user:password@)' };
  if (callerKey && containsKey(value, callerKey)) {
    return { ok: false, reason: 'must not contain your API key (spec §5: no keys or secrets in callback URLs)' };
  }
  if (!policy.allowLocal && isNonPublicHost(url.hostname)) {
    return { ok: false, reason: 'must name a public host: loopback, private, link-local and metadata addresses are refused' };
  }
  return { ok: true, url };
}

function containsKey(url: string, key: string): boolean {
  if (key.length < 8) return false;
  if (url.includes(key)) return true;
  try {
    return decodeURIComponent(url).includes(key);
  } catch {
    return false;
  }
}

export interface ResolvedTarget {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves the host and checks every address it has: one private address is enough to refuse, as a
 * client could be sent to any of them. Answers the address to connect to.
 */
export async function resolvePublicTarget(
  hostname: string,
  policy: CallbackUrlPolicy,
  resolve: (host: string) => Promise<Array<{ address: string; family: number }>> = (host) => dnsLookup(host, { all: true, verbatim: true }),
): Promise<ResolvedTarget> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const addresses = await resolve(host);
  if (addresses.length === 0) throw new Error(`no address for ${host}`);
  if (!policy.allowLocal) {
    const inside = addresses.find((entry) => !isPublicAddress(entry.address));
    if (inside) throw new Error(`${host} resolves to a non-public address`);
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
