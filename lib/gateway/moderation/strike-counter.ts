// Per-tenant strikes of the moderation policy (docs/content-safety.md "Strikes"): a fixed window that
// starts at a tenant's first strike and ends `strikeWindowSeconds` later. In this process's memory by
// default; in the host's Redis (`moderation.redis`) when several instances must count together, as
// the quota counters use the host's client (quotas.redis): one key per tenant, INCR and PEXPIRE in one
// script, never closed by the gateway.
import type { StrikeRedisClient } from '../../options/moderation-options.js';

/** The strike count of one tenant, and how it grows and clears. */
export interface StrikeCounter {
  /** The tenant's strikes in the current window (0 when none). */
  count(tenant: string): Promise<number>;
  /** One more strike; resolves with the count after it. */
  add(tenant: string, windowMs: number): Promise<number>;
  clear(tenant: string): Promise<void>;
}

/** Counts in this process: a tenant's entry is dropped once its window passed. */
export function memoryStrikes(): StrikeCounter {
  const windows = new Map<string, { count: number; until: number }>();
  const live = (tenant: string): { count: number; until: number } | undefined => {
    const entry = windows.get(tenant);
    if (entry && entry.until <= Date.now()) {
      windows.delete(tenant);
      return undefined;
    }
    return entry;
  };
  return {
    count: (tenant) => Promise.resolve(live(tenant)?.count ?? 0),
    add: (tenant, windowMs) => {
      const entry = live(tenant) ?? { count: 0, until: Date.now() + windowMs };
      entry.count += 1;
      windows.set(tenant, entry);
      return Promise.resolve(entry.count);
    },
    clear: (tenant) => {
      windows.delete(tenant);
      return Promise.resolve();
    },
  };
}

// the window starts with the first strike: its expiry is set only then
const ADD_SCRIPT = "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return n";

type Commands = {
  eval(script: string, keys: number, key: string, windowMs: string): Promise<unknown>;
  get(key: string): Promise<string | null>;
  del(key: string): Promise<unknown>;
};

/** Counts in the host's Redis under `prefix` + the tenant id. */
export function redisStrikes(client: StrikeRedisClient, prefix: string): StrikeCounter {
  const redis = client as unknown as Commands;
  return {
    count: async (tenant) => Number((await redis.get(prefix + tenant)) ?? 0) || 0,
    add: async (tenant, windowMs) => Number(await redis.eval(ADD_SCRIPT, 1, prefix + tenant, String(Math.max(1, Math.round(windowMs))))),
    clear: async (tenant) => {
      await redis.del(prefix + tenant);
    },
  };
}
