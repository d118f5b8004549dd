// Where Idempotency-Key records live (IETF draft "The Idempotency-Key HTTP Header Field"): a record is
// taken atomically by the first request (SET NX semantics) with the body's fingerprint, then holds
// the stored answer until it expires. memoryIdempotencyStore is the default (one instance);
// redisIdempotencyStore shares the keys between instances. While the request runs, its record holds a
// lease its instance renews; a store with `renew`, `claimLapsed` and `clearInterrupted` lets another
// instance find a lease that lapsed (the instance stopped), book the lost request once and tell the
// retry (docs/tenancy-and-billing.md "Retries").
import type { Caller, ProviderName, RouteName } from '../../types.js';

/** An answer kept for replays: exactly what the first request got. */
export interface StoredAnswer {
  status: number;
  contentType: string;
  /** The body, base64 (records are JSON). */
  body: string;
  /** Headers that belong to the answer and are replayed with it (an image task's `Location`). */
  headers?: Record<string, string>;
}

/**
 * The books of an answer kept for a client's retry (docs/tenancy-and-billing.md "Retries"): who it is
 * for and what it holds, so the event that delivers it, or its expiry's, charges it on any instance.
 */
export interface KeptWorkRecord {
  caller: Caller;
  route: RouteName;
  model: string;
  provider?: ProviderName;
  /** The model the upstream was called with, when it differs from `model`: the price the images follow. */
  upstreamModel?: string;
  images: number;
  sizes?: string[];
  quality?: string;
  lostBy: 'client_left' | 'upstream';
  /** The quota windows the images and money were counted in, and the money they hold (millionths). */
  windowEnds?: { images?: number; budget?: number };
  budgetMicros?: number;
}

/**
 * What a running request is, kept with its lease, so the instance that finds the lease lapsed can
 * book it (its one usage event, its quota given back): who asked, for what, and whether the upstream
 * call had started. JSON only; never a key.
 */
export interface LeasedWork {
  caller: Caller;
  route: RouteName;
  model: string;
  /** ms since the epoch */
  startedAt: number;
  provider?: ProviderName;
  /** The model the upstream was called with, when it differs from `model`: the price of the lost work. */
  upstreamModel?: string;
  /** The images charged: the most the upstream may make. */
  imagesAsked?: number;
  sizeAsked?: string;
  quality?: string;
  /** The upstream call that may start paid work was made. */
  attempted?: boolean;
  /** What the request took from the caller's quotas, and when those windows end, to give back. */
  charged?: { images?: number; imagesWindowEnd?: number; budget?: number; budgetWindowEnd?: number };
  /**
   * The upstream's own task the request runs on (DashScope's asynchronous synthesis, a Replicate
   * prediction, fal's queue), recorded as soon as its submit answered: an instance that finds the
   * lease lapsed follows it to its end instead of booking the request as lost (gateway/kept-work/lapsed-keys.ts).
   */
  upstreamTask?: UpstreamTaskRef;
  /**
   * Set when another instance took the key over to follow `upstreamTask` (the lease then runs to this
   * end of following, ms since the epoch): exactly one follows it, on the scheduler.
   */
  followedUntil?: number;
}

/** An upstream task by id, with where it runs (the upstream is resolved again from these: keys are never stored). */
export interface UpstreamTaskRef {
  provider: ProviderName;
  /** The upstream's baseURL, to find the same upstream among those the resolver names again. */
  baseURL: string;
  /** The vendor's task, request or prediction id. */
  id: string;
  /** The request asked for `b64_json`: the follower downloads the images, as the route would. */
  base64?: boolean;
  /** The base URL stored results are signed under (`storage`), as the request reached the router. */
  resultBase?: string;
}

/** The lease of a running key: renewed by its request's instance until the request ends. */
export interface RunningLease {
  /** The request that took the key: only it renews the lease. */
  holder: string;
  /** The lease's end, ms since the epoch: past it without a renewal, the instance stopped. */
  leaseUntil: number;
  work: LeasedWork;
}

/** One key's record. `running` until the first request has its answer. */
export type IdempotencyRecord =
  /**
   * `answerMs`: the answer deadline the request that started the work was given, once it passed (work
   * kept for a client's retry): a retry that joins the work waits at most this long for its answer.
   */
  | { state: 'running'; fingerprint: string; lease?: RunningLease; answerMs?: number }
  /** The lease of the request that held the key lapsed (its instance stopped): its outcome is unknown. */
  | { state: 'interrupted'; fingerprint: string }
  /**
   * `kept`: the books of an answer kept for a client's retry; `delivered`: it was handed to a retry,
   * which may not have received it: a later retry of the same request (a client's own retry count) may
   * still get it, billed once.
   */
  | { state: 'done'; fingerprint: string; answer: StoredAnswer; kept?: KeptWorkRecord; delivered?: boolean }
  /** The first request succeeded, but its answer was larger than `idempotency.maxAnswerBytes`. */
  | { state: 'too-large'; fingerprint: string; bytes: number };

/** The `done` record of an answer, its body base64 (records are JSON). */
export function doneRecord(fingerprint: string, status: number, contentType: string, body: Buffer | string, headers?: Record<string, string>): IdempotencyRecord {
  return { state: 'done', fingerprint, answer: { status, contentType, body: (typeof body === 'string' ? Buffer.from(body) : body).toString('base64'), ...(headers ? { headers } : {}) } };
}

/**
 * The store behind the `idempotency` option. Keys arrive already scoped (caller, route) and hashed.
 * Implementations must make `begin` atomic across every instance that shares the store.
 */
export interface IdempotencyStore {
  /**
   * Takes `key` for a request with this body fingerprint, for `ttlMs`, when nobody holds it: returns
   * undefined. Otherwise returns the record that holds it (nothing changes). `lease`, when given, is
   * kept in the running record (a store that has `renew` must keep it).
   */
  begin(key: string, fingerprint: string, ttlMs: number, lease?: RunningLease): Promise<IdempotencyRecord | undefined>;
  /** Replaces the record of a request that finished (its answer, or `too-large`), for `ttlMs`. */
  finish(key: string, record: IdempotencyRecord, ttlMs: number): Promise<void>;
  /** Frees `key` (the request failed: a retry may run again). */
  release(key: string): Promise<void>;
  /**
   * The record of `key`, changing nothing. With `take`, lets a client's retry find paid work its first
   * try abandoned (docs/tenancy-and-billing.md "Retries"); a store without them keeps no abandoned work.
   */
  peek?(key: string): Promise<IdempotencyRecord | undefined>;
  /** Removes and returns a `done` record atomically, so a kept answer is handed out once; anything else stays. */
  take?(key: string): Promise<IdempotencyRecord | undefined>;
  /**
   * Atomically: when `key` is running under a lease held by `lease.holder`, replaces that lease (and
   * the record's ttl) and returns true; otherwise changes nothing and returns false (the lease was
   * lost: another instance found it lapsed). The three lease methods come together or not at all.
   */
  renew?(key: string, lease: RunningLease, ttlMs: number): Promise<boolean>;
  /**
   * Atomically: when `key` is running under a lease that ended by `now`, marks it `interrupted` for
   * `ttlMs` and returns the running record (once, across instances: the caller books it); otherwise
   * changes nothing and returns undefined.
   */
  claimLapsed?(key: string, now: number, ttlMs: number): Promise<IdempotencyRecord | undefined>;
  /** Atomically removes an `interrupted` record and returns true; anything else stays (false). */
  clearInterrupted?(key: string): Promise<boolean>;
  /**
   * Atomically: when `key` holds exactly `expected` (as `peek` returned it), replaces it with `record`
   * for `ttlMs` and returns true; otherwise changes nothing and returns false. Lets one instance take
   * over a lapsed request that runs on an upstream task, and end it once (gateway/kept-work/lapsed-keys.ts);
   * a store without it books such a request as lost, as any other.
   */
  swap?(key: string, expected: IdempotencyRecord, record: IdempotencyRecord, ttlMs: number): Promise<boolean>;
}

/** The store keeps leases: another instance can find a request whose instance stopped. */
export function keepsLeases(store: IdempotencyStore): store is IdempotencyStore & Required<Pick<IdempotencyStore, 'renew' | 'claimLapsed' | 'clearInterrupted'>> {
  return typeof store.renew === 'function' && typeof store.claimLapsed === 'function' && typeof store.clearInterrupted === 'function';
}

export interface MemoryIdempotencyStoreOptions {
  /** Most keys held; the oldest is forgotten to make room. Default 10 000. */
  maxKeys?: number;
  /** Most stored answer bytes held in total; the oldest records are forgotten to make room. Default 64 MiB. */
  maxBytes?: number;
}

const MAX_RUNNING_SKIPPED = 1_000;

/** Idempotency keys in this process's memory: the default, for one instance. Expired keys are dropped as they are met. */
export function memoryIdempotencyStore(options: MemoryIdempotencyStoreOptions = {}): IdempotencyStore {
  const { maxKeys = 10_000, maxBytes = 64 * 1024 * 1024 } = options;
  // insertion order is age order: the first entries are the oldest
  const records = new Map<string, { record: IdempotencyRecord; expiresAt: number; bytes: number }>();
  let bytes = 0;
  const drop = (key: string): void => {
    const entry = records.get(key);
    if (!entry) return;
    bytes -= entry.bytes;
    records.delete(key);
  };
  const live = (key: string): IdempotencyRecord | undefined => {
    const entry = records.get(key);
    if (entry && entry.expiresAt <= Date.now()) drop(key);
    return records.get(key)?.record;
  };
  const put = (key: string, record: IdempotencyRecord, ttlMs: number): void => {
    drop(key);
    const size = record.state === 'done' ? record.answer.body.length : 0;
    // a running record is never forgotten for room: forgetting it would let a retry run twice. Running
    // records are few (each is a request in flight, capped per caller), so the scan past them is short;
    // it is bounded anyway, and the store then holds a few more than maxKeys until they finish.
    let skipped = 0;
    for (const [oldest, entry] of records) {
      if ((records.size < maxKeys && bytes + size <= maxBytes) || skipped >= MAX_RUNNING_SKIPPED) break;
      if (entry.record.state === 'running' && entry.expiresAt > Date.now()) {
        skipped += 1;
        continue;
      }
      drop(oldest);
    }
    records.set(key, { record, expiresAt: Date.now() + ttlMs, bytes: size });
    bytes += size;
  };
  return {
    async begin(key, fingerprint, ttlMs, lease) {
      const held = live(key);
      if (held) return held;
      put(key, { state: 'running', fingerprint, ...(lease ? { lease } : {}) }, ttlMs);
      return undefined;
    },
    async finish(key, record, ttlMs) {
      put(key, record, ttlMs);
    },
    async release(key) {
      drop(key);
    },
    async peek(key) {
      return live(key);
    },
    async take(key) {
      const held = live(key);
      if (held?.state !== 'done') return undefined;
      drop(key);
      return held;
    },
    async renew(key, lease, ttlMs) {
      const held = live(key);
      if (held?.state !== 'running' || held.lease?.holder !== lease.holder) return false;
      put(key, { ...held, lease }, ttlMs);
      return true;
    },
    async claimLapsed(key, now, ttlMs) {
      const held = live(key);
      if (held?.state !== 'running' || !held.lease || held.lease.leaseUntil > now) return undefined;
      put(key, { state: 'interrupted', fingerprint: held.fingerprint }, ttlMs);
      return held;
    },
    async clearInterrupted(key) {
      if (live(key)?.state !== 'interrupted') return false;
      drop(key);
      return true;
    },
    async swap(key, expected, record, ttlMs) {
      const held = live(key);
      if (held === undefined || JSON.stringify(held) !== JSON.stringify(expected)) return false;
      put(key, record, ttlMs);
      return true;
    },
  };
}

/** The commands redisIdempotencyStore sends (ioredis's `Redis` fits). */
export interface RedisIdempotencyClient {
  /** ioredis's connection state: anything but 'ready' fails at once instead of waiting in its offline queue. */
  status?: string;
  get(key: string): Promise<string | null>;
  set(key: string, value: string, px: 'PX', ms: number, nx: 'NX'): Promise<'OK' | null>;
  set(key: string, value: string, px: 'PX', ms: number): Promise<'OK' | null>;
  del(key: string): Promise<number>;
  /** Redis 6.2's GETDEL (ioredis has it): hands a kept answer out once, across instances. Without it, no abandoned work is kept. */
  getdel?(key: string): Promise<string | null>;
  /** EVAL (ioredis has it): the atomic lease checks. Without it, keys keep no lease (a stopped instance's keys free when they expire). */
  eval?(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
}

// the lease scripts: read, check and write one record atomically (records are JSON; cjson is built into Redis)
const RENEW_SCRIPT = `local held = redis.call('GET', KEYS[1])
if not held then return 0 end
local record = cjson.decode(held)
if record.state ~= 'running' or type(record.lease) ~= 'table' or record.lease.holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;
const CLAIM_SCRIPT = `local held = redis.call('GET', KEYS[1])
if not held then return false end
local record = cjson.decode(held)
if record.state ~= 'running' or type(record.lease) ~= 'table' or tonumber(record.lease.leaseUntil) > tonumber(ARGV[1]) then return false end
redis.call('SET', KEYS[1], cjson.encode({ state = 'interrupted', fingerprint = record.fingerprint }), 'PX', ARGV[2])
return held`;
// compare and set on the record's exact text: every record but `interrupted` is written by JSON.stringify
const SWAP_SCRIPT = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;
const CLEAR_SCRIPT = `local held = redis.call('GET', KEYS[1])
if not held then return 0 end
if cjson.decode(held).state ~= 'interrupted' then return 0 end
redis.call('DEL', KEYS[1])
return 1`;

export interface RedisIdempotencyStoreOptions {
  /** A connected ioredis client (the host's, e.g. the one given to redisTaskStore). */
  client: RedisIdempotencyClient;
  /** Prepended to every key. Default `'gw:idem:'`. */
  prefix?: string;
}

/** Idempotency keys in Redis, shared by every instance: `SET NX PX` takes a key atomically. */
export function redisIdempotencyStore(options: RedisIdempotencyStoreOptions): IdempotencyStore {
  const { client, prefix = 'gw:idem:' } = options;
  return {
    async begin(key, fingerprint, ttlMs, lease) {
      // a request must not wait for Redis to come back: it fails now (503), the client retries
      if (client.status === 'reconnecting' || client.status === 'close' || client.status === 'end') throw new Error(`Redis is not connected (${client.status})`);
      const taken = await client.set(prefix + key, JSON.stringify({ state: 'running', fingerprint, ...(lease && client.eval ? { lease } : {}) }), 'PX', ttlMs, 'NX');
      if (taken === 'OK') return undefined;
      const held = await client.get(prefix + key);
      // expired between the two commands: the key is free, but one more round is simpler than a script
      if (held === null) return this.begin(key, fingerprint, ttlMs, lease);
      return JSON.parse(held) as IdempotencyRecord;
    },
    async finish(key, record, ttlMs) {
      await client.set(prefix + key, JSON.stringify(record), 'PX', ttlMs);
    },
    async release(key) {
      await client.del(prefix + key);
    },
    async peek(key) {
      const held = await client.get(prefix + key);
      return held === null ? undefined : (JSON.parse(held) as IdempotencyRecord);
    },
    ...(client.getdel
      ? {
          async take(key: string): Promise<IdempotencyRecord | undefined> {
            const held = await client.getdel!(prefix + key);
            if (held === null) return undefined;
            const record = JSON.parse(held) as IdempotencyRecord;
            if (record.state === 'done') return record;
            // not an answer after all (a new try took the key meanwhile): put it back as it was
            await client.set(prefix + key, held, 'PX', 60_000);
            return undefined;
          },
        }
      : {}),
    ...(client.eval
      ? {
          async renew(key: string, lease: RunningLease, ttlMs: number): Promise<boolean> {
            const held = await client.get(prefix + key);
            const record = held === null ? undefined : (JSON.parse(held) as IdempotencyRecord);
            if (record?.state !== 'running') return false;
            return (await client.eval!(RENEW_SCRIPT, 1, prefix + key, lease.holder, JSON.stringify({ ...record, lease }), ttlMs)) === 1;
          },
          async claimLapsed(key: string, now: number, ttlMs: number): Promise<IdempotencyRecord | undefined> {
            const held = await client.eval!(CLAIM_SCRIPT, 1, prefix + key, now, ttlMs);
            return typeof held === 'string' ? (JSON.parse(held) as IdempotencyRecord) : undefined;
          },
          async clearInterrupted(key: string): Promise<boolean> {
            return (await client.eval!(CLEAR_SCRIPT, 1, prefix + key)) === 1;
          },
          async swap(key: string, expected: IdempotencyRecord, record: IdempotencyRecord, ttlMs: number): Promise<boolean> {
            return (await client.eval!(SWAP_SCRIPT, 1, prefix + key, JSON.stringify(expected), JSON.stringify(record), ttlMs)) === 1;
          },
        }
      : {}),
  };
}
