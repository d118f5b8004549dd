// The embedded ResultStorage for one machine (docs/architecture.md "Long-lived work"): files under a directory, served by the
// router itself at GET /v1/results/<key> with HMAC-signed, expiring URLs, the same idea as an S3
// presigned URL, so the example and small deployments need no object store. The URL is the whole
// credential (a browser's <img> sends no bearer key): signature, expiry and key shape are checked
// before any file is touched, and every refusal but an honest expiry reads as "not found".
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GatewayConfigError } from '../../errors/config-error.js';
import { byteCounter } from './byte-counter.js';
import { contentTypeOfKey, isResultKey } from './result-keys.js';
import type { PutInfo, ReadOutcome, ResultStorage, UrlContext } from './result-storage.js';

export interface LocalResultStorageOptions {
  /** Where the files go (created if missing). One sub-directory per tenant. */
  directory: string;
  /**
   * The HMAC key that signs the URLs: at least 32 characters, kept secret, the same on every
   * restart (a new secret invalidates every URL handed out).
   * @example secret: process.env.RESULTS_SECRET
   */
  secret: string;
  /**
   * The absolute URL the router is reachable at from outside (scheme, host and mount path), used in
   * every signed URL. Default: derived from each request (`req.protocol`, the Host header and the
   * mount path; set Express's `trust proxy` behind a proxy). Set it when a proxy rewrites the host, and
   * for video callbacks of tasks created before a restart.
   * @example publicBaseUrl: 'https://api.example.com/ai'
   */
  publicBaseUrl?: string;
  /** How long a signed URL works, seconds (at most ten years). Default 86 400 (a day); a task query signs a fresh one. */
  urlExpiresInSeconds?: number;
  /** Delete files older than this, ms (a sweep runs every hour, or every `retentionMs` when shorter). Default: kept forever. */
  retentionMs?: number;
}

const MIN_SECRET = 32;
const HOUR = 3600_000;
const MAX_LIFETIME = 10 * 365 * 86_400;

export function localResultStorage(options: LocalResultStorageOptions): ResultStorage {
  const example = "localResultStorage({ directory: './results', secret: process.env.RESULTS_SECRET })";
  if (typeof options?.directory !== 'string' || options.directory === '') throw new GatewayConfigError('storage_directory', 'localResultStorage needs a `directory`.', example);
  if (typeof options.secret !== 'string' || options.secret.length < MIN_SECRET) {
    throw new GatewayConfigError('storage_secret', `localResultStorage needs a \`secret\` of at least ${MIN_SECRET} characters.`, example);
  }
  const lifetime = options.urlExpiresInSeconds ?? 86_400;
  // bounded: an expiry past the route's 12 digits (or past exact integers) would sign URLs that never work
  if (!Number.isSafeInteger(lifetime) || lifetime <= 0 || lifetime > MAX_LIFETIME)
    throw new GatewayConfigError('storage_value', `urlExpiresInSeconds must be an integer from 1 to ${MAX_LIFETIME} (ten years).`, 'urlExpiresInSeconds: 3600');
  const retention = options.retentionMs;
  if (retention !== undefined && (!Number.isSafeInteger(retention) || retention <= 0))
    throw new GatewayConfigError('storage_value', 'retentionMs must be a positive integer.', 'retentionMs: 7 * 86_400_000');
  const base = options.publicBaseUrl?.replace(/\/+$/, '');
  const root = path.resolve(options.directory);
  const secret = options.secret;

  const sign = (key: string, expires: string): string => createHmac('sha256', secret).update(`${key}\n${expires}`).digest('base64url');
  const fileOf = (key: string): string => {
    const file = path.resolve(root, ...key.split('/'));
    // isResultKey already allows no '..' or separators; this is the second lock on the same door
    if (!file.startsWith(root + path.sep)) throw new Error('key outside the storage directory');
    return file;
  };
  const expired = (mtimeMs: number): boolean => retention !== undefined && Date.now() - mtimeMs > retention;

  let sweeper: NodeJS.Timeout | undefined;
  if (retention !== undefined) {
    sweeper = setInterval(() => void sweep(root, expired), Math.min(retention, HOUR));
    sweeper.unref();
  }

  return {
    async put(key: string, body: Readable, info: PutInfo): Promise<number> {
      const file = fileOf(key);
      await fs.mkdir(path.dirname(file), { recursive: true });
      // written under a temporary name and renamed: a reader never sees half a file
      const partial = `${file}.${randomBytes(6).toString('hex')}.part`;
      const counter = byteCounter();
      try {
        await pipeline(body, counter, createWriteStream(partial, { flags: 'wx' }), { signal: info.signal });
        await fs.rename(partial, file);
      } catch (error) {
        await fs.rm(partial, { force: true });
        throw error;
      }
      return counter.bytes;
    },

    async url(key: string, context: UrlContext): Promise<string> {
      const origin = base ?? context.requestBase?.replace(/\/+$/, '');
      if (!origin) throw new Error('localResultStorage has no base URL for this URL: set publicBaseUrl');
      const expires = String(Math.floor(Date.now() / 1000) + lifetime);
      return `${origin}/v1/results/${key}?expires=${expires}&signature=${sign(key, expires)}`;
    },

    async delete(key: string): Promise<void> {
      if (isResultKey(key)) await fs.rm(fileOf(key), { force: true });
    },

    async deletePrefix(prefix: string): Promise<number> {
      if (!/^[a-f0-9]{32}\/$/.test(prefix)) throw new Error('localResultStorage deletes whole tenants only (a tenantPrefix)');
      const directory = fileOf(`${prefix}x`).slice(0, -2);
      const names = await fs.readdir(directory).catch(() => []);
      await fs.rm(directory, { recursive: true, force: true });
      return names.filter((name) => !name.endsWith('.part')).length;
    },

    async read(key: string, query: Record<string, unknown>): Promise<ReadOutcome> {
      const { expires, signature } = query;
      if (!isResultKey(key) || typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) || typeof signature !== 'string') return { ok: false, reason: 'not_found' };
      const expected = Buffer.from(sign(key, expires));
      const given = Buffer.from(signature);
      // a wrong signature (tampered, or another tenant's key with this URL's signature) is "not found"
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'not_found' };
      if (Number(expires) * 1000 < Date.now()) return { ok: false, reason: 'expired' };
      const file = fileOf(key);
      const stat = await fs.stat(file).catch(() => undefined);
      if (!stat?.isFile()) return { ok: false, reason: 'not_found' };
      if (expired(stat.mtimeMs)) {
        await fs.rm(file, { force: true });
        return { ok: false, reason: 'not_found' };
      }
      return {
        ok: true,
        result: { body: createReadStream(file), contentType: contentTypeOfKey(key), size: stat.size, slice: (start, end) => createReadStream(file, { start, end }) },
      };
    },

    async close(): Promise<void> {
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
    },
  };
}

/** Deletes the files past retention, tenant by tenant; a failure waits for the next sweep. */
async function sweep(root: string, expired: (mtimeMs: number) => boolean): Promise<void> {
  try {
    for (const tenant of await fs.readdir(root)) {
      const directory = path.join(root, tenant);
      for (const name of await fs.readdir(directory).catch(() => [])) {
        const file = path.join(directory, name);
        const stat = await fs.stat(file).catch(() => undefined);
        if (stat?.isFile() && expired(stat.mtimeMs)) await fs.rm(file, { force: true });
      }
    }
  } catch {
    // the directory may not exist yet; nothing to sweep
  }
}
