// staticKeys(): the fixed-list verifyKey (docs/architecture.md public contract): lookups and config errors.
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { staticKeys } from '../../lib/express/static-keys.js';
import { GatewayConfigError } from '../../lib/errors/config-error.js';
import type { Caller } from '../../lib/types.js';

const req = {} as Request;

const verify = staticKeys({
  'sk-tenant-a': { id: 'tenant-a', plan: 'pro' },
  'sk-tenant-b': 'tenant-b',
  'sk-ünïcode-ключ': { id: 'tenant-u' },
});

describe('staticKeys: lookup', () => {
  it.each<{ name: string; key: string; expected: Caller | null }>([
    { name: 'known key -> its caller, extra fields kept', key: 'sk-tenant-a', expected: { id: 'tenant-a', plan: 'pro' } },
    { name: 'string shorthand -> { id }', key: 'sk-tenant-b', expected: { id: 'tenant-b' } },
    { name: 'non-ASCII key', key: 'sk-ünïcode-ключ', expected: { id: 'tenant-u' } },
    { name: 'unknown key', key: 'sk-tenant-c', expected: null },
    { name: 'a prefix of a key', key: 'sk-tenant-', expected: null },
    { name: 'a key plus one extra char', key: 'sk-tenant-aa', expected: null },
    { name: 'a key with trailing whitespace', key: 'sk-tenant-a ', expected: null },
    { name: 'different case', key: 'SK-TENANT-A', expected: null },
    { name: 'empty key', key: '', expected: null },
    { name: 'the caller id is not a key', key: 'tenant-a', expected: null },
  ])('$name', async ({ key, expected }) => {
    expect(await verify(key, req)).toStrictEqual(expected);
  });

  it('the returned caller is frozen and a copy, so a route cannot change the table', async () => {
    const entry = { id: 'tenant-z' };
    const caller = await staticKeys({ 'sk-z': entry })('sk-z', req);
    expect(caller).toEqual({ id: 'tenant-z' });
    expect(Object.isFrozen(caller)).toBe(true);
    expect(caller).not.toBe(entry);
  });
});

describe('staticKeys: bad config throws GatewayConfigError', () => {
  it.each<{ name: string; keys: unknown; code: string }>([
    { name: 'null', keys: null, code: 'static_keys_type' },
    { name: 'undefined', keys: undefined, code: 'static_keys_type' },
    { name: 'a string', keys: 'sk-tenant-a', code: 'static_keys_type' },
    { name: 'an empty key', keys: { '': { id: 'tenant-a' } }, code: 'static_keys_entry' },
    { name: 'an empty caller id (shorthand)', keys: { 'sk-a': '' }, code: 'static_keys_entry' },
    { name: 'an empty caller id (object)', keys: { 'sk-a': { id: '' } }, code: 'static_keys_entry' },
    { name: 'a caller without id', keys: { 'sk-a': { name: 'tenant-a' } }, code: 'static_keys_entry' },
    { name: 'a numeric caller id', keys: { 'sk-a': { id: 42 } }, code: 'static_keys_entry' },
    { name: 'a null caller', keys: { 'sk-a': null }, code: 'static_keys_entry' },
    // regression: an array (hono's bearerAuth takes a token list) is accepted; its indexes become the keys,
    // so key '0' authenticates as caller 'sk-tenant-a' while 'sk-tenant-a' itself gets 401.
    { name: 'an array of keys', keys: ['sk-tenant-a'], code: 'static_keys_type' },
  ])('$name', ({ keys, code }) => {
    let error: unknown;
    try {
      staticKeys(keys as Record<string, Caller | string>);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(GatewayConfigError);
    expect((error as GatewayConfigError).code).toBe(code);
    expect((error as GatewayConfigError).message).toContain("Fix: staticKeys({ 'sk-tenant-a': { id: 'tenant-a' } })");
  });
});
