// A TaskStore in Redis, for several gateway instances or restarts (docs/architecture.md: long-lived state behind
// interfaces, with a Redis-backed implementation). Each record is one JSON string under
// `<prefix>task:<id>` or `<prefix>asset:<id>`: a single SET/GET is atomic and the records are small and
// always read whole, so a hash would only add field-by-field encoding of nested values (`result`).
// updateTask merges in JS and lets a Lua script do only the compare-and-set on `version`, so Redis never
// re-encodes user data (cjson turns `{}` into `[]` and rounds large integers).
// The ioredis client belongs to the host: this store never connects, quits or redefines commands on it.
// The client is typed by the few commands used, not by ioredis's class: ioredis is an optional peer,
// and published declarations that import it break hosts without it (TS2307 under skipLibCheck: false).
import { createHash } from 'node:crypto';
import { GatewayConfigError } from '../../errors/config-error.js';
import { redisDeliveryLog } from './redis-delivery-log.js';
import { redisEndpointHealth } from './redis-endpoint-health.js';
import { scriptRunner } from './redis-scripts.js';
import type { AssetRecord, TaskChanges, TaskRecord, TaskStore } from './task-store.js';

/** Ark forgets its tasks too, so a record kept longer would only point at a task that no longer exists. */
const DEFAULT_TASK_TTL_SECONDS = 30 * 24 * 60 * 60;

/** The commands redisTaskStore sends, as ioredis's `Redis` declares them (a `new Redis(url)` fits). */
export interface RedisTaskStoreClient {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, nx: 'NX'): Promise<'OK' | null>;
  set(key: string, value: string, secondsToken: 'EX', seconds: number, nx: 'NX'): Promise<'OK' | null>;
  evalsha(sha1: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>;
}

export interface RedisTaskStoreOptions {
  /** A connected ioredis client; the host creates and closes it. Example: `new Redis(process.env.REDIS_URL!)`. */
  client: RedisTaskStoreClient;
  /** Prepended to every key, so several gateways (or apps) can share one Redis. Default `'gw:'`. */
  prefix?: string;
  /** Seconds a task record lives after it is created (updates keep it); 0 keeps tasks forever. Default 30 days. */
  taskTtlSeconds?: number;
  /**
   * Seconds an asset record lives after it is (re)recorded; 0 keeps asset records forever. Default 0.
   * An asset record is ownership: once it is gone, a well-formed id recorded for nobody passes as the
   * operator's under allow.operatorAssets, so any tenant could reference that asset. Set this only
   * above the time Ark keeps the asset (ownership must outlive any reference to it).
   * Example: `redisTaskStore({ client, assetTtlSeconds: 400 * 24 * 3600 })`.
   */
  assetTtlSeconds?: number;
}

// KEYS[1] = task key, ARGV[1] = expected version, ARGV[2] = the merged record. Decoding only reads
// `version`; the stored value is ARGV[2] byte for byte. KEEPTTL (Redis 6+): an update must not make a
// task live longer (or forever).
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
if tonumber(cjson.decode(current).version) ~= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
`;

// KEYS[1] = asset key, ARGV[1] = owner, ARGV[2] = the record, ARGV[3] = TTL seconds (0: none). One
// script, so two instances recording one id for two owners cannot both win: the first owner stays.
// Decoding only reads `owner`; the stored value is ARGV[2] byte for byte.
const PUT_ASSET = `
local current = redis.call('GET', KEYS[1])
if current and cjson.decode(current).owner ~= ARGV[1] then return 0 end
if tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) else redis.call('SET', KEYS[1], ARGV[2]) end
return 1
`;
// Each owner's video tasks, for OpenAI's video list (docs/openai-videos.md): a sorted set by creation
// time under `<prefix>tasks-of:<sha256 of the owner>`, ids whose record expired pruned as they age out.
// KEYS[1] = the owner's set, ARGV[1] = createdAt (ms), ARGV[2] = id, ARGV[3] = TTL seconds (0: none).
const INDEX_TASK = `
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
if tonumber(ARGV[3]) > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[3]) * 1000)
  redis.call('EXPIRE', KEYS[1], ARGV[3])
end
return 1
`;
// KEYS[1] = the owner's set, ARGV[1] = the id the page starts after ('' for the first page),
// ARGV[2] = how many ids, ARGV[3] = 'asc' or 'desc'. An `after` not in the set gives no ids.
const PAGE_TASKS = `
local start = 0
if ARGV[1] ~= '' then
  local rank
  if ARGV[3] == 'desc' then rank = redis.call('ZREVRANK', KEYS[1], ARGV[1]) else rank = redis.call('ZRANK', KEYS[1], ARGV[1]) end
  if not rank then return {} end
  start = rank + 1
end
local stop = start + tonumber(ARGV[2]) - 1
if ARGV[3] == 'desc' then return redis.call('ZREVRANGE', KEYS[1], start, stop) end
return redis.call('ZRANGE', KEYS[1], start, stop)
`;
// KEYS[1] = a task key or an owner's set, ARGV[1] = the id (ignored for a task key)
const FORGET = `
if redis.call('TYPE', KEYS[1]).ok == 'zset' then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return redis.call('DEL', KEYS[1])
`;

export function redisTaskStore(options: RedisTaskStoreOptions): TaskStore {
  const { client, prefix = 'gw:', taskTtlSeconds = DEFAULT_TASK_TTL_SECONDS, assetTtlSeconds = 0 } = options;
  if (!client || typeof client.evalsha !== 'function') {
    throw new GatewayConfigError('redis_client', 'redisTaskStore() needs an ioredis client.', 'redisTaskStore({ client: new Redis(process.env.REDIS_URL!) })');
  }
  if (!Number.isSafeInteger(taskTtlSeconds) || taskTtlSeconds < 0) {
    throw new GatewayConfigError(
      'redis_ttl',
      `taskTtlSeconds must be a whole number of seconds >= 0, got ${String(taskTtlSeconds)}.`,
      'redisTaskStore({ client, taskTtlSeconds: 7 * 24 * 3600 }) (0 = no expiry)',
    );
  }
  if (!Number.isSafeInteger(assetTtlSeconds) || assetTtlSeconds < 0) {
    throw new GatewayConfigError(
      'redis_ttl',
      `assetTtlSeconds must be a whole number of seconds >= 0, got ${String(assetTtlSeconds)}.`,
      'redisTaskStore({ client, assetTtlSeconds: 0 }) (0 = no expiry, the default)',
    );
  }
  const taskKey = (id: string): string => `${prefix}task:${id}`;
  const assetKey = (id: string): string => `${prefix}asset:${id}`;

  const ownerKey = (owner: string): string => `${prefix}tasks-of:${createHash('sha256').update(owner).digest('hex')}`;

  const run = scriptRunner(client);
  const evalScript = (script: string, key: string, ...args: string[]): Promise<unknown> => run(script, [key], ...args);
  const runScript = async (script: string, key: string, ...args: string[]): Promise<boolean> => (await evalScript(script, key, ...args)) === 1;
  const compareAndSet = (key: string, expectedVersion: number, json: string): Promise<boolean> => runScript(COMPARE_AND_SET, key, String(expectedVersion), json);

  // JSON.parse gives a fresh object on every read: no caller ever shares stored state
  const read = async <T>(key: string): Promise<T | undefined> => {
    const json = await client.get(key);
    return json === null ? undefined : (JSON.parse(json) as T);
  };

  return {
    // the delivery log under the same prefix, its records kept `deliveries.retentionDays` (redis-delivery-log.ts)
    ...redisDeliveryLog(client, prefix),
    // the health of callback endpoints, shared by every instance (redis-endpoint-health.ts)
    ...redisEndpointHealth(client, prefix),
    async createTask(record) {
      const json = JSON.stringify({ ...record, version: 1 });
      // NX makes "rejects if the id exists" atomic across instances
      const reply = taskTtlSeconds > 0 ? await client.set(taskKey(record.id), json, 'EX', taskTtlSeconds, 'NX') : await client.set(taskKey(record.id), json, 'NX');
      if (reply !== 'OK') throw new Error(`task ${record.id} exists`);
      if (record.kind === 'video') await evalScript(INDEX_TASK, ownerKey(record.owner), String(record.createdAt), record.id, String(taskTtlSeconds));
    },
    getTask: (id) => read<TaskRecord>(taskKey(id)),
    async updateTask(id: string, expectedVersion: number, changes: TaskChanges) {
      const current = await read<TaskRecord>(taskKey(id));
      // checked here too, so a stale writer costs one GET and no script call
      if (!current || current.version !== expectedVersion) return undefined;
      // shallow, as in memoryTaskStore: status/result/callback replace the old values whole
      const json = JSON.stringify({ ...current, ...changes, version: current.version + 1 });
      // the script re-checks the version: another instance may have written between our GET and now
      if (!(await compareAndSet(taskKey(id), expectedVersion, json))) return undefined;
      return JSON.parse(json) as TaskRecord;
    },
    async putAsset(record) {
      // ownership never moves (task-store.ts): a lost check-and-set is not an error for the store
      await runScript(PUT_ASSET, assetKey(record.id), record.owner, JSON.stringify(record), String(assetTtlSeconds));
    },
    getAsset: (id) => read<AssetRecord>(assetKey(id)),
    async listTasks(owner, page) {
      // one more than the page, to know whether more follow
      const ids = (await evalScript(PAGE_TASKS, ownerKey(owner), page.after ?? '', String(page.limit + 1), page.order)) as string[];
      const records = await Promise.all(ids.slice(0, page.limit).map((id) => read<TaskRecord>(taskKey(id))));
      // an id whose record is gone (expired) is dropped from the set as it is met
      for (const [index, record] of records.entries()) if (!record) await evalScript(FORGET, ownerKey(owner), ids[index]!);
      return { tasks: records.filter((record): record is TaskRecord => record !== undefined), hasMore: ids.length > page.limit };
    },
    async deleteTask(id) {
      const record = await read<TaskRecord>(taskKey(id));
      await evalScript(FORGET, taskKey(id), id);
      if (record) await evalScript(FORGET, ownerKey(record.owner), id);
    },
  };
}
