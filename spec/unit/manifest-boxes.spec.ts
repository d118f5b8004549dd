// Finding a C2PA manifest store by walking a file's boxes (lib/provenance/manifest-boxes.ts): each of
// the reference implementation's fixtures is told by its format and whether it carries a store; a
// truncated or malformed file never throws (it reads as no store); a JPEG APP11 segment that is not
// C2PA's is not taken for one; an ISO BMFF file with the C2PA `uuid` box is found wherever the walk
// allows it (top level, inside `moov`, with a 64-bit or to-the-end size).
import { describe, expect, it } from 'vitest';
import { hasManifestStore, provenanceFormatOf } from '../../lib/provenance/manifest-boxes.js';
import { c2paFixture } from '../helpers/fake-c2pa-vendor.js';
import { seededRandom } from '../helpers/seeded-random.js';

const FIXTURES: Array<[string, string | undefined, boolean]> = [
  ['C.jpg', 'image/jpeg', true],
  ['CA.jpg', 'image/jpeg', true],
  ['XCA.jpg', 'image/jpeg', true],
  ['E-sig-CA.jpg', 'image/jpeg', true],
  ['no_manifest.jpg', 'image/jpeg', false],
  ['sample1.png', 'image/png', false],
  ['sample1.webp', 'image/webp', false],
  ['video1.mp4', 'video/mp4', true],
  ['dashinit.mp4', 'video/mp4', true],
];

const C2PA_UUID = Buffer.from('d8fec3d61b0e483c92975828877ec481', 'hex');

function box(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
}

const FTYP = box('ftyp', Buffer.from('isom\0\0\0\x01isomavc1', 'latin1'));
const C2PA_BOX = box('uuid', Buffer.concat([C2PA_UUID, Buffer.alloc(4), Buffer.from('jumb c2pa manifest store', 'latin1')]));

function jpegWith(...segments: Buffer[]): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xd8]), ...segments, Buffer.from([0xff, 0xda, 0x00, 0x02, 0xff, 0xd9])]);
}

function app11(body: Buffer): Buffer {
  const head = Buffer.from([0xff, 0xeb, 0, 0]);
  head.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([head, body]);
}

describe('the reference fixtures', () => {
  it.each(FIXTURES)('%s is %s, with a manifest store: %s', (name, format, has) => {
    const bytes = c2paFixture(name);
    expect(provenanceFormatOf(bytes)).toBe(format);
    expect(hasManifestStore(bytes, format as NonNullable<ReturnType<typeof provenanceFormatOf>>)).toBe(has);
  });

  it.each(FIXTURES)('%s truncated anywhere never throws', (name, format) => {
    const bytes = c2paFixture(name);
    const random = seededRandom(name.length);
    const cuts = [0, 1, 2, 3, 4, 8, 11, 12, 16, 64, 200, Math.floor(bytes.length / 2), bytes.length - 1];
    for (let index = 0; index < 40; index += 1) cuts.push(Math.floor(random() * bytes.length));
    for (const cut of cuts) {
      const part = bytes.subarray(0, cut);
      expect(() => provenanceFormatOf(part)).not.toThrow();
      expect(() => hasManifestStore(part, format as 'image/jpeg')).not.toThrow();
    }
  });

  it.each(FIXTURES)('%s with random bytes over its middle never throws', (name, format) => {
    const random = seededRandom(name.length * 7);
    for (let round = 0; round < 20; round += 1) {
      const bytes = Buffer.from(c2paFixture(name));
      const from = 2 + Math.floor(random() * Math.min(bytes.length - 2, 4096));
      for (let at = from; at < Math.min(bytes.length, from + 64); at += 1) bytes[at] = Math.floor(random() * 256);
      expect(() => hasManifestStore(bytes, format as 'image/jpeg')).not.toThrow();
    }
  });
});

describe('made-up files', () => {
  it.each([
    ['empty', Buffer.alloc(0), undefined],
    ['a GIF', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), undefined],
    ['text', Buffer.from('{"error":"not an image"}'), undefined],
    ['a RIFF that is not WebP', Buffer.from('RIFF\x04\0\0\0WAVE', 'latin1'), undefined],
    ['a PNG signature alone', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), 'image/png'],
  ])('%s is told as %s', (_name, bytes, format) => {
    expect(provenanceFormatOf(bytes)).toBe(format);
  });

  it.each([
    ['an APP11 without the JPEG XT identifier', app11(Buffer.from('XX jumb c2pa', 'latin1')), false],
    ['a JPEG XT APP11 that is not JUMBF', app11(Buffer.from('JP\0\x01 some other payload', 'latin1')), false],
    ['a JUMBF APP11 labelled other than c2pa', app11(Buffer.from('JP\0\x01jumbjumdxmp-only', 'latin1')), false],
    ['a C2PA JUMBF APP11', app11(Buffer.from('JP\0\x01\0\0\0\x01jumbjumdc2pa', 'latin1')), true],
    ['an APP11 whose length runs past the end', Buffer.from([0xff, 0xeb, 0xff, 0xff, 0x4a, 0x50]), false],
    ['a segment length under 2', Buffer.from([0xff, 0xe0, 0x00, 0x01]), false],
  ])('a JPEG with %s: store %s', (_name, segment, has) => {
    const bytes = jpegWith(segment);
    expect(provenanceFormatOf(bytes)).toBe('image/jpeg');
    expect(hasManifestStore(bytes, 'image/jpeg')).toBe(has);
  });

  const largesize = (() => {
    const body = C2PA_BOX.subarray(8);
    const head = Buffer.alloc(16);
    head.writeUInt32BE(1, 0);
    head.write('uuid', 4, 'latin1');
    head.writeBigUInt64BE(BigInt(16 + body.length), 8);
    return Buffer.concat([head, body]);
  })();
  const toTheEnd = Buffer.concat([Buffer.from([0, 0, 0, 0]), C2PA_BOX.subarray(4)]);

  it.each([
    ['the C2PA uuid box at the top level', Buffer.concat([FTYP, box('free', Buffer.alloc(16)), C2PA_BOX]), true],
    ['the C2PA uuid box inside moov', Buffer.concat([FTYP, box('moov', Buffer.concat([box('mvhd', Buffer.alloc(100)), C2PA_BOX]))]), true],
    ['the C2PA uuid box with a 64-bit size', Buffer.concat([FTYP, largesize]), true],
    ['the C2PA uuid box sized to the end of the file', Buffer.concat([FTYP, toTheEnd]), true],
    ['another uuid box', Buffer.concat([FTYP, box('uuid', Buffer.concat([Buffer.alloc(16, 7), Buffer.alloc(8)]))]), false],
    ['a box whose size runs past the end', Buffer.concat([FTYP, Buffer.from([0x7f, 0xff, 0xff, 0xff]), Buffer.from('uuid'), C2PA_UUID]), false],
    ['a box whose size is under its header', Buffer.concat([FTYP, Buffer.from([0, 0, 0, 4]), Buffer.from('uuid'), C2PA_UUID]), false],
    ['a 64-bit size larger than any file', Buffer.concat([FTYP, Buffer.from([0, 0, 0, 1]), Buffer.from('uuid'), Buffer.from('ffffffffffffffff', 'hex'), C2PA_UUID]), false],
  ])('an MP4 with %s: store %s', (_name, bytes, has) => {
    expect(provenanceFormatOf(bytes)).toBe('video/mp4');
    expect(hasManifestStore(bytes, 'video/mp4')).toBe(has);
  });

  it('a PNG whose chunk lengths run past the end, and a WebP with a huge chunk, read as no store', () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.from('IHDR'), Buffer.alloc(8)]);
    expect(hasManifestStore(png, 'image/png')).toBe(false);
    const webp = Buffer.concat([Buffer.from('RIFF\0\0\0\0WEBP', 'latin1'), Buffer.from('VP8 ', 'latin1'), Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.alloc(8)]);
    expect(hasManifestStore(webp, 'image/webp')).toBe(false);
  });
});
