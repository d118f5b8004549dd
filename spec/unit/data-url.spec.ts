// checkImageDataUrl: image Data URL values (contract §2.2, §8) checked for type, base64 form and decoded size.
import { describe, expect, it } from 'vitest';
import { type DataUrlCheck, checkImageDataUrl, checkImageDataUrlBytes } from '../../lib/images/data-url.js';

// a real 1x1 PNG; its base64 ends in '=='
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const MAX = 1024;

describe('checkImageDataUrl: valid', () => {
  it.each<{ name: string; value: string; mime: string; base64: string }>([
    { name: 'png, two padding chars', value: `data:image/png;base64,${PNG_1X1}`, mime: 'image/png', base64: PNG_1X1 },
    { name: 'one padding char', value: 'data:image/png;base64,AAA=', mime: 'image/png', base64: 'AAA=' },
    { name: 'two padding chars', value: 'data:image/jpeg;base64,AA==', mime: 'image/jpeg', base64: 'AA==' },
    { name: 'no padding', value: 'data:image/webp;base64,AAAAAAAA', mime: 'image/webp', base64: 'AAAAAAAA' },
    { name: 'a media-type parameter before ;base64', value: 'data:image/png;name=a.png;base64,AAAA', mime: 'image/png', base64: 'AAAA' },
    { name: 'upper-case header, mime lower-cased', value: 'DATA:IMAGE/PNG;BASE64,AAAA', mime: 'image/png', base64: 'AAAA' },
    { name: 'svg+xml subtype', value: 'data:image/svg+xml;base64,PHN2Zy8+', mime: 'image/svg+xml', base64: 'PHN2Zy8+' },
  ])('$name', ({ value, mime, base64 }) => {
    // the decoded size, from Node's own decoder, is the oracle
    const bytes = Buffer.from(base64, 'base64').length;
    expect(checkImageDataUrl(value, MAX)).toEqual<DataUrlCheck>({ ok: true, mime, bytes, base64Start: value.length - base64.length });
  });

  it('exactly at the limit is accepted', () => {
    const base64 = 'A'.repeat(8); // 6 bytes
    expect(checkImageDataUrl(`data:image/png;base64,${base64}`, 6)).toEqual<DataUrlCheck>({ ok: true, mime: 'image/png', bytes: 6, base64Start: 22 });
  });
});

describe('checkImageDataUrl: refused', () => {
  it.each<{ name: string; value: string; maxBytes?: number; expected: DataUrlCheck }>([
    { name: 'not an image type', value: 'data:text/plain;base64,aGVsbG8=', expected: { ok: false, reason: 'not_image' } },
    { name: 'not a data URL at all', value: 'https://example.com/a.png', expected: { ok: false, reason: 'not_image' } },
    { name: 'no ;base64 (percent-encoded form)', value: 'data:image/png,%89PNG', expected: { ok: false, reason: 'not_base64' } },
    { name: 'no ;base64 but a parameter', value: 'data:image/svg+xml;utf8,<svg/>', expected: { ok: false, reason: 'not_base64' } },
    { name: 'character outside the alphabet', value: 'data:image/png;base64,AA*A', expected: { ok: false, reason: 'bad_base64' } },
    { name: 'url-safe alphabet', value: 'data:image/png;base64,AA-_', expected: { ok: false, reason: 'bad_base64' } },
    { name: 'whitespace inside', value: 'data:image/png;base64,AAAA AAA', expected: { ok: false, reason: 'bad_base64' } },
    { name: 'padding in the middle', value: 'data:image/png;base64,AA=A', expected: { ok: false, reason: 'bad_base64' } },
    { name: 'three padding chars', value: 'data:image/png;base64,A===', expected: { ok: false, reason: 'bad_base64' } },
    { name: 'length not a multiple of 4', value: 'data:image/png;base64,AAAAA', expected: { ok: false, reason: 'bad_base64' } },
    { name: 'length not a multiple of 4, unpadded png', value: `data:image/png;base64,${PNG_1X1.replace(/=+$/, '')}`, expected: { ok: false, reason: 'bad_base64' } },
    { name: 'empty data', value: 'data:image/png;base64,', expected: { ok: false, reason: 'empty' } },
    { name: 'too large (7 bytes, limit 6)', value: 'data:image/png;base64,AAAAAAAAAA==', maxBytes: 6, expected: { ok: false, reason: 'too_large', bytes: 7 } },
    { name: 'too large (9 bytes, limit 6)', value: `data:image/png;base64,${'A'.repeat(12)}`, maxBytes: 6, expected: { ok: false, reason: 'too_large', bytes: 9 } },
  ])('$name', ({ value, maxBytes, expected }) => {
    expect(checkImageDataUrl(value, maxBytes ?? MAX)).toEqual(expected);
  });

  it('a huge value is refused as too_large with its decoded size', () => {
    const base64 = 'A'.repeat(4 * 1024 * 1024); // 3 MiB decoded
    expect(checkImageDataUrl(`data:image/png;base64,${base64}`, 1024 * 1024)).toEqual<DataUrlCheck>({ ok: false, reason: 'too_large', bytes: 3 * 1024 * 1024 });
  });
});

describe('checkImageDataUrlBytes: the same answers from the body bytes, never a whole string', () => {
  it.each([
    `data:image/png;base64,${PNG_1X1}`,
    'data:image/png;base64,AAA=',
    'data:IMAGE/WebP;name=a.webp;base64,AAAA',
    'data:text/plain;base64,aGVsbG8=',
    'data:image/png,%89PNG',
    'data:image/png;base64,AA*A',
    'data:image/png;base64,AA=A',
    'data:image/png;base64,A===',
    'data:image/png;base64,AAAAA',
    'data:image/png;base64,',
    'data:image/png;base64,=',
    `data:image/png;base64,${'A'.repeat(12)}`,
  ])('%s', (value) => {
    // the value inside a JSON body, as the parser finds it
    const body = Buffer.from(`{"image":"${value}"}`, 'latin1');
    for (const max of [MAX, 6]) expect(checkImageDataUrlBytes(body, 10, 10 + value.length, max)).toEqual(checkImageDataUrl(value, max));
  });

  it('a character outside the alphabet is found in any slice, the last one included', () => {
    const base64 = 'A'.repeat(300 * 1024);
    for (const at of [0, 64 * 1024 - 1, 64 * 1024, 200_000, base64.length - 1]) {
      const value = `data:image/png;base64,${base64.slice(0, at)}*${base64.slice(at + 1)}`;
      expect(checkImageDataUrlBytes(Buffer.from(value, 'latin1'), 0, value.length, 1024 * 1024)).toEqual<DataUrlCheck>({ ok: false, reason: 'bad_base64' });
    }
    const valid = `data:image/png;base64,${base64}`;
    expect(checkImageDataUrlBytes(Buffer.from(valid, 'latin1'), 0, valid.length, 1024 * 1024)).toMatchObject({ ok: true, bytes: 225 * 1024 });
  });
});
