// Large request bodies held without copies (docs/benchmarks.md "Streams and memory"). A long
// image Data URL on POST /v1/images/generations stays a view of the body's bytes (DataUrlText) yet
// reaches every upstream as the same URL, with the same checks and answers as a string; multipart
// uploads stay the chunks they arrived in and reach DashScope as the exact base64 of their bytes.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { Upstream } from '../../lib/index.js';
import { startFakeDashscope } from '../helpers/fake-dashscope.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { imageUpstream } from '../helpers/image-model-map.js';
import { TINY_PNG } from '../helpers/images.js';

const seen: unknown[] = [];
const gateway = await gatewayWith({
  fakes: { dashscope: startFakeDashscope, openai: startFakeOpenAI },
  resolve: (input, fakes): Upstream | null => {
    seen.push(input.req?.body);
    return imageUpstream(input.model, fakes);
  },
  resetEach: true,
});
const { dashscope, openai } = gateway.fakes;
const limited = gateway.variant({ limits: { dataUrlBytes: 100_000 } });

/** A PNG signature and `bytes` of noise: its base64 holds '/' and '+'. */
const image = (bytes: number): Buffer => Buffer.concat([TINY_PNG, randomBytes(bytes)]);
const edit = (url: string) => ({ model: 'x-image-edit', input: { messages: [{ role: 'user', content: [{ image: url }, { text: 'sharpen' }] }] } });

function post(body: string, app = gateway.app) {
  return request(app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Content-Type', 'application/json').send(body);
}

type Sent = { input: { messages: Array<{ content: Array<{ image?: string }> }> } };

describe('a long image Data URL in a JSON body', () => {
  it('reaches the host as a view that serializes to the same URL, and DashScope as that URL', async () => {
    const url = `data:image/png;base64,${image(200_000).toString('base64')}`;
    const body = JSON.stringify(edit(url));
    seen.length = 0;
    const res = await post(body);
    expect(res.status, res.text).toBe(200);
    const parsed = seen.at(-1) as { input: { messages: Array<{ content: Array<{ image: unknown }> }> } };
    const value = parsed.input.messages[0]!.content[0]!.image;
    // not a string copy of the body's bytes: a view of them, which any serializer reads as the URL
    expect(typeof value).toBe('object');
    expect(String(value) === url).toBe(true);
    expect(JSON.stringify(parsed) === body).toBe(true);
    const sent = dashscope.apiRequests().at(-1)!;
    expect(Number(sent.headers['content-length'])).toBe(sent.body.length);
    expect((sent.json as Sent).input.messages[0]!.content[0]!.image === url).toBe(true);
  });

  it("written with '\\/' escapes and with a header parameter, arrives upstream as the same URL", async () => {
    const url = `data:image/png;name=a.png;base64,${image(150_000).toString('base64')}`;
    const res = await post(JSON.stringify(edit(url)).replaceAll('/', '\\/'));
    expect(res.status, res.text).toBe(200);
    expect((dashscope.apiRequests().at(-1)!.json as Sent).input.messages[0]!.content[0]!.image === url).toBe(true);
  });

  it('as the top-level image of an OpenAI-compatible model, passes the URL check and is forwarded as the same string', async () => {
    const url = `data:image/png;base64,${image(120_000).toString('base64')}`;
    const res = await post(JSON.stringify({ model: 'gpt-image-1', prompt: 'an otter', image: url }));
    expect(res.status, res.text).toBe(200);
    expect((openai.apiRequests().at(-1)!.json as { image?: string }).image === url).toBe(true);
  });

  it('with a character outside the base64 alphabet gets the same 400 as a short one, and the upstream is not called', async () => {
    const before = dashscope.apiRequests().length;
    const base64 = image(100_000).toString('base64');
    const res = await post(JSON.stringify(edit(`data:image/png;base64,${base64.slice(0, 5000)}*${base64.slice(5001)}`)));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ message: 'input.messages[0].content[0].image is not valid base64 after the Data URL header', type: 'invalid_request_error' });
    expect(dashscope.apiRequests().length).toBe(before);
  });

  it('over limits.dataUrlBytes gets the 413 naming its decoded size, and the upstream is not called', async () => {
    const before = dashscope.apiRequests().length;
    const bytes = image(150_000);
    const res = await post(JSON.stringify(edit(`data:image/png;base64,${bytes.toString('base64')}`)), limited.app);
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({
      message: `input.messages[0].content[0].image is a Data URL of ${bytes.length} bytes; the limit is 100000 bytes. Use a public URL for large images`,
      code: 'request_too_large',
    });
    expect(dashscope.apiRequests().length).toBe(before);
  });

  it('under any other key stays a string', async () => {
    const url = `data:image/png;base64,${image(100_000).toString('base64')}`;
    seen.length = 0;
    const res = await post(JSON.stringify({ ...edit(TINY_PNG_URL), parameters: { reference: url } }));
    expect(res.status, res.text).toBe(200);
    expect(typeof (seen.at(-1) as { parameters: { reference: unknown } }).parameters.reference).toBe('string');
  });
});

const TINY_PNG_URL = `data:image/png;base64,${TINY_PNG.toString('base64')}`;

describe('multipart uploads kept as the chunks they arrived in', () => {
  it('three uploads spanning many socket reads arrive upstream as the exact base64 of their bytes', async () => {
    // sizes that are not multiples of 3, so groups of 3 bytes straddle the reads' boundaries
    const files = [image(700_001), image(300_002), image(1_000)];
    let call = request(gateway.app).post('/v1/images/edits').set('Authorization', `Bearer ${KEY_A}`).field('model', 'x-image-edit').field('prompt', 'merge');
    files.forEach((file, index) => {
      call = call.attach('image[]', file, { filename: `${index}.png`, contentType: 'image/png' });
    });
    const res = await call;
    expect(res.status, res.text).toBe(200);
    const sent = dashscope.apiRequests().at(-1)!;
    expect(Number(sent.headers['content-length'])).toBe(sent.body.length);
    const images = (sent.json as Sent).input.messages[0]!.content.slice(0, 3).map((item) => item.image);
    expect(images.map((url, index) => url === `data:image/png;base64,${files[index]!.toString('base64')}`)).toEqual([true, true, true]);
  });
});
