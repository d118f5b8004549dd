// scanJsonStructure: members and array items counted and nesting measured outside strings, before parsing.
import { describe, expect, it } from 'vitest';
import { type JsonScanResult, scanJsonStructure } from '../../lib/json/json-scan.js';

const scan = (text: string, maxMembers: number, maxDepth = 64): JsonScanResult => scanJsonStructure(Buffer.from(text), 0, maxMembers, maxDepth);

describe('scanJsonStructure', () => {
  it.each<{ name: string; text: string; maxMembers: number; maxDepth?: number; expected: JsonScanResult }>([
    { name: 'three members (one object + two commas) at a limit of 3', text: '{"a":1,"b":2,"c":3}', maxMembers: 3, expected: { ok: true } },
    { name: 'three members at a limit of 2', text: '{"a":1,"b":2,"c":3}', maxMembers: 2, expected: { ok: false, reason: 'members' } },
    { name: 'array items count', text: '[1,2,3,4,5]', maxMembers: 4, expected: { ok: false, reason: 'members' } },
    { name: 'nested containers count once each', text: '{"a":[],"b":{}}', maxMembers: 4, expected: { ok: true } },
    { name: 'commas and brackets inside a string do not count', text: '{"a":",,,[[[{{{"}', maxMembers: 1, expected: { ok: true } },
    { name: 'an escaped quote does not end the string', text: '{"a":"x\\",,,,\\"y"}', maxMembers: 1, expected: { ok: true } },
    { name: 'an escaped backslash before the closing quote ends it', text: '{"a":"x\\\\",",":1}', maxMembers: 2, expected: { ok: true } },
    { name: '... and what follows is counted', text: '{"a":"x\\\\",",":1,"b":2}', maxMembers: 2, expected: { ok: false, reason: 'members' } },
    { name: 'depth at the limit', text: '[[[1]]]', maxMembers: 10, maxDepth: 3, expected: { ok: true } },
    { name: 'depth over the limit', text: '[[[[1]]]]', maxMembers: 10, maxDepth: 3, expected: { ok: false, reason: 'depth' } },
    { name: 'brackets inside strings do not nest', text: '["[[[[[[[["]', maxMembers: 10, maxDepth: 1, expected: { ok: true } },
    { name: 'an unterminated string ends the scan (JSON.parse reports it)', text: '{"a":"x,,,,,', maxMembers: 1, expected: { ok: true } },
    { name: 'a backslash outside strings does not disturb later strings', text: '\\{"a":",,,",,', maxMembers: 3, expected: { ok: true } },
    { name: 'non-ASCII text in strings', text: '{"a":"猫,猫,猫","b":"é"}', maxMembers: 2, expected: { ok: true } },
  ])('$name', ({ text, maxMembers, maxDepth, expected }) => {
    expect(scan(text, maxMembers, maxDepth)).toEqual(expected);
  });

  it.each<{ name: string; text: string; expected: Array<[number, number] | [number, number, string]> }>([
    { name: 'a long value is listed by the bytes between its quotes', text: '{"a":"xxxxxxxx"}', expected: [[6, 14]] },
    { name: 'a long key is not', text: '{"xxxxxxxx" : 1}', expected: [] },
    { name: 'a long value with an escape is not', text: '{"a":"xxxx\\nxxx"}', expected: [] },
    { name: 'short values are not', text: '{"a":"xx","b":["xxxxxxxx"]}', expected: [[16, 24]] },
    { name: "a long value whose only escapes are '\\/' is listed, marked", text: '{"a":"x\\/xx\\/xx"}', expected: [[6, 15, 'slashes']] },
    { name: "'\\/' and another escape is not", text: '{"a":"x\\/xx\\nxx"}', expected: [] },
    { name: "an escaped backslash before '/' is not", text: '{"a":"x\\\\/xxxxx"}', expected: [] },
  ])('long strings ($name)', ({ text, expected }) => {
    const result = scanJsonStructure(Buffer.from(text), 0, 100, 64, 8);
    expect(result.ok && result.longStrings?.map((span) => (span.slashEscapes ? [span.from, span.to, 'slashes'] : [span.from, span.to]))).toEqual(expected);
  });

  it('starts at the given offset (after a byte order mark)', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('[1,2]')]);
    expect(scanJsonStructure(bytes, 3, 2, 64)).toEqual({ ok: true });
    expect(scanJsonStructure(bytes, 3, 1, 64)).toEqual({ ok: false, reason: 'members' });
  });
});
