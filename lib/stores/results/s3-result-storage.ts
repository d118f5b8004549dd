// ResultStorage on any S3-protocol service (docs/architecture.md "Long-lived work"): AWS S3, Cloudflare R2, MinIO, Aliyun OSS's S3
// endpoint. Streamed multipart upload (@aws-sdk/lib-storage: a few parts in memory, never the whole
// video), presigned GET URLs (@aws-sdk/s3-request-presigner) or a public base URL (a CDN, or the
// custom domain Aliyun OSS requires for browser display). The SDK packages are optional peers,
// loaded on first use like bullmq; the published types declare only this file's own shapes.
import type { Readable } from 'node:stream';
import { GatewayConfigError } from '../../errors/config-error.js';
import { byteCounter } from './byte-counter.js';
import type { PutInfo, ResultStorage } from './result-storage.js';

export interface S3ResultStorageOptions {
  bucket: string;
  /** Prepended to every key, e.g. `'results/'` (a lifecycle rule on it gives retention). Default ''. */
  prefix?: string;
  /** Default `'us-east-1'`; `'auto'` for Cloudflare R2, `'oss-cn-hangzhou'` style for Aliyun OSS. */
  region?: string;
  /**
   * The service endpoint for anything but AWS.
   * @example endpoint: 'https://<account>.r2.cloudflarestorage.com'
   */
  endpoint?: string;
  /** Path-style URLs (`endpoint/bucket/key`), as MinIO and most self-hosted servers need. Default false. */
  forcePathStyle?: boolean;
  /** Default: the SDK's credential chain (environment, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /**
   * Answer `<publicBaseUrl>/<prefix><key>` instead of a presigned URL: a CDN or a public bucket's
   * custom domain (Aliyun OSS serves images for display only on a custom domain).
   * @example publicBaseUrl: 'https://cdn.example.com'
   */
  publicBaseUrl?: string;
  /** How long a presigned URL works, seconds (at most 604 800, SigV4's limit). Default 86 400. */
  urlExpiresInSeconds?: number;
  /** Multipart part size, bytes (at least 5 MiB, S3's minimum). Default 8 MiB. */
  partSizeBytes?: number;
  /** Parts uploaded at once; memory is about partSizeBytes × queueSize per upload. Default 2. */
  queueSize?: number;
  /**
   * How long one S3 request may wait for a connection, and then stay silent, before its socket is
   * dropped (an idle limit, not a bound on a long upload), ms. Without it the SDK waits forever: an
   * endpoint that black-holes requests would pin a socket per delete and per listing. Default 60 000.
   * @example requestTimeoutMs: 30_000
   */
  requestTimeoutMs?: number;
}

const MIB = 1024 * 1024;

// the few SDK shapes used here, declared locally so no published type names the optional peers
interface SdkClient {
  send(command: unknown): Promise<unknown>;
  destroy(): void;
}
interface Sdk {
  client: SdkClient;
  s3: typeof import('@aws-sdk/client-s3');
  Upload: typeof import('@aws-sdk/lib-storage').Upload;
  getSignedUrl: typeof import('@aws-sdk/s3-request-presigner').getSignedUrl;
}

export function s3ResultStorage(options: S3ResultStorageOptions): ResultStorage {
  const example = "s3ResultStorage({ bucket: 'results', region: 'auto', endpoint: 'https://<account>.r2.cloudflarestorage.com' })";
  if (typeof options?.bucket !== 'string' || options.bucket === '') throw new GatewayConfigError('storage_bucket', 's3ResultStorage needs a `bucket`.', example);
  const lifetime = options.urlExpiresInSeconds ?? 86_400;
  if (!Number.isSafeInteger(lifetime) || lifetime <= 0 || lifetime > 604_800) {
    throw new GatewayConfigError('storage_value', 'urlExpiresInSeconds must be an integer from 1 to 604800 (7 days, the SigV4 limit).', 'urlExpiresInSeconds: 3600');
  }
  const partSize = options.partSizeBytes ?? 8 * MIB;
  if (!Number.isSafeInteger(partSize) || partSize < 5 * MIB)
    throw new GatewayConfigError('storage_value', 'partSizeBytes must be at least 5 MiB (S3 minimum part size).', 'partSizeBytes: 8 * 1024 * 1024');
  const queueSize = options.queueSize ?? 2;
  const requestTimeout = options.requestTimeoutMs ?? 60_000;
  if (!Number.isSafeInteger(requestTimeout) || requestTimeout <= 0)
    throw new GatewayConfigError('storage_value', 'requestTimeoutMs must be a positive integer (milliseconds).', 'requestTimeoutMs: 30_000');
  const bucket = options.bucket;
  const prefix = options.prefix ?? '';
  const publicBase = options.publicBaseUrl?.replace(/\/+$/, '');

  let loading: Promise<Sdk> | undefined;
  const sdk = (): Promise<Sdk> =>
    (loading ??= (async () => {
      try {
        const [s3, storage, presigner] = await Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage'), import('@aws-sdk/s3-request-presigner')]);
        const client = new s3.S3Client({
          region: options.region ?? 'us-east-1',
          ...(options.endpoint ? { endpoint: options.endpoint } : {}),
          forcePathStyle: options.forcePathStyle ?? false,
          // an idle limit per socket (socketTimeout); the SDK waits forever by default, and its
          // requestTimeout only warns unless throwOnRequestTimeout
          requestHandler: { connectionTimeout: requestTimeout, socketTimeout: requestTimeout },
          ...(options.credentials ? { credentials: options.credentials } : {}),
          // R2 and OSS reject the newer default checksum headers on some operations
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        });
        return { client, s3, Upload: storage.Upload, getSignedUrl: presigner.getSignedUrl };
      } catch (error) {
        loading = undefined;
        throw new Error(
          `s3ResultStorage needs the optional peers: npm install @aws-sdk/client-s3 @aws-sdk/lib-storage @aws-sdk/s3-request-presigner (${error instanceof Error ? error.message : String(error)})`,
          { cause: error },
        );
      }
    })());

  return {
    async put(key: string, body: Readable, info: PutInfo): Promise<number> {
      const { client, Upload } = await sdk();
      const counter = byteCounter();
      body.once('error', (error) => counter.destroy(error));
      body.pipe(counter);
      const upload = new Upload({
        client: client as never,
        params: { Bucket: bucket, Key: prefix + key, Body: counter, ContentType: info.contentType },
        partSize,
        queueSize,
        leavePartsOnError: false,
      });
      const abort = (): void => void upload.abort().catch(() => undefined);
      info.signal.addEventListener('abort', abort, { once: true });
      try {
        await upload.done();
      } catch (error) {
        body.destroy();
        throw error;
      } finally {
        info.signal.removeEventListener('abort', abort);
      }
      return counter.bytes;
    },

    async url(key: string): Promise<string> {
      if (publicBase) return `${publicBase}/${(prefix + key).split('/').map(encodeURIComponent).join('/')}`;
      const { client, s3, getSignedUrl } = await sdk();
      return getSignedUrl(client as never, new s3.GetObjectCommand({ Bucket: bucket, Key: prefix + key }), { expiresIn: lifetime });
    },

    async delete(key: string): Promise<void> {
      const { client, s3 } = await sdk();
      await client.send(new s3.DeleteObjectCommand({ Bucket: bucket, Key: prefix + key }));
    },

    async deletePrefix(keyPrefix: string): Promise<number> {
      const { client, s3 } = await sdk();
      let deleted = 0;
      let token: string | undefined;
      do {
        const page = (await client.send(new s3.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix + keyPrefix, ContinuationToken: token }))) as {
          Contents?: Array<{ Key?: string }>;
          NextContinuationToken?: string;
        };
        const keys = (page.Contents ?? []).flatMap((item) => (item.Key ? [{ Key: item.Key }] : []));
        if (keys.length > 0) await client.send(new s3.DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }));
        deleted += keys.length;
        token = page.NextContinuationToken;
      } while (token);
      return deleted;
    },

    async close(): Promise<void> {
      if (!loading) return;
      const current = loading;
      loading = undefined;
      (await current.catch(() => undefined))?.client.destroy();
    },
  };
}
