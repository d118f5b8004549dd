// The delivery log of redisTaskStore (docs/video-tasks-and-callbacks.md "Delivery log"), shared by every
// gateway instance on the Redis. A delivery is three keys that expire together at its retention's end:
// `<prefix>delivery:<id>` (what does not change: task, owner, event, URL, body, times, as JSON written
// once), `<prefix>delivery-state:<id>` (its state) and `<prefix>delivery-attempts:<id>` (a list, one
// JSON attempt each, appended with RPUSH so two instances never lose each other's attempt). Pages come
// from sorted sets by creation time: all deliveries, each owner's, each task's; an id whose keys expired
// is skipped as it is met and the sets are trimmed past the retention on every create. Like the task
// store, every script names its keys, decodes no user JSON and uses the host's client as it is.
import { createHash } from 'node:crypto';
import { type ScriptClient, scriptRunner } from './redis-scripts.js';
import type { DeliveryAttempt, DeliveryLogStore, DeliveryQuery, DeliveryRecord, DeliveryState } from './delivery-records.js';

// KEYS: record, state, attempts, all, owner's, task's; ARGV: record JSON, state, expiresAt, createdAt, id, oldest createdAt kept
const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('PEXPIREAT', KEYS[2], ARGV[3])
redis.call('DEL', KEYS[3])
for i = 4, 6 do
  redis.call('ZADD', KEYS[i], ARGV[4], ARGV[5])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', '(' .. ARGV[6])
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[3]) - tonumber(ARGV[4]) then redis.call('PEXPIREAT', KEYS[i], ARGV[3]) end
end
return 1
`;
// KEYS: record, state, attempts
const READ = `
local record = redis.call('GET', KEYS[1])
if not record then return false end
local state = redis.call('GET', KEYS[2])
return { record, state or 'pending', unpack(redis.call('LRANGE', KEYS[3], 0, -1)) }
`;
// KEYS: record, state, attempts; ARGV: new state or '', attempt JSON or '', the state it must be in or ''
const UPDATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if ARGV[3] ~= '' and (redis.call('GET', KEYS[2]) or 'pending') ~= ARGV[3] then return false end
if ARGV[1] ~= '' then redis.call('SET', KEYS[2], ARGV[1], 'KEEPTTL') end
if ARGV[2] ~= '' then
  redis.call('RPUSH', KEYS[3], ARGV[2])
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[3], ttl) end
end
local state = redis.call('GET', KEYS[2])
return { redis.call('GET', KEYS[1]), state or 'pending', unpack(redis.call('LRANGE', KEYS[3], 0, -1)) }
`;
// KEYS: an index; ARGV: max score, min score, cursor score or '', cursor id, state or '', how many, state key prefix.
// Newest first; ties in reverse id order (as ZREVRANGEBYSCORE gives them); expired ids skipped.
const PAGE = `
local out = {}
local offset = 0
local want = tonumber(ARGV[6])
while #out < want do
  local page = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES', 'LIMIT', offset, 200)
  if #page == 0 then break end
  for i = 1, #page, 2 do
    local id = page[i]
    local keep = not (ARGV[3] ~= '' and tonumber(page[i + 1]) == tonumber(ARGV[3]) and id >= ARGV[4])
    if keep then
      local state = redis.call('GET', ARGV[7] .. id)
      keep = state and (ARGV[5] == '' or state == ARGV[5])
    end
    if keep then
      out[#out + 1] = id
      if #out >= want then break end
    end
  end
  offset = offset + 200
end
return out
`;

/** What is written once, as JSON: the record less its state and attempts. */
type FixedPart = Omit<DeliveryRecord, 'state' | 'attempts'>;

export function redisDeliveryLog(client: ScriptClient, prefix: string): DeliveryLogStore {
  const keysOf = (id: string): string[] => [`${prefix}delivery:${id}`, `${prefix}delivery-state:${id}`, `${prefix}delivery-attempts:${id}`];
  const ownerIndex = (owner: string): string => `${prefix}deliveries-of:${createHash('sha256').update(owner).digest('hex')}`;
  const taskIndex = (taskId: string): string => `${prefix}deliveries-of-task:${taskId}`;
  const allIndex = `${prefix}deliveries`;

  const run = scriptRunner(client);
  const recordOf = (reply: unknown): DeliveryRecord | undefined => {
    if (!Array.isArray(reply)) return undefined;
    const [fixed, state, ...attempts] = reply as string[];
    return { ...(JSON.parse(fixed!) as FixedPart), state: state as DeliveryState, attempts: attempts.map((json) => JSON.parse(json) as DeliveryAttempt) };
  };
  const get = async (id: string): Promise<DeliveryRecord | undefined> => recordOf(await run(READ, keysOf(id)));

  return {
    async createDelivery(record) {
      const { state, attempts: _attempts, ...fixed } = record;
      const retentionMs = record.expiresAt - record.createdAt;
      const created = await run(
        CREATE,
        [...keysOf(record.id), allIndex, ownerIndex(record.owner), taskIndex(record.taskId)],
        JSON.stringify(fixed),
        state,
        String(record.expiresAt),
        String(record.createdAt),
        record.id,
        String(record.createdAt - retentionMs),
      );
      if (created !== 1) return false;
      // a record made with attempts already (a copy from another log) keeps them
      for (const attempt of record.attempts) await run(UPDATE, keysOf(record.id), '', JSON.stringify(attempt), '');
      return true;
    },
    getDelivery: get,
    async updateDelivery(id, update) {
      return recordOf(await run(UPDATE, keysOf(id), update.state ?? '', update.attempt ? JSON.stringify(update.attempt) : '', update.from ?? ''));
    },
    async listDeliveries(query: DeliveryQuery) {
      const index = query.taskId !== undefined ? taskIndex(query.taskId) : query.owner !== undefined ? ownerIndex(query.owner) : allIndex;
      const { after, until } = query;
      const max = after !== undefined && (until === undefined || after.createdAt < until) ? String(after.createdAt) : until !== undefined ? `(${until}` : '+inf';
      const min = query.since !== undefined ? String(query.since) : '-inf';
      const ids = (await run(PAGE, [index], max, min, after ? String(after.createdAt) : '', after?.id ?? '', query.state ?? '', String(query.limit + 1), `${prefix}delivery-state:`)) as string[];
      const records = (await Promise.all(ids.slice(0, query.limit).map(get))).filter((record): record is DeliveryRecord => record !== undefined);
      // a task has one owner: another owner's task gives an empty page
      const owned = records.filter((record) => query.owner === undefined || record.owner === query.owner);
      return { deliveries: owned, hasMore: owned.length === records.length && ids.length > query.limit };
    },
  };
}
