// checkPublicUrl / requirePublicUrl / resolvePublicAddress / checkForwardedUrls: the one URL check
// every route uses for caller media URLs and the gateway uses for result downloads (docs/security.md "The upstream chooses nothing the gateway fetches").
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/errors/gateway-error.js';
import { checkForwardedUrls } from '../../lib/security/forwarded-urls.js';
import { checkPublicUrl, requirePublicUrl, resolvePublicAddress } from '../../lib/security/public-url.js';

const STRICT = { allowPrivate: false };
const OPEN = { allowPrivate: true };

describe('checkPublicUrl', () => {
  it.each([
    { url: 'https://evil.com\\@127.0.0.1/a.png', problem: 'backslash', why: 'other parsers read the host as 127.0.0.1' },
    { url: 'https://evil.com\\a.png', problem: 'backslash', why: 'a backslash anywhere' },
    { url: 'https://user:pw@cdn.example.com/a.png', problem: 'credentials', why: 'userinfo' },
    { url: 'https://@cdn.example.com/a.png', problem: 'credentials', why: 'empty userinfo' },
    { url: 'https://cdn.example.com@127.0.0.1/a.png', problem: 'credentials', why: 'userinfo hiding the real host' },
    { url: 'https://cdn.example.com/a b.png', problem: 'characters', why: 'a space' },
    { url: 'https://cdn.exa\tmple.com/a.png', problem: 'characters', why: 'a tab WHATWG would strip' },
    { url: ' https://cdn.example.com/a.png', problem: 'characters', why: 'leading space WHATWG would strip' },
    { url: 'ftp://cdn.example.com/a.png', problem: 'scheme', why: 'not http(s)' },
    { url: 'file:///etc/passwd', problem: 'scheme', why: 'file' },
    { url: 'javascript:alert(1)', problem: 'scheme', why: 'javascript' },
    { url: 'cdn.example.com/a.png', problem: 'not_url', why: 'relative' },
    { url: '', problem: 'not_url', why: 'empty' },
    { url: 'http://[::127.0.0.1]/a.png', problem: 'not_public', why: 'IPv4-compatible loopback' },
    { url: 'http://[::a9fe:a9fe]/latest/meta-data', problem: 'not_public', why: 'IPv4-compatible metadata' },
    { url: 'http://2130706433/a.png', problem: 'not_public', why: 'decimal loopback' },
    { url: 'http://0x7f.1/a.png', problem: 'not_public', why: 'hex loopback' },
    { url: 'http://0xa9.0xfe.0xa9.0xfe/', problem: 'not_public', why: 'hex metadata' },
    { url: 'http://127.0.0.2/secret', problem: 'not_public', why: 'loopback /8' },
    { url: 'http://10.0.0.1/', problem: 'not_public', why: 'private' },
    { url: 'http://[64:ff9b::a00:1]/', problem: 'not_public', why: 'NAT64 of 10.0.0.1' },
    { url: 'http://[2002:7f00:1::]/', problem: 'not_public', why: '6to4 of loopback' },
    { url: 'http://metadata.google.internal/', problem: 'not_public', why: 'metadata name' },
    { url: `https://cdn.example.com/${'a'.repeat(8200)}`, problem: 'too_long', why: 'past 8192 characters' },
  ])('$url -> $problem ($why)', ({ url, problem }) => {
    expect(checkPublicUrl(url, STRICT)).toMatchObject({ ok: false, problem });
  });

  it.each([
    { url: 'https://cdn.example.com/a.png?sig=abc#x', href: 'https://cdn.example.com/a.png?sig=abc#x' },
    { url: 'HTTPS://CDN.Example.COM:443/a/../b.png', href: 'https://cdn.example.com/b.png' },
    { url: 'https://cdn.example.com/a%20b.png', href: 'https://cdn.example.com/a%20b.png' },
    { url: 'http://[2606:4700::1]/a.png', href: 'http://[2606:4700::1]/a.png' },
    { url: 'http://[64:ff9b::8.8.8.8]/a.png', href: 'http://[64:ff9b::808:808]/a.png' },
  ])('$url is public, normalized to $href', ({ url, href }) => {
    const check = checkPublicUrl(url, STRICT);
    expect(check.ok && check.url.href).toBe(href);
  });

  it.each([
    { url: 'http://127.0.0.1:8080/a.png', ok: true },
    { url: 'http://localhost/a.png', ok: true },
    // the opt-in is about hosts only: the parser-confusion rules stay
    { url: 'http://evil.com\\@127.0.0.1/', ok: false },
    { url: 'http://u:p@127.0.0.1/', ok: false },
    { url: 'file:///etc/passwd', ok: false },
  ])('allowPrivate: $url -> ok $ok', ({ url, ok }) => {
    expect(checkPublicUrl(url, OPEN).ok).toBe(ok);
  });
});

describe('requirePublicUrl', () => {
  it.each([
    { url: 'https://evil.com\\@127.0.0.1/', message: "image must not contain a backslash: parsers disagree on the host of such a URL (use '/' or percent-encode it)" },
    { url: 'https://a:b@example.com/', message: 'image must not carry credentials (user:password@): the URL must be publicly reachable without login' },
    { url: 'http://[::7f00:1]/', message: 'image names a loopback, private or link-local host; the URL must be publicly reachable' },
    { url: 'gopher://example.com/', message: 'image must be a public http(s) URL' },
  ])('$url -> 400 "$message"', ({ url, message }) => {
    const error = (() => {
      try {
        requirePublicUrl(url, 'image', STRICT);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).toJSON()).toStrictEqual({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param: 'image' } });
  });

  it('answers the normalized URL', () => {
    expect(requirePublicUrl('HTTPS://Example.COM/./a.png', 'image', STRICT)).toBe('https://example.com/a.png');
  });
});

describe('resolvePublicAddress', () => {
  const dns = (answers: Record<string, Array<{ address: string; family: number }>>) => async (host: string) => answers[host] ?? [];
  it.each([
    { host: 'rebind.example', answers: [{ address: '127.0.0.2', family: 4 }], inside: true },
    {
      host: 'mixed.example',
      answers: [
        { address: '8.8.8.8', family: 4 },
        { address: '10.0.0.1', family: 4 },
      ],
      inside: true,
    },
    { host: 'compat.example', answers: [{ address: '::a9fe:a9fe', family: 6 }], inside: true },
    { host: 'nat64.example', answers: [{ address: '64:ff9b::a9fe:a9fe', family: 6 }], inside: true },
    { host: 'nowhere.example', answers: [], inside: false },
  ])('$host is refused (inside: $inside)', async ({ host, answers, inside }) => {
    await expect(resolvePublicAddress(host, STRICT, dns({ [host]: answers }))).rejects.toMatchObject({ name: 'NonPublicAddressError', inside });
  });

  it.each([
    {
      host: 'cdn.example',
      answers: [
        { address: '2606:4700::1', family: 6 },
        { address: '8.8.8.8', family: 4 },
      ],
      pinned: { address: '2606:4700::1', family: 6 },
    },
    { host: 'v4.example', answers: [{ address: '93.184.216.34', family: 4 }], pinned: { address: '93.184.216.34', family: 4 } },
  ])('$host pins the first checked address', async ({ host, answers, pinned }) => {
    await expect(resolvePublicAddress(host, STRICT, dns({ [host]: answers }))).resolves.toStrictEqual(pinned);
  });

  it('allowPrivate pins a private answer', async () => {
    await expect(resolvePublicAddress('local.example', OPEN, dns({ 'local.example': [{ address: '127.0.0.1', family: 4 }] }))).resolves.toStrictEqual({ address: '127.0.0.1', family: 4 });
  });
});

describe('checkForwardedUrls', () => {
  const chat = (part: Record<string, unknown>) => ({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, part] }] });
  const responses = (part: Record<string, unknown>) => ({ model: 'm', input: [{ role: 'user', content: [part] }] });

  it.each([
    { name: 'chat image_url.url', route: 'chat.completions' as const, body: chat({ type: 'image_url', image_url: { url: 'http://169.254.169.254/' } }), param: 'messages[0].content[1].image_url.url' },
    { name: 'chat image_url as a string', route: 'chat.completions' as const, body: chat({ type: 'image_url', image_url: 'http://[::7f00:1]/' }), param: 'messages[0].content[1].image_url' },
    { name: 'chat video_url.url', route: 'chat.completions' as const, body: chat({ type: 'video_url', video_url: { url: 'http://10.0.0.1/v.mp4' } }), param: 'messages[0].content[1].video_url.url' },
    { name: 'chat part with no type', route: 'chat.completions' as const, body: chat({ image_url: { url: 'http://127.0.0.1/' } }), param: 'messages[0].content[1].image_url.url' },
    { name: 'responses input_image', route: 'responses' as const, body: responses({ type: 'input_image', image_url: 'http://127.0.0.1/a.png' }), param: 'input[0].content[0].image_url' },
    { name: 'responses input_file', route: 'responses' as const, body: responses({ type: 'input_file', file_url: 'https://evil.com\\@127.0.0.1/' }), param: 'input[0].content[0].file_url' },
    { name: 'native image string', route: 'images.native' as const, body: { model: 'm', prompt: 'p', image: 'http://0x7f.1/a.png' }, param: 'image' },
    { name: 'native image list', route: 'images.native' as const, body: { model: 'm', prompt: 'p', image: ['https://cdn.example.com/a.png', 'http://192.168.0.1/b.png'] }, param: 'image[1]' },
    { name: 'OpenAI-compatible generations image', route: 'images.generations' as const, body: { model: 'm', prompt: 'p', image: 'http://[::1]/a.png' }, param: 'image' },
  ])('$name: refused with param $param', ({ route, body, param }) => {
    expect(() => checkForwardedUrls(route, body, STRICT)).toThrow(expect.objectContaining({ status: 400, param }));
  });

  it('normalizes URLs and keeps Data URLs and everything else as they are', () => {
    const data = 'data:image/png;base64,iVBORw0KGgo=';
    const body = {
      model: 'm',
      messages: [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'HTTPS://CDN.Example.com/a.png', detail: 'low' } },
            { type: 'image_url', image_url: { url: data } },
          ],
        },
      ],
    };
    expect(checkForwardedUrls('chat.completions', body, STRICT)).toStrictEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'https://cdn.example.com/a.png', detail: 'low' } },
            { type: 'image_url', image_url: { url: data } },
          ],
        },
      ],
    });
  });

  it('answers the very same body when nothing needed normalizing (no copy of a large body)', () => {
    const body = { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://cdn.example.com/a.png' }] }] };
    expect(checkForwardedUrls('responses', body, STRICT)).toBe(body);
  });
});
