// The one address classifier: is a host or address publicly reachable? Every outbound safety rule
// uses it (caller media URLs the upstream fetches, result downloads, callback targets), so a range
// is refused everywhere or nowhere. ipaddr.js (the parser behind Express's proxy-addr) parses and
// names the IPv4 ranges; IPv6 is decided by an allowlist (global unicast 2000::/3 only), because a
// denylist of IPv6 ranges is exactly how IPv4-compatible ::a.b.c.d slipped through as "unicast".
import ipaddr from 'ipaddr.js';

// Names that never resolve to a public host. `.internal` covers cloud metadata names
// (metadata.google.internal); `.local` is mDNS; `.localhost` is reserved by RFC 6761.
const NON_PUBLIC_SUFFIXES = ['.localhost', '.local', '.localdomain', '.internal', '.home.arpa', '.lan', '.intranet', '.corp'];

/** True for a literal IP in a non-public range, or a name that only exists on a private network. */
export function isNonPublicHost(hostname: string): boolean {
  // every trailing dot goes: `localhost..` must not pass as a public name (resolvers treat it as
  // `localhost` or fail), and a name of only dots ends up empty, which is no public host
  const host = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '');
  if (host === '') return true;
  if (ipaddr.IPv6.isValid(host)) return !isPublicAddress(host);
  const canonical = canonicalIPv4(host);
  if (canonical !== undefined) return !isPublicAddress(canonical);
  // a numeric last label that is no valid IPv4 (1.2.3.256) is no resolvable name either
  if (/(^|\.)(\d+|0x[0-9a-f]*)$/i.test(host)) return true;
  if (host === 'localhost' || NON_PUBLIC_SUFFIXES.some((suffix) => host.endsWith(suffix))) return true;
  // a single-label name ("intranet") is resolved through local search domains, never publicly
  return !host.includes('.');
}

/**
 * True when an IP address (v4 or v6) is a public unicast address. Addresses that embed an IPv4
 * address (IPv4-mapped, NAT64 64:ff9b::/96, 6to4, Teredo) get the verdict of what they embed:
 * a DNS64 network hands out 64:ff9b::a.b.c.d for every public v4 host, so refusing NAT64 outright
 * would break IPv6-only deployments, while 64:ff9b::7f00:1 must not reach loopback.
 */
export function isPublicAddress(address: string): boolean {
  const host = address.replace(/^\[|\]$/g, '');
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return isPublicIPv4(ipaddr.IPv4.parse(host));
  if (!ipaddr.IPv6.isValid(host)) return false;
  return isPublicIPv6(ipaddr.IPv6.parse(dottedTailAsHex(host)));
}

/**
 * `::a.b.c.d` as `::XXXX:XXXX`. ipaddr.js reads any dotted tail as IPv4-mapped (::ffff:a.b.c.d),
 * which would turn the IPv4-compatible `::8.8.8.8` or `::127.0.0.1` into something else than the
 * address a socket (and WHATWG URL) uses.
 */
function dottedTailAsHex(host: string): string {
  return host.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_all, a: string, b: string, c: string, d: string) => {
    const hex = (high: string, low: string): string => ((Number(high) << 8) | Number(low)).toString(16);
    return `${hex(a, b)}:${hex(c, d)}`;
  });
}

function isPublicIPv4(ip: ipaddr.IPv4): boolean {
  // range() names 0/8, 10/8, 100.64/10 (CGNAT), 127/8, 169.254/16, 172.16/12, 192.0.0/24,
  // 192.0.2/24, 198.51.100/24, 203.0.113/24 (documentation), 198.18/15 (benchmarking),
  // 192.88.99/24, 192.168/16, 224/4, 240/4 and 255.255.255.255; only plain 'unicast' is public
  return ip.range() === 'unicast';
}

function isPublicIPv6(ip: ipaddr.IPv6): boolean {
  if (ip.zoneId) return false; // a zone (fe80::1%eth0) only exists on a local link
  const p = ip.parts;
  // ::ffff:a.b.c.d, IPv4-mapped: the socket really connects to the IPv4 address
  if (p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0xffff) return isPublicIPv4(ip.toIPv4Address());
  // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052): the last 32 bits are the IPv4 destination
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) return isPublicIPv4(v4From(p[6]!, p[7]!));
  // 6to4 2002:a.b.c.d::/48 (RFC 3056): bits 16-48 are the IPv4 address of the relay-less tunnel end
  if (p[0] === 0x2002) return isPublicIPv4(v4From(p[1]!, p[2]!));
  // Teredo 2001:0::/32 (RFC 4380): server IPv4 in bits 32-64, client IPv4 inverted in the last 32
  if (p[0] === 0x2001 && p[1] === 0) return isPublicIPv4(v4From(p[2]!, p[3]!)) && isPublicIPv4(v4From(~p[6]! & 0xffff, ~p[7]! & 0xffff));
  // Everything else outside global unicast 2000::/3 is non-public: ::/96 IPv4-compatible
  // (deprecated, ::7f00:1 is 127.0.0.1 to some stacks), ::1, ::, ::ffff:0:0:0/96, 64:ff9b:1::/48
  // (local-use NAT64, RFC 8215), 100::/64, ULA fc00::/7, link-local fe80::/10, site-local
  // fec0::/10, multicast ff00::/8.
  if ((p[0]! & 0xe000) !== 0x2000) return false;
  // inside 2000::/3, ipaddr names the special blocks: documentation 2001:db8::/32 and 3fff::/20,
  // IETF 2001::/23 (benchmarking 2001:2::/48, ORCHID, ...), segment routing
  return ip.range() === 'unicast';
}

function v4From(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * The dotted-decimal form of an IPv4 host in any spelling WHATWG URL accepts (2130706433, 0x7f.1,
 * 0177.0.0.1), or undefined for a name. Hosts from `new URL()` are already canonical; raw strings
 * are run through the same parser, so no caller can spell its way past the check.
 */
function canonicalIPv4(host: string): string | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return host;
  // only digits, dots and hex: anything else is a name (URL's IPv4 parser needs a numeric last label)
  if (!/^[0-9a-fx.]+$/i.test(host)) return undefined;
  try {
    const parsed = new URL(`http://${host}/`).hostname;
    return ipaddr.IPv4.isValidFourPartDecimal(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
