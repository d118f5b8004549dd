// The `idempotency` option's type (docs/tenancy-and-billing.md "Idempotency-Key"): where Idempotency-Key records live, how
// long, and how long an answer or a lost request's work is kept. Types only; gateway/tenancy/resolve-tenancy.ts
// checks and resolves it.
import type { IdempotencyStore } from '../stores/idempotency/idempotency-store.js';

/**
 * Idempotency-Key on the paid creates (docs/tenancy-and-billing.md). On by default, keys in the
 * `redis` option's Redis when it is given, else in memory.
 * @example idempotency: { ttlSeconds: 24 * 3600, keptAnswerSeconds: 120 }
 */
export interface IdempotencyOptions {
  /**
   * An override: where keys live. Default: `redisIdempotencyStore` on the `redis` option (prefix
   * `'<redis.prefix>idem:'`) when it is given, else `memoryIdempotencyStore()`.
   * @example store: memoryIdempotencyStore({ maxKeys: 50_000 })
   */
  store?: IdempotencyStore;
  /** Seconds a key (and its stored answer) is kept after the first request finished. Default 86 400 (24 h). @example ttlSeconds: 3600 */
  ttlSeconds?: number;
  /**
   * Largest answer stored for replay, bytes. A larger one (b64_json images) is not kept: a retry with
   * the key gets 409 `idempotency_answer_not_kept` and nothing runs twice. Default 1 MiB.
   * @example maxAnswerBytes: 8 * 1024 * 1024
   */
  maxAnswerBytes?: number;
  /**
   * Seconds the answer of paid image work is kept when its client left (or its deadline passed) while
   * the upstream was still working: the client's retry of the same request (same key, route and body)
   * receives it once instead of paying for a second generation, and a retry during the work joins it
   * (docs/tenancy-and-billing.md "Retries"). `false` keeps nothing: the work is cut when its client
   * leaves. Default 600 (10 minutes); answers larger than `maxAnswerBytes` are not kept.
   * @example idempotency: { keptAnswerSeconds: 120 }
   */
  keptAnswerSeconds?: number | false;
  /**
   * Seconds paid image work may go on after its client left or its deadline passed, so its answer can
   * be kept: past it the upstream call is cut (its outcome is then unknown, and billed as possibly
   * paid in `undeliveredImages`). Default: `limits.upstreamTimeoutMs` plus `limits.downloadTimeoutMs`
   * and a minute.
   * @example idempotency: { keptWorkSeconds: 300 }
   */
  keptWorkSeconds?: number;
  /**
   * Seconds of the lease a running request holds on its key, renewed every third of it while it
   * runs, with a store that keeps leases (both built-in stores do). When the instance running it
   * stops, the lease lapses: another instance books the request's possibly paid work once, and the
   * next request with the key is answered 409 `idempotency_key_interrupted` instead of waiting or
   * paying again (docs/tenancy-and-billing.md "Retries"). Default 30. @example leaseSeconds: 20
   */
  leaseSeconds?: number;
}
