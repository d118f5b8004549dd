// Storage keys of re-hosted results: `<tenant>/<name>.<ext>`, where <tenant> is a hash of Caller.id
// (one prefix per tenant, so a tenant's results can be listed and deleted together, and the id itself
// never appears in a URL) and <name> is 128 random bits (nobody can guess another result's key).
import { createHash, randomBytes } from 'node:crypto';

const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/bmp': 'bmp',
  'image/tiff': 'tiff',
  'image/heic': 'heic',
  'image/avif': 'avif',
  'video/mp4': 'mp4',
  'video/quicktime': 'mov',
  'video/webm': 'webm',
};

const TYPES: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(EXTENSIONS).map(([type, ext]) => [ext, type]));

/** The key segments a store accepts back from a URL: anything else is refused before a file is touched. */
const TENANT_SEGMENT = /^[a-f0-9]{32}$/;
const NAME_SEGMENT = /^[A-Za-z0-9_-]{22}\.(png|jpg|gif|webp|bmp|tiff|heic|avif|mp4|mov|webm)$/;

/** The key prefix of one tenant's results (ends with '/'). */
export function tenantPrefix(callerId: string): string {
  return `${createHash('sha256').update(`express-image-gateway:${callerId}`).digest('hex').slice(0, 32)}/`;
}

/** A fresh key for one result of `callerId` with the sniffed type. */
export function newResultKey(callerId: string, contentType: string): string {
  return `${tenantPrefix(callerId)}${randomBytes(16).toString('base64url')}.${EXTENSIONS[contentType] ?? 'bin'}`;
}

/** True for a key newResultKey could have made (two segments, both well-formed). */
export function isResultKey(key: string): boolean {
  const [tenant, name, ...rest] = key.split('/');
  return rest.length === 0 && tenant !== undefined && name !== undefined && TENANT_SEGMENT.test(tenant) && NAME_SEGMENT.test(name);
}

/** The MIME type a key's extension stands for. */
export function contentTypeOfKey(key: string): string {
  return TYPES[key.slice(key.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
}
