// Large edit uploads arrive upstream intact (docs/benchmarks.md "Multipart edits"): the files are sent
// from the chunks they arrived in, never joined, re-sent as a multipart form to an OpenAI-compatible
// upstream and encoded into Data URLs for DashScope. Files of a few MB span many socket reads, so
// chunk boundaries, the base64 carried across them and the socket's backpressure are all exercised.
import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { startFakeDashscope } from '../helpers/fake-dashscope.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { imageUpstream } from '../helpers/image-model-map.js';

const gateway = await gatewayWith({ fakes: { dashscope: startFakeDashscope, openai: startFakeOpenAI }, resolve: (input, fakes) => imageUpstream(input.model, fakes), resetEach: true });
const { dashscope, openai } = gateway.fakes;

/** A PNG signature then random bytes: sizes that are not multiples of 3 or of a socket read. */
function upload(size: number): Buffer {
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(size - 8)]);
}

const sha = (bytes: Buffer | Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const files = [upload(3 * 1024 * 1024 + 1), upload(2 * 1024 * 1024 + 2), upload(65_537)];

describe('large uploads arrive upstream byte for byte', () => {
  it('an OpenAI-compatible upstream gets every file, the mask and the fields, with the exact Content-Length', async () => {
    const res = await request(gateway.app)
      .post('/v1/images/edits')
      .set('Authorization', `Bearer ${KEY_A}`)
      .field('model', 'gpt-image-1')
      .field('prompt', 'line one\nline two')
      .attach('image[]', files[0]!, { filename: 'first "one".png', contentType: 'image/png' })
      .attach('image[]', files[1]!, { filename: 'second.png', contentType: 'image/png' })
      .attach('mask', files[2]!, { filename: 'mask.png', contentType: 'image/png' });
    expect(res.status).toBe(200);

    const [sent] = openai.apiRequests();
    expect(Number(sent!.headers['content-length'])).toBe(sent!.body.length);
    expect(sent!.headers['transfer-encoding']).toBeUndefined();
    const form = await new Response(new Uint8Array(sent!.body), { headers: { 'content-type': String(sent!.headers['content-type']) } }).formData();
    expect(form.getAll('model')).toEqual(['gpt-image-1-upstream']);
    expect(form.getAll('prompt')).toEqual(['line one\r\nline two']);
    const received = await Promise.all(
      [...form.getAll('image[]'), ...form.getAll('mask')].map(async (value) => ({ name: (value as File).name, sha: sha(new Uint8Array(await (value as File).arrayBuffer())) })),
    );
    expect(received).toEqual([
      { name: 'first "one".png', sha: sha(files[0]!) },
      { name: 'second.png', sha: sha(files[1]!) },
      { name: 'mask.png', sha: sha(files[2]!) },
    ]);
  });

  it('DashScope gets each file as a Data URL that decodes to the same bytes', async () => {
    const res = await request(gateway.app)
      .post('/v1/images/edits')
      .set('Authorization', `Bearer ${KEY_A}`)
      .field('model', 'x-image-edit')
      .field('prompt', 'merge them')
      .attach('image[]', files[0]!, { filename: 'a.png', contentType: 'image/png' })
      .attach('image[]', files[1]!, { filename: 'b.png', contentType: 'image/png' });
    expect(res.status).toBe(200);

    const [sent] = dashscope.apiRequests();
    expect(Number(sent!.headers['content-length'])).toBe(sent!.body.length);
    const body = sent!.json as { input: { messages: Array<{ content: Array<{ image?: string }> }> } };
    const images = body.input.messages[0]!.content.flatMap((item) => (item.image ? [item.image] : []));
    expect(images.map((url) => url.slice(0, 'data:image/png;base64,'.length))).toEqual(['data:image/png;base64,', 'data:image/png;base64,']);
    expect(images.map((url) => sha(Buffer.from(url.slice('data:image/png;base64,'.length), 'base64')))).toEqual([sha(files[0]!), sha(files[1]!)]);
  });
});
