// Endpoint health in redisTaskStore (docs/video-tasks-and-callbacks.md "Endpoints that heal"), shared by
// every gateway instance on the Redis: one hash per tenant and endpoint, `<prefix>endpoint:<sha256>`,
// changed by scripts only, so counting an attempt, disabling and enabling are each atomic and exactly
// one instance sees an endpoint become disabled (and calls the hook). A set,
// `<prefix>endpoints-disabled`, names the disabled ones (a name whose hash expired is dropped when the
// set is read). Every hash expires `keepMs` after its last attempt: a forgotten endpoint is healthy, and
// a disabled one is forgotten as its paused deliveries are, so endpoints no one calls never pile up.
import { createHash } from 'node:crypto';
import type { EndpointDisableReason, EndpointHealth, EndpointHealthStore, EndpointRef } from './endpoint-records.js';
import { type ScriptClient, scriptRunner } from './redis-scripts.js';

// KEYS: endpoint, disabled set; ARGV: ok (1/0), at, attempts, failingMs, keepMs, tenant, url
const RECORD = `
local h = KEYS[1]
if redis.call('HEXISTS', h, 'url') == 0 then redis.call('HSET', h, 'tenant', ARGV[6], 'url', ARGV[7], 'failures', 0, 'disabled', 0) end
local fresh = 0
if ARGV[1] == '1' then
  redis.call('HSET', h, 'failures', 0, 'lastSuccessAt', ARGV[2])
  redis.call('HDEL', h, 'failingSince')
else
  local failures = redis.call('HINCRBY', h, 'failures', 1)
  local since = tonumber(redis.call('HGET', h, 'failingSince'))
  if not since then
    since = tonumber(ARGV[2])
    redis.call('HSET', h, 'failingSince', ARGV[2])
  end
  if redis.call('HGET', h, 'disabled') ~= '1' then
    local reason = false
    if failures >= tonumber(ARGV[3]) then reason = 'attempts' elseif tonumber(ARGV[2]) - since >= tonumber(ARGV[4]) then reason = 'hours' end
    if reason then
      redis.call('HSET', h, 'disabled', 1, 'disabledAt', ARGV[2], 'reason', reason)
      redis.call('SADD', KEYS[2], h)
      fresh = 1
    end
  end
end
redis.call('PEXPIRE', h, ARGV[5])
return { fresh, unpack(redis.call('HGETALL', h)) }
`;
// KEYS: endpoint, disabled set; ARGV: keepMs
const ENABLE = `
if redis.call('HGET', KEYS[1], 'disabled') ~= '1' then return 0 end
redis.call('HSET', KEYS[1], 'disabled', 0, 'failures', 0)
redis.call('HDEL', KEYS[1], 'disabledAt', 'reason', 'failingSince')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('SREM', KEYS[2], KEYS[1])
return 1
`;
// KEYS: endpoint
const READ = `return redis.call('HGETALL', KEYS[1])`;
// KEYS: disabled set
const MEMBERS = `return redis.call('SMEMBERS', KEYS[1])`;
// KEYS: disabled set, then the hashes to drop from it unless one is disabled (again) by now
const FORGET = `
for i = 2, #KEYS do
  if redis.call('HGET', KEYS[i], 'disabled') ~= '1' then redis.call('SREM', KEYS[1], KEYS[i]) end
end
return 0
`;

/** A hash's HGETALL (field, value, …) as the endpoint's health; undefined for an empty one. */
function healthOf(flat: string[]): EndpointHealth | undefined {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i]!, flat[i + 1]!);
  const tenant = fields.get('tenant');
  const url = fields.get('url');
  if (tenant === undefined || url === undefined) return undefined;
  const number = (name: string): number | undefined => (fields.has(name) ? Number(fields.get(name)) : undefined);
  const disabled = fields.get('disabled') === '1';
  const disabledAt = number('disabledAt');
  const failingSince = number('failingSince');
  const lastSuccessAt = number('lastSuccessAt');
  return {
    tenant,
    url,
    disabled,
    ...(disabled && disabledAt !== undefined ? { disabledAt, reason: fields.get('reason') as EndpointDisableReason } : {}),
    failures: number('failures') ?? 0,
    ...(failingSince !== undefined ? { failingSince } : {}),
    ...(lastSuccessAt !== undefined ? { lastSuccessAt } : {}),
  };
}

export function redisEndpointHealth(client: ScriptClient, prefix: string): EndpointHealthStore {
  const keyOf = (endpoint: EndpointRef): string => `${prefix}endpoint:${createHash('sha256').update(`${endpoint.tenant}\n${endpoint.url}`).digest('hex')}`;
  const disabledSet = `${prefix}endpoints-disabled`;
  const run = scriptRunner(client);
  return {
    async recordEndpointAttempt(endpoint, outcome, rule) {
      const args = [outcome.ok ? '1' : '0', String(outcome.at), String(rule.attempts), String(rule.failingMs), String(rule.keepMs), endpoint.tenant, endpoint.url];
      const [fresh, ...flat] = (await run(RECORD, [keyOf(endpoint), disabledSet], ...args)) as [number, ...string[]];
      return { health: healthOf(flat)!, disabledNow: fresh === 1 };
    },
    async getEndpoint(endpoint) {
      return healthOf((await run(READ, [keyOf(endpoint)])) as string[]);
    },
    async enableEndpoint(endpoint, rule) {
      return (await run(ENABLE, [keyOf(endpoint), disabledSet], String(rule.keepMs))) === 1;
    },
    async listDisabledEndpoints(tenant) {
      const keys = (await run(MEMBERS, [disabledSet])) as string[];
      const all = await Promise.all(keys.map(async (key) => healthOf((await run(READ, [key])) as string[])));
      // the names of hashes that expired (or were enabled meanwhile) leave the set
      const gone = keys.filter((_key, index) => !all[index]?.disabled);
      for (let at = 0; at < gone.length; at += 500) await run(FORGET, [disabledSet, ...gone.slice(at, at + 500)]).catch(() => undefined);
      return all.filter((health): health is EndpointHealth => health !== undefined && health.disabled && (tenant === undefined || health.tenant === tenant));
    },
  };
}
