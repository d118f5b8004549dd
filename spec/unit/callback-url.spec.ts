// checkCallbackUrl (contract §6.3, §5.5): temporary public proxies refused by a maintained, extendable
// host list; backslashes and userinfo refused; the caller's key found however it is encoded.
import { describe, expect, it } from 'vitest';
import { GatewayConfigError } from '../../lib/errors/config-error.js';
import { resolveOptions } from '../../lib/gateway/resolve-options.js';
import { type CallbackUrlPolicy, TEMPORARY_PROXY_HOSTS, checkCallbackUrl } from '../../lib/security/callback-url.js';
import { decodePercentRepeatedly } from '../../lib/security/percent-decode.js';

const STRICT: CallbackUrlPolicy = { allowLocal: false };
const KEY = 'sk-test-tenant-a-0123456789abcdef';
const PROXY_REASON = /temporary public proxy.*use your own server-side HTTPS address/;

const reasonOf = (url: string, policy: CallbackUrlPolicy = STRICT, key?: string): string | undefined => {
  const check = checkCallbackUrl(url, policy, key);
  return check.ok ? undefined : check.reason;
};

describe('temporary public proxies', () => {
  it.each([
    ['https://3f2a-203-0-113-9.ngrok-free.app/hooks', 'ngrok free'],
    ['https://abc.ngrok.io/hooks', 'ngrok legacy'],
    ['https://abc.ngrok.app/hooks', 'ngrok paid'],
    ['https://random-words.trycloudflare.com/hooks', 'Cloudflare quick tunnel'],
    ['https://tidy-fox-12.loca.lt/hooks', 'localtunnel'],
    ['https://x.localtunnel.me/', 'localtunnel (old domain)'],
    ['https://abcd.serveo.net/', 'serveo'],
    ['https://8c1e2b.lhr.life/', 'localhost.run'],
    ['https://me.pagekite.me/', 'pagekite'],
    ['https://bore.pub:4242/', 'bore'],
    ['https://webhook.site/4a1b2c3d-0000-4000-8000-000000000000', 'request bin'],
    ['https://eo1a2b3c4d5e6f.m.pipedream.net/', 'pipedream request bin'],
    ['https://smee.io/AbCdEf', 'smee'],
    ['https://ABC.NGROK-FREE.APP./hooks', 'case and trailing dot'],
    ['https://abc.ngrok%2Eio/hooks', 'percent-encoded dot in the host'],
    ['https://abc.ngrok\u3002io/hooks', 'ideographic full stop (IDNA maps it to a dot)'],
    ['https://abc.ＮＧＲＯＫ.io/hooks', 'fullwidth letters (IDNA folds them)'],
    ['https://x.ngrok.io../hooks', 'two trailing dots'],
    ['https://X.NGROK.IO.../hooks', 'three trailing dots and case'],
    ['https://webhook.site../4a1b', 'a bare listed name with two trailing dots'],
    ['https://k3x9.srv.us/hooks', 'srv.us'],
    ['https://a1b2c3.tunnel.pyjam.as/hooks', 'tunnel.pyjam.as'],
    ['https://erock-demo.tuns.sh/hooks', 'tuns.sh (pico.sh tunnels)'],
    ['https://abcd1234.localto.net/hooks', 'Localtonet'],
    ['https://name-12345.portmap.host/hooks', 'Portmap.io'],
    ['https://hookb.in/AbCdEf', 'Hookbin endpoints'],
    ['https://x.at.ply.gg/hooks', 'playit.gg'],
    ['https://a1b2c3.ceye.io/x', 'CEYE out-of-band catcher'],
    ['https://a1b2c3.dnslog.cn/x', 'DNSLog out-of-band catcher'],
  ])('%s is refused (%s)', (url) => {
    expect(reasonOf(url)).toMatch(PROXY_REASON);
  });

  it.each([
    ['https://hooks.example.com/ngrok.io', 'the name in the path'],
    ['https://notngrok.io/hooks', 'a suffix that is not on a label boundary'],
    ['https://ngrok.io.example.com/hooks', 'the name as a subdomain of another host'],
    ['https://pipedream.net/', 'pipedream itself, only its m. request bins are listed'],
    ['https://pyjam.as/', 'pyjam.as itself, only its tunnel. subdomain is listed'],
  ])('%s is accepted (%s)', (url) => {
    expect(checkCallbackUrl(url, STRICT)).toMatchObject({ ok: true });
  });

  it('is refused even where local targets are allowed (allowLocal is about loopback, not proxies)', () => {
    expect(reasonOf('http://abc.ngrok.io/hooks', { allowLocal: true })).toMatch(PROXY_REASON);
  });

  it.each([
    ['https://a.hooks.bad.example/x', { blockedHosts: ['hooks.bad.example'] }, false],
    ['https://hooks.bad.example/x', { blockedHosts: ['hooks.bad.example'] }, false],
    ['https://hooks.good.example/x', { blockedHosts: ['hooks.bad.example'] }, true],
    ['https://acme.ngrok.app/x', { allowedHosts: ['acme.ngrok.app'] }, true],
    ['https://api.acme.ngrok.app/x', { allowedHosts: ['acme.ngrok.app'] }, true],
    ['https://other.ngrok.app/x', { allowedHosts: ['acme.ngrok.app'] }, false],
    ['https://a.hooks.bad.example../x', { blockedHosts: ['hooks.bad.example'] }, false],
  ])('%s with %j: accepted %s', (url, extra, accepted) => {
    expect(checkCallbackUrl(url, { ...STRICT, ...extra }).ok).toBe(accepted);
  });

  it('keeps every listed entry a lower-case host name', () => {
    expect(TEMPORARY_PROXY_HOSTS.length).toBeGreaterThan(20);
    for (const host of TEMPORARY_PROXY_HOSTS) expect(host).toBe(new URL(`https://${host}/`).hostname);
  });
});

describe('URL shapes that parsers disagree on', () => {
  it.each([
    ['https://hooks.example.com\\@evil.example/x', /backslash/],
    ['https://hooks.example.com/a\\b', /backslash/],
    ['https://@hooks.example.com/x', /credentials/],
    ['https://:@hooks.example.com/x', /credentials/],
    ['https://user@hooks.example.com/x', /credentials/],
    ['https://hooks.example.com/a b', /spaces or control characters/],
    ['https://hooks.exa\tmple.com/x', /spaces or control characters/],
    ['https://localhost../x', /must name a public host/],
    ['https://metadata.google.internal.../x', /must name a public host/],
    ['https://.../x', /must name a public host/],
  ])('%j is refused', (url, reason) => {
    expect(reasonOf(url)).toMatch(reason);
  });
});

describe("the caller's key in the URL", () => {
  const encoded = encodeURIComponent(KEY).replace(/-/g, '%2D');
  it.each([
    [`https://hooks.example.com/${KEY}`, 'plain in the path'],
    [`https://hooks.example.com/x?token=${encoded}`, 'percent-encoded in a query value'],
    [`https://hooks.example.com/x%E0?token=${encoded}`, 'beside a malformed escape (%E0)'],
    [`https://hooks.example.com/x?t=${encoded.replace(/%/g, '%25')}`, 'double-encoded'],
    [`https://hooks.example.com/x?t=${encoded.replace(/%/g, '%25').replace(/%/g, '%25')}`, 'triple-encoded'],
    [`https://hooks.example.com/x?${encoded}=1`, 'as a query name'],
    [`https://hooks.example.com/x#${encoded}`, 'in the fragment'],
    [`https://hooks.example.com/x?t=${Buffer.from(KEY).toString('base64')}`, 'base64'],
    [`https://hooks.example.com/x?t=${Buffer.from(KEY).toString('base64url')}`, 'base64url'],
    [`https://${KEY}.example.com/x`, 'as a host label'],
  ])('%s is refused (%s)', (url) => {
    expect(reasonOf(url, STRICT, KEY)).toMatch(/must not contain your API key/);
  });

  // Basic-auth habits: the key base64-encoded after a prefix of any length, so at any of the three
  // byte alignments, in either alphabet, padded or not, raw or percent-encoded; and the key in hex
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const b64url = (text: string) => Buffer.from(text).toString('base64url');
  const hex = (text: string) => Buffer.from(text).toString('hex');
  it.each([
    [`?auth=${b64(`:${KEY}`)}`, 'base64(":" + key), empty user'],
    [`?auth=${b64(`api:${KEY}`)}`, 'base64("api:" + key)'],
    [`?auth=${b64(`Bearer ${KEY}`)}`, 'base64("Bearer " + key)'],
    [`?auth=${b64(`u:${KEY}`)}`, 'base64("u:" + key), the third alignment'],
    [`?auth=${b64(`tenant:${KEY}:x`)}`, 'base64 with bytes after the key too'],
    [`?auth=${b64url(`api:${KEY}`)}`, 'base64url("api:" + key)'],
    [`?auth=${b64url(`u:${KEY}`)}`, 'base64url("u:" + key)'],
    [`?auth=${encodeURIComponent(b64(`api:${KEY}`))}`, 'base64("api:" + key) percent-encoded'],
    [`?auth=${encodeURIComponent(b64(`u:${KEY}`))}`, 'base64("u:" + key) percent-encoded'],
    [`/${b64(`x:${KEY}`).replace(/=+$/, '')}`, 'base64 unpadded in the path'],
    [`?auth=${hex(KEY)}`, 'hex, lower case'],
    [`?auth=${hex(KEY).toUpperCase()}`, 'hex, upper case'],
    [`?auth=${hex(`Bearer ${KEY}`)}`, 'hex of "Bearer " + key'],
    [`/${hex(KEY)}`, 'hex in the path'],
  ])('https://hooks.example.com/x%s is refused (%s)', (suffix) => {
    expect(reasonOf(`https://hooks.example.com/x${suffix}`, STRICT, KEY)).toMatch(/must not contain your API key/);
  });

  it.each([
    [`?auth=${b64(`api:${KEY.replace('a-0', 'b-0')}`)}`, 'base64 of another key'],
    [`?auth=${hex(KEY.replace('a-0', 'b-0'))}`, 'hex of another key'],
    ['?sig=6a1f0c9e2b7d4a8f1e3c5b7a9d0f2e4c6b8a0d1f', 'an unrelated hex signature'],
  ])('https://hooks.example.com/x%s is accepted (%s)', (suffix) => {
    expect(checkCallbackUrl(`https://hooks.example.com/x${suffix}`, STRICT, KEY)).toMatchObject({ ok: true });
  });

  it.each([
    ['abc1', 'https://hooks.example.com/abc1'],
    ['k9', 'https://hooks.example.com/x?a=k%39'],
    ['short-7', 'https://hooks.example.com/%73hort-7'],
  ])('a short key (%s) is not skipped', (key, url) => {
    expect(reasonOf(url, STRICT, key)).toMatch(/must not contain your API key/);
  });

  it('a URL encoded more times over than the decoder follows is refused, not guessed at', () => {
    let deep = KEY;
    for (let round = 0; round < 12; round += 1) deep = encodeURIComponent(deep).replace(/-/g, '%2D');
    expect(reasonOf(`https://hooks.example.com/x?t=${deep}`, STRICT, KEY)).toBe('must not be percent-encoded more than 8 times over');
  });

  it('is case-sensitive outside the host, so a URL without the key passes', () => {
    expect(checkCallbackUrl(`https://hooks.example.com/${KEY.toUpperCase()}`, STRICT, KEY)).toMatchObject({ ok: true });
    expect(checkCallbackUrl('https://hooks.example.com/tasks?id=1%E0', STRICT, KEY)).toMatchObject({ ok: true });
  });
});

describe('decodePercentRepeatedly', () => {
  it.each([
    ['plain', 'plain'],
    ['a%20b', 'a b'],
    ['%252D', '-'],
    ['%25252D', '-'],
    ['x%E0y%2Dz', 'x\uFFFDy-z'],
    ['%E4%BD%A0%E5%A5%BD', '你好'],
    ['%', '%'],
    ['%G0', '%G0'],
    ['100%', '100%'],
  ])('%j decodes to %j', (input, output) => {
    expect(decodePercentRepeatedly(input).text).toBe(output);
  });

  it('stops at its bound and says so', () => {
    let deep = '-';
    for (let round = 0; round < 20; round += 1) deep = encodeURIComponent(deep).replace(/-/g, '%2D');
    expect(decodePercentRepeatedly(deep, 8).stable).toBe(false);
    expect(decodePercentRepeatedly('%252D', 8)).toEqual({ text: '-', stable: true });
  });
});

describe('callbacks.blockedHosts and callbacks.allowedHosts options', () => {
  const base = { verifyKey: () => null, resolveUpstream: () => null };
  it('default to empty lists', () => {
    expect(resolveOptions(base).callbacks).toMatchObject({ blockedHosts: [], allowedHosts: [] });
  });

  it('are normalized to lower-case host names', () => {
    expect(resolveOptions({ ...base, callbacks: { blockedHosts: ['Hooks.Bad.Example.'], allowedHosts: ['ACME.ngrok.app'] } }).callbacks).toMatchObject({
      blockedHosts: ['hooks.bad.example'],
      allowedHosts: ['acme.ngrok.app'],
    });
  });

  it.each([
    ['blockedHosts', 'hooks.bad.example'],
    ['blockedHosts', ['https://hooks.bad.example/']],
    ['blockedHosts', ['*.bad.example']],
    ['blockedHosts', ['']],
    ['allowedHosts', [42]],
    ['allowedHosts', ['acme.ngrok.app:443']],
  ])('callbacks.%s = %j is a configuration error that shows the fix', (name, value) => {
    const attempt = () => resolveOptions({ ...base, callbacks: { [name]: value } });
    expect(attempt).toThrow(GatewayConfigError);
    expect(attempt).toThrow(new RegExp(`callbacks\\.${name}`));
  });
});
