// staticKeys(): a verifyKey for a fixed key list. Keys are compared by their SHA-256 digests with
// timingSafeEqual, so the time taken says nothing about how much of a guessed key was right.
// The digest is taken with the one-shot crypto.hash (Node 20.12+) where there is one: a Hash object
// per request cost about 14 µs of every request's CPU in the benchmark's profile (docs/benchmarks.md).
import crypto, { createHash, timingSafeEqual } from 'node:crypto';
import { GatewayConfigError } from '../errors/config-error.js';
import type { Caller } from '../types.js';
import type { VerifyKey } from '../options/host-hooks.js';

// typed as optional: Node 20 before 20.12 has no crypto.hash
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'buffer') => Buffer }).hash;
const digest = oneShot ? (key: string): Buffer => oneShot('sha256', key, 'buffer') : (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

/**
 * @param keys API key -> caller (or just the caller id).
 * @example staticKeys({ 'sk-tenant-a': { id: 'tenant-a' }, 'sk-tenant-b': 'tenant-b' })
 */
export function staticKeys(keys: Readonly<Record<string, Caller | string>>): VerifyKey {
  // an array would make its indexes ('0', '1') the keys: refuse it rather than accept guessable keys
  if (keys === null || typeof keys !== 'object' || Array.isArray(keys)) {
    throw new GatewayConfigError('static_keys_type', 'staticKeys() takes an object of key -> caller.', "staticKeys({ 'sk-tenant-a': { id: 'tenant-a' } })");
  }
  // digest hex -> (digest, caller): the lookup key is a hash, so Map timing leaks nothing about the key
  const byDigest = new Map<string, { digest: Buffer; caller: Caller }>();
  for (const [key, value] of Object.entries(keys)) {
    const caller: Caller | undefined = typeof value === 'string' ? { id: value } : value;
    if (key.length === 0 || !caller || typeof caller.id !== 'string' || caller.id === '') {
      throw new GatewayConfigError('static_keys_entry', 'Every staticKeys() entry needs a non-empty key and a caller with a non-empty string id.', "staticKeys({ 'sk-tenant-a': { id: 'tenant-a' } })");
    }
    const keyDigest = digest(key);
    byDigest.set(keyDigest.toString('hex'), { digest: keyDigest, caller: Object.freeze({ ...caller }) });
  }
  return (key: string) => {
    const presented = digest(key);
    const entry = byDigest.get(presented.toString('hex'));
    return entry && timingSafeEqual(entry.digest, presented) ? entry.caller : null;
  };
}
