// One gateway instance on Redis (redisTaskStore + bullmqScheduler), as several would run in
// production: each with its own ioredis client, all sharing the prefixes and queue name.
import { Redis } from 'ioredis';
import { bullmqScheduler, redisIdempotencyStore, redisTaskStore } from '../../lib/redis.js';
import type { GatewayOptions } from '../../lib/index.js';
import { type TestGateway, createTestGateway } from './gateway-app.js';

export interface RedisInstanceConfig {
  redisUrl: string;
  /** Store key prefix and BullMQ queue name, unique per test run. */
  namespace: string;
  arkBaseURL: string;
  signingSecret: string;
  /** An image upstream (DashScope's base of the counting fake): image routes resolve to it, with a short deadline. */
  imagesBaseURL?: string;
  /** Quotas on this Redis (images per minute), shared by every instance. */
  imagesPerMinute?: number;
  /** The image upstream's deadline (`Upstream.timeoutMs`), ms. Default 3 000; `null`: none, the gateway's default applies. */
  imageTimeoutMs?: number | null;
  /** `limits.imageTasks.leaseSeconds` and `idempotency.leaseSeconds`: how soon another instance finds this one stopped. */
  leaseSeconds?: number;
  /** `limits.imageTasks.concurrency`: 1 keeps a second task queued behind a running one. */
  imageTasksConcurrency?: number;
  /** Idempotency-Keys and kept answers on this Redis too (redisIdempotencyStore), shared by every instance. Default: each instance's own memory. */
  idempotency?: boolean;
  /** A Replicate upstream (the fake's `/v1` base) with its token: image models `owner/name` resolve to it. */
  replicate?: { baseURL: string; apiKey: string };
}

export interface RedisInstance extends TestGateway {
  client: Redis;
}

/** `extra`: options of this instance only (functions too: an instance in its own process has none). */
export function startRedisInstance(config: RedisInstanceConfig, extra: Partial<GatewayOptions> = {}): RedisInstance {
  const client = new Redis(config.redisUrl, { lazyConnect: false });
  const gateway = createTestGateway({
    store: redisTaskStore({ client, prefix: `${config.namespace}:` }),
    resolveUpstream: ({ model, route }) => {
      if (route === 'video.tasks') return { provider: 'ark', baseURL: config.arkBaseURL, apiKey: 'ark-key' };
      // Replicate's models are named owner/name: each request is one prediction
      if (config.replicate && route.startsWith('images.') && model.includes('/'))
        return { provider: 'replicate', baseURL: config.replicate.baseURL, apiKey: config.replicate.apiKey, model, timeoutMs: config.imageTimeoutMs ?? 3_000 };
      // x-image-plus runs on DashScope's asynchronous synthesis (upstreams §1.5), any other image model synchronously
      if (config.imagesBaseURL && route.startsWith('images.'))
        return {
          provider: 'dashscope',
          baseURL: config.imagesBaseURL,
          apiKey: 'ds-key',
          model: model === 'x-image-plus' ? 'qwen-image-plus' : 'qwen-image-2.0',
          ...(config.imageTimeoutMs === null ? {} : { timeoutMs: config.imageTimeoutMs ?? 3_000 }),
        };
      return null;
    },
    ...(config.imagesBaseURL
      ? {
          limits: {
            downloadTimeoutMs: 1_000,
            imageTasks: {
              ...(config.leaseSeconds !== undefined ? { leaseSeconds: config.leaseSeconds } : {}),
              ...(config.imageTasksConcurrency !== undefined ? { concurrency: config.imageTasksConcurrency } : {}),
            },
          },
        }
      : {}),
    ...(config.idempotency
      ? { idempotency: { store: redisIdempotencyStore({ client, prefix: `${config.namespace}:idem:` }), ...(config.leaseSeconds !== undefined ? { leaseSeconds: config.leaseSeconds } : {}) } }
      : {}),
    ...(config.imagesPerMinute !== undefined ? { tenancy: { quotas: { limits: { imagesPerMinute: config.imagesPerMinute }, redis: client, prefix: `${config.namespace}:quota:` } } } : {}),
    callbacks: {
      allowLocal: true,
      pollIntervalsMs: { video: [60], image: [1000] },
      retryBaseMs: 300,
      retryMaxMs: 600,
      timeoutMs: 30_000,
      signingSecret: config.signingSecret,
      scheduler: bullmqScheduler({ connection: client, queueName: config.namespace, prefix: 'gwtest', lockDurationMs: 1_500, stalledIntervalMs: 500 }),
    },
    ...extra,
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
