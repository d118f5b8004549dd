// The `express-image-gateway/storage` entry: the result storages of the `storage` option (durable
// results) and the types a host needs to write its own ResultStorage. Re-exports only; the
// ResultStorage interface itself is at the root, beside the other interfaces a host may replace.
export { localResultStorage, type LocalResultStorageOptions } from './stores/results/local-result-storage.js';
export { s3ResultStorage, type S3ResultStorageOptions } from './stores/results/s3-result-storage.js';
export type { PutInfo, ReadOutcome, ServedResult, UrlContext } from './stores/results/result-storage.js';
