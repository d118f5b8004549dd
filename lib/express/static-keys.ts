// staticKeys(): a verifyKey for a fixed key list. A presented key is looked up by its SHA-256 digest,
// so the lookup's time depends on the digest, which a caller cannot steer toward a real key, and says
// nothing about how much of a guessed key was right. The digest is taken with the one-shot
// crypto.hash (Node 20.12+) straight to hex where there is one: a Hash object, a Buffer and its hex
// copy per request were measurable CPU in the benchmark's profile (docs/benchmarks.md).
import crypto, { createHash } from 'node:crypto';
import { GatewayConfigError } from '../errors/config-error.js';
import type { Caller } from '../types.js';
import type { VerifyKey } from '../options/host-hooks.js';

// typed as optional: Node 20 before 20.12 has no crypto.hash
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;
const digestHex = oneShot ? (key: string): string => oneShot('sha256', key, 'hex') : (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/**
 * @param keys API key -> caller (or just the caller id).
 * @example staticKeys({ 'sk-tenant-a': { id: 'tenant-a' }, 'sk-tenant-b': 'tenant-b' })
 */
export function staticKeys(keys: Readonly<Record<string, Caller | string>>): VerifyKey {
  // an array would make its indexes ('0', '1') the keys: refuse it rather than accept guessable keys
  if (keys === null || typeof keys !== 'object' || Array.isArray(keys)) {
    throw new GatewayConfigError('static_keys_type', 'staticKeys() takes an object of key -> caller.', "staticKeys({ 'sk-tenant-a': { id: 'tenant-a' } })");
  }
  // digest hex -> caller: the lookup key is a hash, so Map timing leaks nothing about the key (an
  // entry found has the same digest, so no second comparison is needed)
  const byDigest = new Map<string, Caller>();
  for (const [key, value] of Object.entries(keys)) {
    const caller: Caller | undefined = typeof value === 'string' ? { id: value } : value;
    if (key.length === 0 || !caller || typeof caller.id !== 'string' || caller.id === '') {
      throw new GatewayConfigError('static_keys_entry', 'Every staticKeys() entry needs a non-empty key and a caller with a non-empty string id.', "staticKeys({ 'sk-tenant-a': { id: 'tenant-a' } })");
    }
    byDigest.set(digestHex(key), Object.freeze({ ...caller }));
  }
  return (key: string) => byDigest.get(digestHex(key)) ?? null;
}
