// isNonPublicHost / isPublicAddress: which reference-image hosts are publicly reachable (spec §4.1, §7).
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
    // not an IP address at all: not a public address
    { address: 'example.com', expected: false },
    { address: '', expected: false },
  ])('$address -> $expected', ({ address, expected }) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});
