// One gateway instance on Redis (redisTaskStore + bullmqScheduler), as several would run in
// production: each with its own ioredis client, all sharing the prefixes and queue name.
import { Redis } from 'ioredis';
import { bullmqScheduler, redisTaskStore } from '../../lib/redis.js';
import { type TestGateway, createTestGateway } from './gateway-app.js';

export interface RedisInstanceConfig {
  redisUrl: string;
  /** Store key prefix and BullMQ queue name, unique per test run. */
  namespace: string;
  arkBaseURL: string;
  signingSecret: string;
}

export interface RedisInstance extends TestGateway {
  client: Redis;
}

export function startRedisInstance(config: RedisInstanceConfig): RedisInstance {
  const client = new Redis(config.redisUrl, { lazyConnect: false });
  const gateway = createTestGateway({
    store: redisTaskStore({ client, prefix: `${config.namespace}:` }),
    scheduler: bullmqScheduler({ connection: client, queueName: config.namespace, prefix: 'gwtest', lockDurationMs: 1_500, stalledIntervalMs: 500 }),
    resolveUpstream: ({ route }) => (route === 'video.tasks' ? { provider: 'ark', baseURL: config.arkBaseURL, apiKey: 'ark-key' } : null),
    callbacks: { allowLocal: true, pollIntervalsMs: [60], retryBaseMs: 300, retryMaxMs: 600, timeoutMs: 30_000, signingSecret: config.signingSecret },
  });
  return {
    ...gateway,
    client,
    close: async () => {
      await gateway.close();
      client.disconnect();
    },
  };
}
