// Outbound safety (docs/security.md "Nothing outside can crash the process"): a connection the kernel refuses at once is an ordinary failed attempt,
// result downloads get the public-address rules and must be images, the upstream does not decide
// how many images are downloaded, and every route applies the one URL check to media URLs and
// forwards the normalized URL.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { Upstream } from '../../lib/index.js';
import { startFakeArk } from '../helpers/fake-ark.js';
import { dashscopeSuccess, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { type FakeUpstream, sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';
import { startSilentServer } from '../helpers/faulty-servers.js';
import { KEY_A, type TestGateway } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';
import { netnsAvailable, runInNetns } from '../helpers/netns-run.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const SECRET = 'internal-service-secret-7f3a';

/** An internal service on 127.0.0.2 that must never be reached through the gateway. */
async function startSecretService(): Promise<{ origin: string; hits: number; close(): Promise<void> }> {
  const state = { hits: 0 };
  const server = http.createServer((_req, res) => {
    state.hits += 1;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(SECRET);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  return {
    origin: `http://127.0.0.2:${(server.address() as AddressInfo).port}`,
    get hits() {
      return state.hits;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const strict = await gatewayWith({
  fakes: {
    dashscope: startFakeDashscope,
    llm: startFakeLlm,
    ark: startFakeArk,
    openapi: () => startFakeUpstream((_req, res) => sendJson(res, 200, { ResponseMetadata: { RequestId: 'r-1' }, Result: { Id: 'asset-1' } })),
    silent: startSilentServer,
    secret: startSecretService,
  },
  resolve: ({ route, model }, { dashscope, llm, ark, openapi }): Upstream | null => {
    if (route === 'assets') return { provider: 'ark', baseURL: openapi.origin, accessKeyId: 'AKLTtest', secretAccessKey: 'c2VjcmV0', region: 'cn-beijing' };
    if (route === 'video.tasks') return { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-key' };
    if (model.startsWith('x-image')) return { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'ds-key' };
    return { provider: 'openai', baseURL: llm.baseURL, apiKey: 'llm-key' };
  },
  allow: { privateResultUrls: false },
  limits: { downloadTimeoutMs: 2_000 },
});
const open = strict.variant({ allow: { privateResultUrls: true }, limits: { downloadTimeoutMs: 300 } });
const { dashscope, llm, ark, openapi, silent, secret } = strict.fakes;

const b64 = (gateway: TestGateway, extra: Record<string, unknown> = {}) =>
  request(gateway.app)
    .post('/v1/images/generations')
    .set('Authorization', `Bearer ${KEY_A}`)
    .send({ model: 'x-image-2.0', prompt: 'a red square', response_format: 'b64_json', ...extra });
const answerWith = (urls: string[]) => dashscope.next((_req, res) => sendJson(res, 200, dashscopeSuccess(urls)));
const downloads = () => dashscope.requests.filter((entry) => entry.path.startsWith('/results/')).length;

describe('a connection the kernel refuses at once is an ordinary failed attempt (item 1)', () => {
  const available = netnsAvailable();
  it.skipIf(!available)(
    `callbacks and downloads to addresses that fail connect() synchronously fail, and the process keeps serving${available ? '' : ' (skipped: unshare -n -m is not permitted on this machine)'}`,
    async () => {
      const run = await runInNetns(path.join(here, '../helpers/netns-gateway-main.ts'), {
        'hooks.example.test': '2606:4700::1',
        'results.example.test': '2606:4700::1',
        'rebind.example.test': '127.0.0.1',
      });
      expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr.slice(0, 2000) }).toStrictEqual({ code: 0, stderr: '' });
      expect(JSON.parse(run.stdout.trim().split('\n').pop()!)).toStrictEqual({
        created: 200,
        deliveryGivenUp: true,
        unreachable: { status: 502, code: 'image_download_failed' },
        rebound: {
          status: 502,
          code: 'image_download_failed',
          message:
            "The image was generated but could not be downloaded for b64_json: The dashscope upstream returned an unusable response: its URL names a host that resolves to a loopback, private or link-local address, which the gateway does not connect to. Ask for response_format 'url' instead.",
        },
        fetchedResults: 0,
        after: 200,
      });
    },
    90_000,
  );
});

describe('result downloads obey the public-address rules (item 4)', () => {
  const refused = (detail: string) => ({
    error: {
      message: `The image was generated but could not be downloaded for b64_json: The dashscope upstream returned an unusable response: the result URL was refused: it ${detail}. Ask for response_format 'url' instead.`,
      type: 'upstream_error',
      code: 'image_download_failed',
      param: null,
    },
  });
  const PRIVATE = 'names a loopback, private or link-local host, which the gateway does not connect to';
  it.each([
    ['an internal service on 127.0.0.2', () => `${secret.origin}/secret`, PRIVATE],
    ['the same service as a v4-mapped IPv6 literal', () => `http://[::ffff:127.0.0.2]:${new URL(secret.origin).port}/secret`, PRIVATE],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/', PRIVATE],
    ['a private network address', () => 'http://10.0.0.1/r.png', PRIVATE],
    ['IPv4-compatible metadata', () => 'http://[::a9fe:a9fe]/latest/meta-data/', PRIVATE],
    ['localhost by name', () => `http://localhost:${new URL(secret.origin).port}/secret`, PRIVATE],
    [
      'a backslash URL other parsers read as 127.0.0.2',
      () => `https://cdn.example.com\\@127.0.0.2/secret`,
      "must not contain a backslash: parsers disagree on the host of such a URL (use '/' or percent-encode it)",
    ],
  ])('%s: 502, nothing fetched', async (_name, url, detail) => {
    answerWith([url()]);
    const res = await b64(strict);
    expect({ status: res.status, body: res.body }).toStrictEqual({ status: 502, body: refused(detail) });
    expect(secret.hits).toBe(0);
  });

  it('allow.privateResultUrls: true downloads from loopback', async () => {
    answerWith([dashscope.resultUrl('ok.png')]);
    const res = await b64(open);
    expect(res.status).toBe(200);
    expect(Buffer.from(res.body.data[0].b64_json as string, 'base64')).toStrictEqual(TINY_PNG);
  });

  it('bytes that are not an image: 502, never passed on as b64_json', async () => {
    answerWith([`${secret.origin}/secret`]);
    const res = await b64(open);
    expect({ status: res.status, body: res.body }).toStrictEqual({
      status: 502,
      body: {
        error: {
          message:
            "The image was generated but could not be downloaded for b64_json: the dashscope result URL did not answer with an image (PNG, JPEG, WebP, GIF, BMP, TIFF, HEIC or AVIF). Ask for response_format 'url' instead.",
          type: 'upstream_error',
          code: 'image_download_failed',
          param: null,
        },
      },
    });
  });

  it('a download timeout names limits.downloadTimeoutMs, not the upstream timeoutMs', async () => {
    answerWith([`${silent.origin}/r.png`]);
    const res = await b64(open);
    expect({ status: res.status, body: res.body }).toStrictEqual({
      status: 504,
      body: {
        error: {
          message:
            "The image was generated but could not be downloaded for b64_json: the result host did not answer within 300 ms (the gateway's limits.downloadTimeoutMs). Ask for response_format 'url' instead.",
          type: 'upstream_error',
          code: 'image_download_failed',
          param: null,
        },
      },
    });
  });
});

describe('the upstream does not decide how much the gateway downloads (item 5)', () => {
  it('n = 1 and 300 result URLs: one image downloaded and answered, 300 reported in the usage event', async () => {
    const before = downloads();
    const usage = open.usage.length;
    answerWith(Array.from({ length: 300 }, (_, index) => dashscope.resultUrl(`many-${index}.png`)));
    const res = await b64(open);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(downloads() - before).toBe(1);
    await expect.poll(() => open.usage.length).toBe(usage + 1);
    expect(open.usage[usage]).toMatchObject({ route: 'images.generations', images: 1, upstreamImages: 300, status: 200 });
  });

  it('parameters.n = 2 and 5 result URLs: the first 2, in order', async () => {
    answerWith(Array.from({ length: 5 }, (_, index) => dashscope.resultUrl(`five-${index}.png`)));
    const res = await request(open.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'x-image-2.0', prompt: 'a red square', parameters: { n: 2 } });
    expect(res.status).toBe(200);
    expect(res.body.data.map((item: { url: string }) => item.url)).toStrictEqual([dashscope.resultUrl('five-0.png'), dashscope.resultUrl('five-1.png')]);
  });

  it.each([
    ['n absent', {}, 1],
    ['n = 2', { n: 2 }, 2],
  ])('OpenAI-compatible upstream, %s, 300 images answered: the caller gets (and is billed for) %s', async (_name, extra, expected) => {
    const usage = open.usage.length;
    const data = Array.from({ length: 300 }, (_, index) => ({ url: `https://cdn.example/${index}.png` }));
    llm.next((_request, res) => sendJson(res, 200, { created: 1, data }));
    const res = await request(open.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'gpt-image-1', prompt: 'a red square', ...extra });
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({ created: 1, data: data.slice(0, expected) });
    await expect.poll(() => open.usage.length).toBe(usage + 1);
    expect(open.usage[usage]).toMatchObject({ route: 'images.generations', provider: 'openai', images: expected, upstreamImages: 300, status: 200 });
  });

  it.each([
    ['JSON sent as text/plain', 'text/plain', '', 200],
    ['JSON sent as application/octet-stream', 'application/octet-stream', '', 200],
    ['JSON with trailing garbage', 'application/json', '\n\u0000', 502],
    ['not JSON at all', 'application/json', 'garbage', 502],
  ])('an image answer whatever its Content-Type (%s) is capped or refused, never relayed uncapped', async (name, contentType, suffix, status) => {
    const usage = open.usage.length;
    const json = JSON.stringify({ created: 1, data: Array.from({ length: 5 }, (_, index) => ({ url: `https://cdn.example/${index}.png` })) });
    const body = name === 'not JSON at all' ? suffix : json + suffix;
    llm.next((_request, res) => {
      res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    const res = await request(open.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'gpt-image-1', prompt: 'a red square' });
    expect(res.status).toBe(status);
    await expect.poll(() => open.usage.length).toBe(usage + 1);
    if (status === 200) {
      // supertest keeps a body it does not know as a Buffer
      const text = Buffer.isBuffer(res.body) ? res.body.toString('utf8') : res.text;
      expect(JSON.parse(text).data).toHaveLength(1);
      expect(open.usage[usage]).toMatchObject({ images: 1, upstreamImages: 5, status: 200 });
    } else {
      expect(res.body.error).toMatchObject({ code: 'upstream_bad_response', type: 'upstream_error' });
      expect(res.body.error.message).toContain('the image answer is not JSON with a data list');
      expect(open.usage[usage]).toMatchObject({ images: 0, status: 502, errorCode: 'upstream_bad_response' });
    }
  });

  it('a JSON image answer with a byte order mark is read and capped like any other', async () => {
    const body = '\uFEFF' + JSON.stringify({ created: 1, data: Array.from({ length: 5 }, (_, index) => ({ url: `https://cdn.example/${index}.png` })) });
    llm.next((_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    const res = await request(open.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'gpt-image-1', prompt: 'a red square' });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
  });
});

describe('every route applies the one URL check (item 6)', () => {
  const chatWith = (part: Record<string, unknown>) => ({ model: 'chat-model', messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, part] }] });
  const cases: Array<[string, string, Record<string, unknown>, string, () => FakeUpstream]> = [
    [
      'images.generations, IPv4-compatible loopback',
      '/v1/images/generations',
      { model: 'x-image-edit', input: { messages: [{ role: 'user', content: [{ image: 'http://[::127.0.0.1]/a.png' }, { text: 'x' }] }] } },
      'input.messages[0].content[0].image',
      () => dashscope,
    ],
    [
      'images.generations, backslash',
      '/v1/images/generations',
      { model: 'x-image-edit', input: { messages: [{ role: 'user', content: [{ image: 'https://cdn.example.com\\@127.0.0.1/a.png' }, { text: 'x' }] }] } },
      'input.messages[0].content[0].image',
      () => dashscope,
    ],
    ['images.generations to an OpenAI-compatible upstream, image', '/v1/images/generations', { model: 'seedream', prompt: 'x', image: 'http://127.0.0.1:9/a.png' }, 'image', () => llm],
    [
      'chat.completions image_url',
      '/v1/chat/completions',
      chatWith({ type: 'image_url', image_url: { url: 'http://169.254.169.254/latest/meta-data/' } }),
      'messages[0].content[1].image_url.url',
      () => llm,
    ],
    [
      'chat.completions image_url with userinfo',
      '/v1/chat/completions',
      chatWith({ type: 'image_url', image_url: { url: 'https://cdn.example.com@10.0.0.1/a.png' } }),
      'messages[0].content[1].image_url.url',
      () => llm,
    ],
    [
      'responses input_image',
      '/v1/responses',
      { model: 'resp-model', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'http://[::a9fe:a9fe]/' }] }] },
      'input[0].content[0].image_url',
      () => llm,
    ],
    ['images.native image list', '/api/v3/images/generations', { model: 'seedream', prompt: 'x', image: ['https://cdn.example.com/a.png', 'http://0x7f.1/b.png'] }, 'image[1]', () => llm],
    ['CreateAsset URL with a backslash', '/api/v3/open/CreateAsset', { GroupId: 'group-1', URL: 'https://media.example.com\\@127.0.0.1/a.png', AssetType: 'Image', Name: 'a' }, 'URL', () => openapi],
    [
      'video task image_url, IPv4-compatible metadata',
      '/api/v3/contents/generations/tasks',
      { model: 'seedance', content: [{ type: 'image_url', image_url: { url: 'http://[::a9fe:a9fe]/a.png' } }] },
      'content[0].image_url.url',
      () => ark,
    ],
  ];
  it.each(cases)('%s: 400 naming the field, the upstream receives nothing', async (_name, route, body, param, fake) => {
    const before = fake().requests.length;
    const res = await request(strict.app).post(route).set('Authorization', `Bearer ${KEY_A}`).send(body);
    expect({ status: res.status, type: res.body.error?.type, code: res.body.error?.code, param: res.body.error?.param }).toStrictEqual({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_request_error',
      param,
    });
    expect(res.body.error.message).toMatch(new RegExp(`^${param.replace(/[[\].]/g, '\\$&')} `));
    expect(fake().requests).toHaveLength(before);
  });

  it.each([
    ['chat.completions', '/v1/chat/completions', chatWith({ type: 'image_url', image_url: { url: 'HTTPS://CDN.Example.COM/a/../b.png' } }), () => llm, 'messages.0.content.1.image_url.url'],
    [
      'responses',
      '/v1/responses',
      { model: 'resp-model', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'HTTPS://CDN.Example.COM/a/../b.png' }] }] },
      () => llm,
      'input.0.content.0.image_url',
    ],
    ['images.native', '/api/v3/images/generations', { model: 'seedream', prompt: 'x', image: 'HTTPS://CDN.Example.COM/a/../b.png' }, () => llm, 'image'],
    [
      'images.generations (DashScope)',
      '/v1/images/generations',
      { model: 'x-image-edit', input: { messages: [{ role: 'user', content: [{ image: 'HTTPS://CDN.Example.COM/a/../b.png' }, { text: 'x' }] }] } },
      () => dashscope,
      'input.messages.0.content.0.image',
    ],
    ['CreateAsset', '/api/v3/open/CreateAsset', { GroupId: 'group-1', URL: 'https://CDN.Example.COM/a/../b.png', AssetType: 'Image', Name: 'b' }, () => openapi, 'URL'],
    [
      'video.tasks',
      '/api/v3/contents/generations/tasks',
      {
        model: 'seedance',
        content: [
          { type: 'text', text: 'x' },
          { type: 'image_url', image_url: { url: 'HTTPS://CDN.Example.COM/a/../b.png' } },
        ],
      },
      () => ark,
      'content.1.image_url.url',
    ],
  ] as Array<[string, string, Record<string, unknown>, () => FakeUpstream, string]>)('%s forwards the normalized URL', async (_name, route, body, fake, field) => {
    const before = fake().requests.length;
    await request(strict.app).post(route).set('Authorization', `Bearer ${KEY_A}`).send(body);
    const sent = fake()
      .requests.slice(before)
      .filter((entry) => entry.method === 'POST');
    expect(sent).toHaveLength(1);
    expect(field.split('.').reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], sent[0]!.json)).toBe('https://cdn.example.com/b.png');
  });
});
