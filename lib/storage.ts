// The `express-image-gateway/storage` entry: the result storages of the `storage` option (durable
// results) and the types a host needs to write its own ResultStorage. Re-exports only; the
// ResultStorage interface itself is at the root, beside the other interfaces a host may replace.
export { localResultStorage, type LocalResultStorageOptions } from './storage/local-result-storage.js';
export { s3ResultStorage, type S3ResultStorageOptions } from './storage/s3-result-storage.js';
export type { PutInfo, ReadOutcome, ServedResult, UrlContext } from './storage/result-storage.js';
