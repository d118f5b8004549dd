// isNonPublicHost / isPublicAddress: which reference-image hosts are publicly reachable (contract §4.1, §7).
import { describe, expect, it } from 'vitest';
import { isNonPublicHost, isPublicAddress } from '../../lib/security/public-host.js';

describe('isNonPublicHost', () => {
  it.each([
    // names
    { host: 'localhost', why: 'loopback name' },
    { host: 'LOCALHOST.', why: 'case and trailing dot' },
    { host: 'foo.localhost', why: 'RFC 6761 .localhost' },
    { host: 'metadata.google.internal', why: 'cloud metadata name' },
    { host: 'printer.local', why: 'mDNS' },
    { host: 'nas.home.arpa', why: 'home network' },
    { host: 'intranet', why: 'single label, resolved through search domains' },
    { host: '', why: 'empty' },
    // IPv4
    { host: '127.0.0.1', why: 'loopback' },
    { host: '127.1.2.3', why: 'loopback /8' },
    { host: '10.0.0.1', why: 'private 10/8' },
    { host: '10.255.255.254', why: 'private 10/8' },
    { host: '172.16.0.1', why: 'private 172.16/12, low end' },
    { host: '172.31.255.254', why: 'private 172.16/12, high end' },
    { host: '192.168.1.1', why: 'private 192.168/16' },
    { host: '169.254.169.254', why: 'link-local, cloud metadata' },
    { host: '100.64.0.1', why: 'CGNAT 100.64/10' },
    { host: '100.127.255.254', why: 'CGNAT 100.64/10, high end' },
    { host: '0.0.0.0', why: 'unspecified' },
    { host: '255.255.255.255', why: 'broadcast' },
    { host: '224.0.0.1', why: 'multicast' },
    // IPv6
    { host: '[::1]', why: 'loopback, URL brackets' },
    { host: '::1', why: 'loopback' },
    { host: '::', why: 'unspecified' },
    { host: 'fe80::1', why: 'link-local' },
    { host: 'fc00::1', why: 'unique local' },
    { host: 'fd12:3456::1', why: 'unique local' },
    { host: '::ffff:127.0.0.1', why: 'v4-mapped loopback' },
    { host: '::ffff:10.0.0.1', why: 'v4-mapped private' },
    { host: '[::ffff:7f00:1]', why: 'v4-mapped loopback as WHATWG URL serializes it' },
  ])('$host is non-public ($why)', ({ host }) => {
    expect(isNonPublicHost(host)).toBe(true);
  });

  it.each([
    { host: '8.8.8.8' },
    { host: '1.1.1.1' },
    { host: '172.32.0.1' }, // just past 172.16/12
    { host: '100.128.0.1' }, // just past 100.64/10
    { host: 'example.com' },
    { host: 'dashscope.aliyuncs.com' },
    { host: 'DashScope-Intl.AliyunCS.com.' },
    { host: '2606:4700::1111' },
    { host: '[2606:4700::1111]' },
    { host: '2001:4860:4860::8888' },
    { host: '::ffff:8.8.8.8' },
  ])('$host is public', ({ host }) => {
    expect(isNonPublicHost(host)).toBe(false);
  });

  // URL parsing normalizes odd IPv4 spellings before the check ever sees them
  it.each([
    { url: 'http://2130706433/a.png', hostname: '127.0.0.1' },
    { url: 'http://0x7f.1/a.png', hostname: '127.0.0.1' },
    { url: 'http://017700000001/a.png', hostname: '127.0.0.1' },
    { url: 'http://0/a.png', hostname: '0.0.0.0' },
    { url: 'http://[::ffff:127.0.0.1]/a.png', hostname: '[::ffff:7f00:1]' },
    { url: 'http://[0:0:0:0:0:0:0:1]/a.png', hostname: '[::1]' },
  ])('new URL($url).hostname is $hostname and non-public', ({ url, hostname }) => {
    const parsed = new URL(url).hostname;
    expect(parsed).toBe(hostname);
    expect(isNonPublicHost(parsed)).toBe(true);
  });
});

// docs/configuration.md "allow.privateImageUrls": addresses that embed or alias a non-public IPv4, and IPv6 outside global unicast
describe('isNonPublicHost: no holes', () => {
  it.each([
    { host: '[::127.0.0.1]', why: 'IPv4-compatible loopback, as typed' },
    { host: '::7f00:1', why: 'IPv4-compatible loopback, as WHATWG URL serializes it' },
    { host: '::a9fe:a9fe', why: 'IPv4-compatible 169.254.169.254' },
    { host: '::8.8.8.8', why: 'IPv4-compatible is deprecated: refused whatever it embeds' },
    { host: '::ffff:169.254.169.254', why: 'IPv4-mapped metadata' },
    { host: '::ffff:0:7f00:1', why: 'IPv4-translated ::ffff:0:0:0/96' },
    { host: '64:ff9b::7f00:1', why: 'NAT64 embedding loopback' },
    { host: '64:ff9b::a00:1', why: 'NAT64 embedding 10.0.0.1' },
    { host: '64:ff9b::a9fe:a9fe', why: 'NAT64 embedding metadata' },
    { host: '64:ff9b:1::808:808', why: 'local-use NAT64 64:ff9b:1::/48' },
    { host: '2002:7f00:1::1', why: '6to4 embedding loopback' },
    { host: '2002:a9fe:a9fe::1', why: '6to4 embedding metadata' },
    { host: '2002:c0a8:101::1', why: '6to4 embedding 192.168.1.1' },
    { host: '2001:0:a00:1::808:808', why: 'Teredo with a private server' },
    { host: '2001:0:808:808::80ff:fffe', why: 'Teredo with a loopback client (127.0.0.1 inverted)' },
    { host: 'fec0::1', why: 'site-local (deprecated)' },
    { host: 'ff02::1', why: 'multicast' },
    { host: 'fe80::1%25eth0', why: 'link-local with a zone' },
    { host: '2001:db8::1', why: 'documentation' },
    { host: '3fff::1', why: 'documentation (RFC 9637)' },
    { host: '2001:2::1', why: 'benchmarking' },
    { host: '100::1', why: 'discard-only' },
    { host: '4000::1', why: 'outside global unicast 2000::/3' },
    { host: '192.0.2.1', why: 'documentation TEST-NET-1' },
    { host: '198.51.100.7', why: 'documentation TEST-NET-2' },
    { host: '203.0.113.9', why: 'documentation TEST-NET-3' },
    { host: '198.18.0.1', why: 'benchmarking 198.18/15' },
    { host: '198.19.255.254', why: 'benchmarking 198.18/15, high end' },
    { host: '192.0.0.8', why: 'IETF protocol assignments' },
    { host: '0.1.2.3', why: '0.0.0.0/8' },
    { host: '240.0.0.1', why: 'reserved 240/4' },
    { host: '239.255.255.250', why: 'multicast' },
    { host: '100.64.0.0', why: 'CGNAT, low end' },
    // raw spellings, in case a caller hands over a host that no URL parser normalized
    { host: '2130706433', why: 'decimal loopback' },
    { host: '0x7f.1', why: 'hex loopback' },
    { host: '0177.0.0.1', why: 'octal loopback' },
    { host: '0xa9fea9fe', why: 'hex metadata' },
    { host: '1.2.3.256', why: 'numeric but no IPv4: no resolvable name either' },
    { host: 'db.localdomain', why: '.localdomain' },
    // every trailing dot is stripped, not just one (DNS treats `name..` as `name` or fails, never public)
    { host: 'localhost..', why: 'loopback name, two trailing dots' },
    { host: 'LOCALHOST...', why: 'loopback name, case and three trailing dots' },
    { host: 'metadata.google.internal..', why: 'cloud metadata name, two trailing dots' },
    { host: 'printer.local..', why: 'mDNS, two trailing dots' },
    { host: 'intranet..', why: 'single label, two trailing dots' },
    { host: '..', why: 'only dots' },
    { host: '....', why: 'only dots' },
  ])('$host is non-public ($why)', ({ host }) => {
    expect(isNonPublicHost(host)).toBe(true);
  });

  it.each([
    { host: '64:ff9b::808:808', why: 'NAT64 of 8.8.8.8 (what DNS64 answers on IPv6-only networks)' },
    { host: '2002:808:808::1', why: '6to4 of 8.8.8.8' },
    { host: '2001:0:808:808::f7f7:f7f7', why: 'Teredo, public server and client (8.8.8.8 inverted)' },
    { host: '2606:4700::1', why: 'global unicast' },
    { host: '8.8.4.4', why: 'public' },
    { host: 'cafe.example', why: 'a name made of hex letters is a name' },
    { host: 'example.com..', why: 'a public name with trailing dots stays public' },
  ])('$host is public ($why)', ({ host }) => {
    expect(isNonPublicHost(host)).toBe(false);
  });

  // WHATWG URL normalizes every spelling before the host reaches the classifier
  it.each([
    { url: 'http://[::127.0.0.1]/a.png', hostname: '[::7f00:1]' },
    { url: 'http://[::169.254.169.254]/', hostname: '[::a9fe:a9fe]' },
    { url: 'http://[64:ff9b::127.0.0.1]/', hostname: '[64:ff9b::7f00:1]' },
    { url: 'http://0xa9.0xfe.0xa9.0xfe/', hostname: '169.254.169.254' },
    { url: 'http://0x7f.1/', hostname: '127.0.0.1' },
    { url: 'http://[2002:a9fe:a9fe::]/', hostname: '[2002:a9fe:a9fe::]' },
  ])('new URL($url).hostname is $hostname and non-public', ({ url, hostname }) => {
    const parsed = new URL(url).hostname;
    expect(parsed).toBe(hostname);
    expect(isNonPublicHost(parsed)).toBe(true);
  });
});

describe('isPublicAddress', () => {
  it.each([
    { address: '8.8.8.8', expected: true },
    { address: '1.1.1.1', expected: true },
    { address: '2606:4700::1111', expected: true },
    { address: '::ffff:8.8.8.8', expected: true },
    { address: '127.0.0.1', expected: false },
    { address: '10.1.2.3', expected: false },
    { address: '169.254.169.254', expected: false },
    { address: '100.64.0.1', expected: false },
    { address: '::1', expected: false },
    { address: '::ffff:127.0.0.1', expected: false },
    { address: 'fe80::1', expected: false },
    { address: '::7f00:1', expected: false },
    { address: '::a9fe:a9fe', expected: false },
    { address: '64:ff9b::a9fe:a9fe', expected: false },
    { address: '64:ff9b::808:808', expected: true },
    { address: '2002:a00:1::1', expected: false },
    { address: '198.18.0.1', expected: false },
    { address: '192.0.2.1', expected: false },
    { address: '2001:db8::1', expected: false },
    // non-canonical spellings are not addresses here: DNS answers and socket peers are canonical
    { address: '2130706433', expected: false },
    // not an IP address at all: not a public address
    { address: 'example.com', expected: false },
    { address: '', expected: false },
  ])('$address -> $expected', ({ address, expected }) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});
