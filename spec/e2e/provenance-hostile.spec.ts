// Hostile and odd vendor files under Content Credentials (docs/provenance.md): a JPEG whose C2PA APP11
// is cut short, one whose JUMBF box claims gigabytes, a PNG whose `caBX` chunk is random bytes, and a
// GIF the signer cannot embed into. Each is answered 200 with the vendor's bytes and reported `invalid`
// or `absent`, never a crash or a 500, and the reader still reads a good file afterwards.
import { deflateSync } from 'node:zlib';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { localResultStorage } from '../../lib/storage.js';
import { C2PA_ANCHORS, C2PA_SIGNING, c2paFixture, resolveC2paVendor, startFakeC2paVendor } from '../helpers/fake-c2pa-vendor.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { pngChunk } from '../helpers/solid-png.js';
import { tempDir } from '../helpers/temp-dir.js';

const ANCHORS = C2PA_ANCHORS;
const SIGN = C2PA_SIGNING;

const gw = await gatewayWith({
  fakes: { vendor: startFakeC2paVendor },
  resolve: resolveC2paVendor,
  storage: localResultStorage({ directory: tempDir('provenance-hostile-'), secret: 'provenance-results-secret-0123456789' }),
  provenance: (caller) => (caller.id === 'tenant-a' ? { trustAnchors: ANCHORS, sign: SIGN } : { trustAnchors: ANCHORS }),
  resetEach: true,
});
const { vendor } = gw.fakes;

/** The offset of the first C2PA APP11 segment of a JPEG (its 0xFFEB marker). */
function firstApp11(jpeg: Buffer): number {
  let at = 2;
  while (jpeg[at + 1] !== 0xeb) at += 2 + jpeg.readUInt16BE(at + 2);
  return at;
}

/** C.jpg with its first APP11 cut to `keep` bytes of payload (the segment length says so: a well-formed JPEG, a broken JUMBF). */
function truncatedApp11(keep: number): Buffer {
  const jpeg = c2paFixture('C.jpg');
  const at = firstApp11(jpeg);
  const length = jpeg.readUInt16BE(at + 2);
  const head = Buffer.from(jpeg.subarray(at, at + 4));
  head.writeUInt16BE(2 + keep, 2);
  return Buffer.concat([jpeg.subarray(0, at), head, jpeg.subarray(at + 4, at + 4 + keep), jpeg.subarray(at + 2 + length)]);
}

/** C.jpg whose manifest store's description box claims nearly 4 GB (the reader takes the superbox's own size from the segments). */
function hugeJumbf(): Buffer {
  const jpeg = Buffer.from(c2paFixture('C.jpg'));
  const at = firstApp11(jpeg);
  // APP11: marker, length, "JP", instance (2), sequence (4), the superbox's LBox and TBox, then its description box's LBox
  jpeg.writeUInt32BE(0xfffffff0, at + 20);
  return jpeg;
}

/** A one-pixel PNG with a `caBX` chunk of random bytes (some starting like a JUMBF box). */
function randomCabx(seed: number, jumbfHead: boolean): Buffer {
  const random = seededRandom(seed);
  const noise = Buffer.from(Array.from({ length: 2048 }, () => Math.floor(random() * 256)));
  if (jumbfHead) Buffer.from('\0\0\x08\0jumb\0\0\0\x20jumdc2pa', 'latin1').copy(noise);
  const header = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]);
  const pixels = deflateSync(Buffer.from([0, 255, 0, 0, 255]));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', header), pngChunk('caBX', noise), pngChunk('IDAT', pixels), pngChunk('IEND', Buffer.alloc(0))]);
}

const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

vendor.files.set('cut-app11-64.jpg', truncatedApp11(64));
vendor.files.set('cut-app11-2000.jpg', truncatedApp11(2000));
vendor.files.set('huge-jumbf.jpg', hugeJumbf());
vendor.files.set('random-cabx.png', randomCabx(1, false));
vendor.files.set('jumbf-cabx.png', randomCabx(2, true));
vendor.files.set('pixel.gif', GIF);

const HOSTILE = ['cut-app11-64.jpg', 'cut-app11-2000.jpg', 'huge-jumbf.jpg', 'random-cabx.png', 'jumbf-cabx.png'];

describe('hostile vendor files', () => {
  it.each([
    ['a reading caller', KEY_B],
    ['a signing caller', KEY_A],
  ])('%s: a broken manifest store is answered 200, its bytes as sent, reported invalid or absent; a good file reads valid after', async (_who, key) => {
    const res = await request(gw.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${key}`)
      .send({ model: 'gpt-image-1', prompt: [...HOSTILE, 'C.jpg'].join(','), n: HOSTILE.length + 1 });
    expect(res.status).toBe(200);
    const data = res.body.data as Array<{ b64_json: string; provenance: { c2pa: string; codes?: string[] } }>;
    for (const [index, name] of HOSTILE.entries()) {
      const report = data[index]!.provenance;
      expect(['invalid', 'absent'], name).toContain(report.c2pa);
      if (report.c2pa === 'invalid') expect(report.codes?.length, name).toBeGreaterThan(0);
      // a store the reader cannot parse cannot be the parent of the operator's manifest: unsigned, as sent, for both callers
      expect(Buffer.from(data[index]!.b64_json, 'base64').equals(vendor.files.get(name)!), name).toBe(true);
    }
    expect(data.at(-1)!.provenance).toMatchObject({ c2pa: 'valid', trusted: true });
  });

  it('a GIF with signing on is delivered as sent and reported absent, as a url from storage too', async () => {
    for (const format of ['b64_json', 'url'] as const) {
      const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'gpt-image-1', prompt: 'pixel.gif', response_format: format });
      expect(res.status).toBe(200);
      const item = res.body.data[0] as { b64_json?: string; url?: string; provenance: unknown };
      expect(item.provenance).toEqual({ c2pa: 'absent' });
      let bytes: Buffer;
      if (format === 'b64_json') bytes = Buffer.from(item.b64_json!, 'base64');
      else {
        const at = new URL(item.url!);
        bytes = Buffer.from(
          (
            await request(gw.app)
              .get(at.pathname + at.search)
              .buffer(true)
          ).body as Buffer,
        );
      }
      expect(bytes.equals(GIF)).toBe(true);
    }
    await expect.poll(() => gw.usage.length).toBe(2);
    for (const event of gw.usage) expect(event).toMatchObject({ status: 200, provenance: ['absent'] });
  });
});

describe("a tenant's hostile edit inputs", () => {
  it.each([
    { name: 'an APP11 cut at 64 bytes', image: () => truncatedApp11(64) },
    { name: 'an APP11 cut at 2000 bytes', image: () => truncatedApp11(2000) },
    { name: 'a JUMBF box claiming 4 GB', image: hugeJumbf },
  ])('an uploaded image with $name is no ingredient, and the signed edit is answered, not a 502 the operator pays for', async ({ image }) => {
    const before = vendor.started();
    const res = await request(gw.app)
      .post('/v1/images/edits')
      .set('Authorization', `Bearer ${KEY_A}`)
      .field('model', 'gpt-image-1')
      .field('prompt', 'no_manifest.jpg')
      .attach('image', image(), { filename: 'in.jpg', contentType: 'image/jpeg' });
    expect(res.status).toBe(200);
    expect(res.body.data[0].provenance).toMatchObject({ c2pa: 'valid', trusted: true, actions: ['c2pa.created'] });
    expect(vendor.started() - before).toBe(1);
    await expect.poll(() => gw.usage.length).toBe(1);
    expect(gw.usage[0]).toMatchObject({ status: 200, images: 1, provenance: ['valid'] });
  });
});
