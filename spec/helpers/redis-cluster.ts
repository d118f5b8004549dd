// Several gateway instances on one Redis, as the multi-instance specs run them: each test starts the
// cluster on a fresh namespace, then adds instances in this process (startRedisInstance) or each in a
// process of its own (redis-instance-main.ts) that the test can kill with SIGKILL while it holds work.
// `stop()` kills the processes, closes the instances and removes the namespace's keys.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GatewayOptions, UsageEvent } from '../../lib/index.js';
import { removeRedisKeys } from './redis-keys.js';
import { type RedisInstance, type RedisInstanceConfig, startRedisInstance } from './redis-instance.js';

const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'redis-instance-main.ts');

/** An instance in a process of its own, listening. */
export interface InstanceProcess {
  process: ChildProcess;
  url: string;
  /** The usage events the instance emitted, kept after it died. */
  usage: UsageEvent[];
  /** SIGKILL; resolves once the process has exited, with the time then (Date.now()). */
  kill: () => Promise<number>;
}

export interface RedisCluster {
  /** What every instance of the current test runs with (its namespace is the test's own). */
  readonly config: RedisInstanceConfig;
  /** A fresh namespace for this test, and the settings its instances share. */
  start(settings: Omit<RedisInstanceConfig, 'redisUrl' | 'namespace'>): RedisInstanceConfig;
  /** An instance in this process; `extra`: options of this instance only (a moderation policy, a storage). */
  instance(extra?: Partial<GatewayOptions>): RedisInstance;
  /** An instance in its own process, once it listens. */
  spawn(): Promise<InstanceProcess>;
  /** Closes one instance of this process before the test ends (an instance stopped, not killed). */
  close(instance: RedisInstance): Promise<void>;
  /** The upstream task an Idempotency-Key's lease recorded in this namespace (the holder wrote its id), if any. */
  recordedTask(): Promise<{ provider: string; id: string } | undefined>;
  /** Kills the processes, closes the instances and removes the keys of the current namespace. */
  stop(): Promise<void>;
}

/** `name` starts each namespace (`<name>-<random>`), so the keys of a spec file are told apart. */
export function redisCluster(redisUrl: string, name: string): RedisCluster {
  let config: RedisInstanceConfig | undefined;
  const running: RedisInstance[] = [];
  const children: ChildProcess[] = [];
  const current = (): RedisInstanceConfig => {
    if (!config) throw new Error('redisCluster: start() it first, in the test or a beforeEach');
    return config;
  };

  const spawnInstance = (): Promise<InstanceProcess> => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      env: { ...process.env, GATEWAY_INSTANCE: JSON.stringify(current()) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    const usage: UsageEvent[] = [];
    const kill = async (): Promise<number> => {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
      return Date.now();
    };
    let buffered = '';
    // one JSON line once it listens ({"url"}), then one per usage event ({"usage"})
    return new Promise<InstanceProcess>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          const parsed = JSON.parse(line) as { url?: string; usage?: UsageEvent };
          if (parsed.usage) usage.push(parsed.usage);
          if (parsed.url) resolve({ process: child, url: parsed.url, usage, kill });
        }
      });
      child.once('exit', (code) => reject(new Error(`instance exited with ${code}`)));
    });
  };

  return {
    get config() {
      return current();
    },
    start(settings) {
      config = { ...settings, redisUrl, namespace: `${name}-${randomBytes(4).toString('hex')}` };
      return config;
    },
    instance(extra) {
      const started = startRedisInstance(current(), extra);
      running.push(started);
      return started;
    },
    spawn: spawnInstance,
    async recordedTask() {
      const reader = new Redis(redisUrl);
      try {
        for (const name of await reader.keys(`${current().namespace}:idem:*`)) {
          const text = await reader.get(name);
          const record = text ? (JSON.parse(text) as { lease?: { work?: { upstreamTask?: { provider: string; id: string } } } }) : undefined;
          if (record?.lease?.work?.upstreamTask) return record.lease.work.upstreamTask;
        }
        return undefined;
      } finally {
        reader.disconnect();
      }
    },
    async close(instance) {
      running.splice(running.indexOf(instance), 1);
      await instance.close();
    },
    async stop() {
      for (const child of children.splice(0)) child.kill('SIGKILL');
      await Promise.all(running.splice(0).map((gw) => gw.close()));
      if (!config) return;
      await removeRedisKeys(redisUrl, [`${config.namespace}:*`, `gwtest:${config.namespace}:*`]);
    },
  };
}
