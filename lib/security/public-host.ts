// Is a host publicly reachable? Used for reference image URLs (spec §4.1: upstreams fetch them from
// the public internet) and later for callback targets. ipaddr.js (the classifier behind Express's
// proxy-addr) names the ranges, so we do not keep our own CIDR tables.
import ipaddr from 'ipaddr.js';

// Names that never resolve to a public host. `.internal` covers cloud metadata names
// (metadata.google.internal); `.local` is mDNS; `.localhost` is reserved by RFC 6761.
const NON_PUBLIC_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa', '.lan'];

/** True for a literal IP in a non-public range, or a name that only exists on a private network. */
export function isNonPublicHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (host === '') return true;
  if (ipaddr.isValid(host)) return !isPublicAddress(host);
  if (host === 'localhost' || NON_PUBLIC_SUFFIXES.some((suffix) => host.endsWith(suffix))) return true;
  // a single-label name ("intranet") is resolved through local search domains, never publicly
  return !host.includes('.');
}

/** True when an IP address (v4 or v6, including v4-mapped v6) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // process() turns ::ffff:127.0.0.1 into 127.0.0.1, so mapped addresses get the v4 verdict
  const parsed = ipaddr.process(address);
  return parsed.range() === 'unicast';
}
