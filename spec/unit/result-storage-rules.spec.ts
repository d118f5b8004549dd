// Durable results (docs/durable-results.md), the pure rules: key naming (a hashed tenant prefix, 128 random bits, the
// sniffed extension), which keys a URL may name, and the storage option's validation in resolveOptions.
import { describe, expect, it } from 'vitest';
import { GatewayConfigError } from '../../lib/errors/config-error.js';
import { resolveOptions } from '../../lib/gateway/resolve-options.js';
import { contentTypeOfKey, isResultKey, newResultKey, tenantPrefix } from '../../lib/stores/results/result-keys.js';
import type { ResultStorage } from '../../lib/index.js';
import { localResultStorage, s3ResultStorage } from '../../lib/storage.js';

const base = { verifyKey: () => null, resolveUpstream: () => null };
const store: ResultStorage = { put: async () => 0, url: async () => '', delete: async () => undefined, deletePrefix: async () => 0 };

describe('result keys', () => {
  it('a tenant prefix is a hash of the caller id: stable, distinct per tenant, never the id', () => {
    expect(tenantPrefix('tenant-a')).toMatch(/^[a-f0-9]{32}\/$/);
    expect(tenantPrefix('tenant-a')).toBe(tenantPrefix('tenant-a'));
    expect(tenantPrefix('tenant-a')).not.toBe(tenantPrefix('tenant-b'));
    expect(tenantPrefix('tenant-a')).not.toContain('tenant');
  });

  it.each([
    ['image/png', 'png'],
    ['image/jpeg', 'jpg'],
    ['image/webp', 'webp'],
    ['video/mp4', 'mp4'],
    ['video/webm', 'webm'],
  ])('a new key for %s: <tenant>/<22 random chars>.%s, and its type read back', (type, ext) => {
    const key = newResultKey('tenant-a', type);
    expect(key).toMatch(new RegExp(`^${tenantPrefix('tenant-a')}[A-Za-z0-9_-]{22}\\.${ext}$`));
    expect(isResultKey(key)).toBe(true);
    expect(contentTypeOfKey(key)).toBe(type);
    expect(newResultKey('tenant-a', type)).not.toBe(key);
  });

  it.each([
    ['a traversal', `${tenantPrefix('a')}../../etc/passwd`],
    ['an encoded traversal', `${tenantPrefix('a')}..%2f..%2fx.png`],
    ['three segments', `${tenantPrefix('a')}x/${'A'.repeat(22)}.png`],
    ['an unknown extension', `${tenantPrefix('a')}${'A'.repeat(22)}.html`],
    ['a short name', `${tenantPrefix('a')}abc.png`],
    ['an uppercase tenant', `${tenantPrefix('a').toUpperCase()}${'A'.repeat(22)}.png`],
    ['a backslash', `${tenantPrefix('a').slice(0, -1)}\\${'A'.repeat(22)}.png`],
    ['empty', ''],
  ])('%s is not a result key', (_name, key) => {
    expect(isResultKey(key)).toBe(false);
  });
});

describe('the storage option', () => {
  it('takes a store alone or the long form, with defaults', () => {
    expect(resolveOptions({ ...base, storage: store }).storage).toEqual({ store, onFailure: 'upstream_url', timeoutMs: 120_000, maxVideoBytes: 1024 ** 3 });
    expect(resolveOptions({ ...base, storage: { store, onFailure: 'error', timeoutMs: 5000 } }).storage).toMatchObject({ onFailure: 'error', timeoutMs: 5000 });
    expect(resolveOptions(base).storage).toBeUndefined();
  });

  it.each([
    ['a store without delete', { put: async () => 0, url: async () => '' }, /lacks delete, deletePrefix/],
    ['an unknown long-form key', { store, retries: 3 }, /Unknown storage option 'retries'/],
    ['a bad onFailure', { store, onFailure: 'ignore' }, /onFailure must be/],
    ['a zero timeout', { store, timeoutMs: 0 }, /timeoutMs must be a positive integer/],
  ])('%s is a GatewayConfigError', (_name, storage, message) => {
    expect(() => resolveOptions({ ...base, storage: storage as never })).toThrow(GatewayConfigError);
    expect(() => resolveOptions({ ...base, storage: storage as never })).toThrow(message);
  });

  it.each([
    ['a short secret', () => localResultStorage({ directory: '/tmp/x', secret: 'short' }), /at least 32 characters/],
    ['no directory', () => localResultStorage({ directory: '', secret: 'x'.repeat(32) }), /needs a `directory`/],
    ['no bucket', () => s3ResultStorage({ bucket: '' }), /needs a `bucket`/],
    ['a presign lifetime past SigV4', () => s3ResultStorage({ bucket: 'b', urlExpiresInSeconds: 700_000 }), /604800/],
    ['parts under 5 MiB', () => s3ResultStorage({ bucket: 'b', partSizeBytes: 1024 }), /at least 5 MiB/],
  ])('%s: the store factory refuses it', (_name, make, message) => {
    expect(make).toThrow(message);
  });
});
