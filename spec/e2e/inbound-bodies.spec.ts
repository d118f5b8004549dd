// Inbound bodies (docs/security.md "One request is bounded"): compressed bodies refused by default (415) and bounded when allowed,
// JSON bodies with more members than limits.jsonMembers refused before parsing (413), bodies that
// stop arriving answered 408 by the router's own read deadline, and large Data URLs sent upstream
// intact through the streamed encoding. Every refusal: the whole error object, nothing sent upstream.
import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { GatewayOptions } from '../../lib/index.js';
import { startFakeDashscope } from '../helpers/fake-dashscope.js';
import { KEY_A, type TestGateway, listen } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';
import { rawClient, rawSocketExchange } from '../helpers/raw-client.js';

const GENERATIONS = '/v1/images/generations';
const VALID = JSON.stringify({ model: 'x-image-2.0', prompt: 'a cat' });

const base = await gatewayWith({
  fakes: { dashscope: startFakeDashscope },
  resolve: (_input, { dashscope }) => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'sk-up' }),
});
const { dashscope } = base.fakes;

/** A gateway with these options in front of the shared fake DashScope, torn down with the fixture. */
function gatewayOf(options: Partial<Omit<GatewayOptions, 'resolveUpstream'>> = {}): TestGateway {
  return base.variant(options);
}

/** POSTs the bytes as they are (supertest would serialize a Buffer sent as JSON). */
async function post(gateway: TestGateway, body: Buffer | string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; body: unknown }> {
  const server = await listen(gateway.app);
  const client = rawClient(server.url);
  try {
    const res = await client.send({ path: GENERATIONS, body, headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', ...headers } });
    return { status: res.status, text: res.text, body: JSON.parse(res.text) };
  } finally {
    client.close();
    await server.close();
  }
}

const error = (status: number, code: string, message: string) => ({ status, body: { error: { message, type: 'invalid_request_error', code, param: null } } });

describe('Content-Encoding on JSON routes (default: refused)', () => {
  it.each<[string, Buffer]>([
    ['gzip', zlib.gzipSync(VALID)],
    ['deflate', zlib.deflateSync(VALID)],
    ['br', zlib.brotliCompressSync(VALID)],
    ['x-gzip', zlib.gzipSync(VALID)],
  ])('a %s body gets 415 unsupported_media_type and the upstream is not called', async (coding, body) => {
    const before = dashscope.apiRequests().length;
    const res = await post(gatewayOf(), body, { 'content-encoding': coding });
    expect({ status: res.status, body: res.body }).toEqual(error(415, 'unsupported_media_type', `Content-Encoding '${coding}' is not accepted: send the request body uncompressed (identity)`));
    expect(dashscope.apiRequests().length).toBe(before);
  });

  it('Content-Encoding identity is served', async () => {
    const res = await post(gatewayOf(), VALID, { 'content-encoding': 'identity' });
    expect(res.status, res.text).toBe(200);
  });

  it('a multipart edit with Content-Encoding gzip gets 415 and the upstream is not called', async () => {
    const before = dashscope.apiRequests().length;
    const boundary = 'b0undary';
    const form = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nx-image-edit\r\n--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nx\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
      TINY_PNG,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const res = await request(gatewayOf().app)
      .post('/v1/images/edits')
      .set('authorization', `Bearer ${KEY_A}`)
      .set('content-type', `multipart/form-data; boundary=${boundary}`)
      .set('content-encoding', 'gzip')
      .send(zlib.gzipSync(form));
    expect({ status: res.status, body: res.body }).toEqual(error(415, 'unsupported_media_type', "Content-Encoding 'gzip' is not accepted: send the request body uncompressed (identity)"));
    expect(dashscope.apiRequests().length).toBe(before);
  });
});

describe('Content-Encoding with limits.compressedBodies allowed', () => {
  it('a gzip body is decoded and served', async () => {
    const res = await post(gatewayOf({ limits: { compressedBodies: true } }), zlib.gzipSync(VALID), { 'content-encoding': 'gzip' });
    expect(res.status, res.text).toBe(200);
    expect(dashscope.apiRequests().at(-1)?.json).toMatchObject({ input: { messages: [{ content: [{ text: 'a cat' }] }] } });
  });

  it('a brotli bomb (a few hundred bytes, 8 MB decoded) gets 413 and the upstream is not called', async () => {
    const before = dashscope.apiRequests().length;
    const bomb = zlib.brotliCompressSync(Buffer.concat([Buffer.from('{"model":"x-image-2.0","prompt":"'), Buffer.alloc(8 * 1024 * 1024, 0x61), Buffer.from('"}')]));
    const res = await post(gatewayOf({ limits: { compressedBodies: { maxDecodedBytes: 16 * 1024 * 1024, maxRatio: 20 } } }), bomb, { 'content-encoding': 'br' });
    expect({ status: res.status, body: res.body }).toEqual(error(413, 'request_too_large', 'The compressed request body inflates more than 20 times: send it uncompressed'));
    expect(dashscope.apiRequests().length).toBe(before);
  });

  it('a body that decodes past maxDecodedBytes gets 413 naming the limit', async () => {
    const random = zlib.gzipSync(Buffer.from(JSON.stringify({ model: 'x-image-2.0', prompt: randomBytes(300_000).toString('base64') })));
    const res = await post(gatewayOf({ limits: { compressedBodies: { maxDecodedBytes: 100_000 } } }), random, { 'content-encoding': 'gzip' });
    expect({ status: res.status, body: res.body }).toEqual(error(413, 'request_too_large', 'The request body decodes to more than the 100000 byte limit for compressed bodies'));
  });

  it('a body that is not what its Content-Encoding says gets 400', async () => {
    const res = await post(gatewayOf({ limits: { compressedBodies: true } }), VALID, { 'content-encoding': 'gzip' });
    expect({ status: res.status, body: res.body }).toEqual(error(400, 'invalid_request_error', 'The request body is not valid gzip data (Content-Encoding: gzip)'));
  });
});

describe('limits.jsonMembers', () => {
  const withMembers = (count: number) => JSON.stringify({ model: 'x-image-2.0', prompt: 'a cat', metadata: Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i])) });

  it('a body with more members than the limit gets 413 and the upstream is not called', async () => {
    const before = dashscope.apiRequests().length;
    const res = await post(gatewayOf({ limits: { jsonMembers: 50 } }), withMembers(100));
    expect({ status: res.status, body: res.body }).toEqual(error(413, 'request_too_large', 'The request body has more than 50 JSON members and array items, the limit'));
    expect(dashscope.apiRequests().length).toBe(before);
  });

  it('array items count too', async () => {
    const res = await post(gatewayOf({ limits: { jsonMembers: 50 } }), JSON.stringify({ model: 'x-image-2.0', prompt: 'a cat', list: Array.from({ length: 100 }, () => 0) }));
    expect(res.status, res.text).toBe(413);
  });

  it('commas, braces and brackets inside strings do not count', async () => {
    const res = await post(gatewayOf({ limits: { jsonMembers: 50 } }), JSON.stringify({ model: 'x-image-2.0', prompt: `a cat ${',{['.repeat(200)} \\" ,,,` }));
    expect(res.status, res.text).toBe(200);
  });

  it('a body under the limit is served', async () => {
    const res = await post(gatewayOf({ limits: { jsonMembers: 50 } }), withMembers(20));
    expect(res.status, res.text).toBe(200);
  });
});

describe('large Data URLs are sent upstream intact (streamed encoding)', () => {
  it('three 1 MiB Data URLs arrive byte for byte', async () => {
    const image = Buffer.concat([TINY_PNG, Buffer.alloc(1024 * 1024, 9)]);
    const url = `data:image/png;base64,${image.toString('base64')}`;
    const body = JSON.stringify({ model: 'x-image-edit', input: { messages: [{ role: 'user', content: [{ image: url }, { image: url }, { image: url }, { text: 'merge' }] }] } });
    const res = await post(gatewayOf(), body);
    expect(res.status, res.text).toBe(200);
    const sent = dashscope.apiRequests().at(-1)!;
    expect(Number(sent.headers['content-length'])).toBe(sent.body.length);
    const content = (sent.json as { input: { messages: Array<{ content: Array<{ image?: string }> }> } }).input.messages[0]!.content;
    expect(content.slice(0, 3).map((item) => item.image === url)).toEqual([true, true, true]);
  });

  it('long strings decoded from the body keep their place, their neighbours and JSON rules', async () => {
    // the parser cuts long escape-free values out of the text it parses (json-body.ts): a long
    // value next to a short one, in an array and under a vendor field must all come back in place
    const url = `data:image/png;base64,${Buffer.concat([TINY_PNG, Buffer.alloc(200 * 1024, 5)]).toString('base64')}`;
    const vendor = 'v'.repeat(100 * 1024);
    const body = JSON.stringify({
      model: 'x-image-edit',
      input: { messages: [{ role: 'user', content: [{ image: url }, { text: 'keep "quoted" \\ text' }] }] },
      parameters: { vendor_blob: vendor, list: [vendor, 'short'] },
    });
    const res = await post(gatewayOf(), body);
    expect(res.status, res.text).toBe(200);
    const sent = dashscope.apiRequests().at(-1)!.json as { input: { messages: Array<{ content: unknown[] }> }; parameters: Record<string, unknown> };
    expect(sent.input.messages[0]!.content).toEqual([{ image: url }, { text: 'keep "quoted" \\ text' }]);
    expect(sent.parameters).toEqual({ vendor_blob: vendor, list: [vendor, 'short'] });
  });

  it("a Data URL written with '\\/' escapes (PHP's json_encode) arrives upstream as the same URL", async () => {
    const url = `data:image/png;base64,${Buffer.concat([TINY_PNG, Buffer.alloc(300 * 1024, 0xfb)]).toString('base64')}`;
    expect(url).toContain('/');
    const body = JSON.stringify({ model: 'x-image-edit', input: { messages: [{ role: 'user', content: [{ image: url }, { text: 'sharpen' }] }] } }).replaceAll('/', '\\/');
    const res = await post(gatewayOf(), body);
    expect(res.status, res.text).toBe(200);
    const sent = dashscope.apiRequests().at(-1)!.json as { input: { messages: Array<{ content: Array<{ image?: string }> }> } };
    expect(sent.input.messages[0]!.content[0]!.image === url).toBe(true);
  });

  it('more JSON text than limits.jsonTextBytes outside long strings gets 413 and the upstream is not called', async () => {
    const before = dashscope.apiRequests().length;
    // 2,000 strings of 600 bytes: none is long, so all of it would go through JSON.parse
    const notes = Array.from({ length: 2_000 }, (_, index) => `${index} ${'x'.repeat(600)}`);
    const res = await post(gatewayOf({ limits: { jsonTextBytes: 1024 * 1024 } }), JSON.stringify({ model: 'x-image-2.0', prompt: 'a cat', parameters: { notes } }));
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      error: {
        message: expect.stringMatching(/^The request body has \d+ bytes of JSON outside long string values, more than the 1048576 byte limit/),
        type: 'invalid_request_error',
        code: 'request_too_large',
        param: null,
      },
    });
    expect(dashscope.apiRequests().length).toBe(before);
  });

  it('a raw control character inside a long string is invalid JSON (400), as inside a short one', async () => {
    const before = dashscope.apiRequests().length;
    const long = `${'a'.repeat(70 * 1024)}\u0001${'b'.repeat(10)}`;
    const body = `{"model":"x-image-2.0","prompt":"${long}"}`;
    const res = await post(gatewayOf(), body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { message: 'The request body is not valid JSON (a control character inside a string)', type: 'invalid_request_error', code: 'invalid_request_error', param: null },
    });
    expect(dashscope.apiRequests().length).toBe(before);
  });
});

describe('limits.bodyReadTimeoutMs: a body that stops arriving', () => {
  /** Sends the head and part of the body over a raw socket, then nothing; resolves with all it got once the server closes. */
  async function stall(gateway: TestGateway, head: string, partial: string): Promise<string> {
    const server = await listen(gateway.app);
    try {
      // the exchange's 8 s deadline only fails a test that hangs; the gateway's own limit in these tests is 300 ms
      return await rawSocketExchange(server.url, head + partial);
    } finally {
      await server.close();
    }
  }

  function parse(raw: string): { status: number; connection?: string; body: unknown } {
    const [head, body] = raw.split('\r\n\r\n', 2) as [string, string];
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
    const connection = /\r\nconnection: *([^\r]*)/i.exec(head)?.[1]?.toLowerCase();
    return { status, connection, body: JSON.parse(body) };
  }

  const timeout = { error: { message: 'The request body was not received within 300 ms: send the whole body without pausing', type: 'invalid_request_error', code: 'request_timeout', param: null } };

  it('JSON: 408 in the error shape, the connection closed, nothing sent upstream', async () => {
    const before = dashscope.apiRequests().length;
    const head = `POST ${GENERATIONS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
    const answer = parse(await stall(gatewayOf({ limits: { bodyReadTimeoutMs: 300 } }), head, '{"model":"x-image-2.0","pro'));
    expect(answer).toEqual({ status: 408, connection: 'close', body: timeout });
    expect(dashscope.apiRequests().length).toBe(before);
  });

  it('JSON, chunked: 408 in the error shape', async () => {
    const head = `POST ${GENERATIONS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const answer = parse(await stall(gatewayOf({ limits: { bodyReadTimeoutMs: 300 } }), head, '5\r\n{"mod\r\n'));
    expect(answer).toEqual({ status: 408, connection: 'close', body: timeout });
  });

  it('multipart: 408 in the error shape, the connection closed, nothing sent upstream', async () => {
    const before = dashscope.apiRequests().length;
    const head = `POST /v1/images/edits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\nContent-Type: multipart/form-data; boundary=xyz\r\nContent-Length: 100000\r\n\r\n`;
    const partial = '--xyz\r\nContent-Disposition: form-data; name="model"\r\n\r\nx-image-edit\r\n--xyz\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\n';
    const answer = parse(await stall(gatewayOf({ limits: { bodyReadTimeoutMs: 300 } }), head, partial));
    expect(answer).toEqual({ status: 408, connection: 'close', body: timeout });
    expect(dashscope.apiRequests().length).toBe(before);
  });
});
