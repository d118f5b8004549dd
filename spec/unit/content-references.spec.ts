// Pure helpers of lib/gateway/video-tasks/content-references.ts: which strings of a content item are asset
// references or media URLs, where they sit, and which asset ids have Ark's shape (upstreams §2.6).
import { describe, expect, it } from 'vitest';
import { WELL_FORMED_ASSET_ID, assetIdOf, assetReferencesIn, isMediaUrlCandidate, stringsOf } from '../../lib/gateway/video-tasks/content-references.js';

describe('WELL_FORMED_ASSET_ID', () => {
  it.each([
    ['asset-20260320120147-pqwhc', true],
    ['asset-20260101093000-op001', true],
    ['ASSET-20260320120147-PQWHC', false],
    ['asset-20260320120147-PQWHC', false],
    ['asset-20260320120147-pqwhc ', false],
    [' asset-20260320120147-pqwhc', false],
    ['asset-20260320120147-pqwhc?', false],
    ['asset-20260320120147-pqwhc#x', false],
    ['asset-20260320120147-pqwhc/', false],
    ['asset-20260320120147%2Dpqwhc', false],
    ['asset-2026032012014-pqwhc', false],
    ['asset-20260320120147-pqwhcx', false],
    ['asset-20260320120147-pqwh', false],
    ['group-20260320120601-hsw4s', false],
    ['asset-20260320120147-pqwhc\n', false],
    ['asset-operator-library', false],
  ])('%j -> %s', (id, expected) => {
    expect(WELL_FORMED_ASSET_ID.test(id)).toBe(expected);
  });
});

describe('assetReferencesIn', () => {
  it.each<[string, string[]]>([
    ['asset://asset-1', ['asset://asset-1']],
    [' asset://asset-1', [' asset://asset-1']],
    ['ASSET://asset-1', ['ASSET://asset-1']],
    ['asset:asset-1 and more', ['asset:asset-1 and more']],
    ['https://cdn.example/a.png?ref=asset://asset-2', ['asset://asset-2']],
    ['first asset://a then Asset:%2F%2Fb and asset:\\\\c', ['asset://a', 'Asset:%2F%2Fb', 'asset:\\\\c']],
    ['this asset: a red car', []],
    ['https://cdn.example/a.png', []],
    ['', []],
  ])('%j -> %j', (value, expected) => {
    expect(assetReferencesIn(value)).toStrictEqual(expected);
  });
});

describe('assetIdOf', () => {
  it.each<[string, string | undefined]>([
    ['asset://asset-1', 'asset-1'],
    ['asset://', undefined],
    ['ASSET://asset-1', undefined],
    [' asset://asset-1', undefined],
    ['asset:/asset-1', undefined],
  ])('%j -> %j', (reference, expected) => {
    expect(assetIdOf(reference)).toBe(expected);
  });
});

describe('isMediaUrlCandidate', () => {
  it.each<[string, string, boolean]>([
    ['url', 'anything', true],
    ['uri', 'https://cdn.example/a.png', true],
    ['fallback', ' HTTP://10.0.0.1/a.png', true],
    ['poster', 'ftp://files.example/a.png', true],
    ['thumb', 'data:image/png;base64,AAAA', true],
    ['text', 'The girl looks at the camera: 360-degree orbit', false],
    ['role', 'first_frame', false],
  ])('%s = %j -> %s', (key, value, expected) => {
    expect(isMediaUrlCandidate({ key, value })).toBe(expected);
  });
});

describe('stringsOf', () => {
  it('every string at any depth, in key order, with its path and key', () => {
    const item = { type: 'image_url', image_url: { url: 'u', extra: [{ uri: 'v' }, 3, null, ['w']] }, 'odd.key': 'x', n: 1, b: true };
    expect(stringsOf(item, 'content[2]').map(({ path, key, value }) => ({ path, key, value }))).toStrictEqual([
      { path: 'content[2].type', key: 'type', value: 'image_url' },
      { path: 'content[2].image_url.url', key: 'url', value: 'u' },
      { path: 'content[2].image_url.extra[0].uri', key: 'uri', value: 'v' },
      { path: 'content[2].image_url.extra[3][0]', key: 'extra', value: 'w' },
      { path: 'content[2]["odd.key"]', key: 'odd.key', value: 'x' },
    ]);
  });

  it('replace() puts a string back where it was found, in objects and arrays', () => {
    const item = { image_url: { url: 'HTTPS://CDN.example/a.png' }, list: ['x', 'HTTP://b.example'] };
    for (const entry of stringsOf(item, 'c')) if (entry.value.startsWith('HTTP')) entry.replace(entry.value.toLowerCase());
    expect(item).toEqual({ image_url: { url: 'https://cdn.example/a.png' }, list: ['x', 'http://b.example'] });
  });

  it('nesting deeper than the call stack does not overflow it', () => {
    let deep: unknown = 'asset://deep';
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    const found = stringsOf({ x: deep }, 'c');
    expect(found).toHaveLength(1);
    expect(found[0]!.value).toBe('asset://deep');
  });
});
