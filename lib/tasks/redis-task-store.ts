// A TaskStore in Redis, for several gateway instances or restarts (design.md: long-lived state behind
// interfaces, with a Redis-backed implementation). Each record is one JSON string under
// `<prefix>task:<id>` or `<prefix>asset:<id>`: a single SET/GET is atomic and the records are small and
// always read whole, so a hash would only add field-by-field encoding of nested values (`result`).
// updateTask merges in JS and lets a Lua script do only the compare-and-set on `version`, so Redis never
// re-encodes user data (cjson turns `{}` into `[]` and rounds large integers).
// The ioredis client belongs to the host: this store never connects, quits or redefines commands on it.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { GatewayConfigError } from '../errors/config-error.js';
import type { AssetRecord, TaskChanges, TaskRecord, TaskStore } from './task-store.js';

/** Ark forgets its tasks too, so a record kept longer would only point at a task that no longer exists. */
export const DEFAULT_TASK_TTL_SECONDS = 30 * 24 * 60 * 60;

export interface RedisTaskStoreOptions {
  /** A connected ioredis client; the host creates and closes it. Example: `new Redis(process.env.REDIS_URL!)`. */
  client: Redis;
  /** Prepended to every key, so several gateways (or apps) can share one Redis. Default `'gw:'`. */
  prefix?: string;
  /** Seconds a task or asset record lives after it is created (updates keep it); 0 keeps records forever. Default 30 days. */
  taskTtlSeconds?: number;
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
const COMPARE_AND_SET_SHA = createHash('sha1').update(COMPARE_AND_SET).digest('hex');

export function redisTaskStore(options: RedisTaskStoreOptions): TaskStore {
  const { client, prefix = 'gw:', taskTtlSeconds = DEFAULT_TASK_TTL_SECONDS } = options;
  if (!client || typeof client.evalsha !== 'function') {
    throw new GatewayConfigError('redis_client', 'redisTaskStore() needs an ioredis client.', "redisTaskStore({ client: new Redis(process.env.REDIS_URL!) })");
  }
  if (!Number.isSafeInteger(taskTtlSeconds) || taskTtlSeconds < 0) {
    throw new GatewayConfigError('redis_ttl', `taskTtlSeconds must be a whole number of seconds >= 0, got ${String(taskTtlSeconds)}.`, 'redisTaskStore({ client, taskTtlSeconds: 7 * 24 * 3600 }) (0 = no expiry)');
  }
  const taskKey = (id: string): string => `${prefix}task:${id}`;
  const assetKey = (id: string): string => `${prefix}asset:${id}`;

  // EVALSHA first (the script is sent once per Redis server, not once per update); after a restart
  // or SCRIPT FLUSH the server answers NOSCRIPT and EVAL loads it again.
  const compareAndSet = async (key: string, expectedVersion: number, json: string): Promise<boolean> => {
    const args = [1, key, String(expectedVersion), json] as const;
    try {
      return (await client.evalsha(COMPARE_AND_SET_SHA, ...args)) === 1;
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return (await client.eval(COMPARE_AND_SET, ...args)) === 1;
    }
  };

  // JSON.parse gives a fresh object on every read: no caller ever shares stored state
  const read = async <T>(key: string): Promise<T | undefined> => {
    const json = await client.get(key);
    return json === null ? undefined : (JSON.parse(json) as T);
  };

  return {
    async createTask(record) {
      const json = JSON.stringify({ ...record, version: 1 });
      // NX makes "rejects if the id exists" atomic across instances
      const reply = taskTtlSeconds > 0 ? await client.set(taskKey(record.id), json, 'EX', taskTtlSeconds, 'NX') : await client.set(taskKey(record.id), json, 'NX');
      if (reply !== 'OK') throw new Error(`task ${record.id} exists`);
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
      const json = JSON.stringify(record);
      if (taskTtlSeconds > 0) await client.set(assetKey(record.id), json, 'EX', taskTtlSeconds);
      else await client.set(assetKey(record.id), json);
    },
    getAsset: (id) => read<AssetRecord>(assetKey(id)),
  };
}
