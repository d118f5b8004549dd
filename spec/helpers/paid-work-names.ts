// The names of the paid-work contract (docs/tenancy-and-billing.md "Retries", "Billing contract") that
// the specs need and the HTTP contract does not fix: the options that keep an answer its client did not
// take, the usage-event fields a billing system reads, and the Redis stores of several instances. All in
// this one file, so the router and the specs agree on them in one place.
import type { Redis } from 'ioredis';
import type { GatewayOptions, QuotaLimits, UsageEvent } from '../../lib/index.js';
import { redisIdempotencyStore, redisTaskStore } from '../../lib/redis.js';

/** The header the `openai` SDKs obey: `false` on an error answer after which paid upstream work may have started. */
export const SHOULD_RETRY_HEADER = 'x-should-retry';

/** Usage-event field: images the upstream made (or may have made) that the caller was not given. */
export const UNDELIVERED_IMAGES_FIELD = 'undeliveredImages';

/** Usage-event field of the chat and responses routes: the upstream's token usage. */
export const TOKENS_FIELD = 'tokens';
/** The members of `tokens`: input and output always, cached and reasoning where the upstream reported them. */
export const TOKEN_NAMES = { input: 'input', output: 'output', cached: 'cached', reasoning: 'reasoning' } as const;

export interface KeptAnswerSettings {
  ttlMs?: number;
  maxBytes?: number;
  finishMs?: number;
}

/**
 * Gateway options that set the kept answers' bounds: `idempotency.keptAnswerSeconds` (how long a kept
 * answer waits), `maxAnswerBytes` (the largest kept) and `keptWorkSeconds` (how long the upstream call
 * may go on after its client left or its deadline passed), all in whole seconds.
 */
export function keptAnswers(settings: KeptAnswerSettings, base: Record<string, unknown> = {}): Partial<GatewayOptions> {
  const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));
  return {
    idempotency: {
      ...base,
      ...(settings.ttlMs !== undefined ? { keptAnswerSeconds: seconds(settings.ttlMs) } : {}),
      ...(settings.maxBytes !== undefined ? { maxAnswerBytes: settings.maxBytes } : {}),
      ...(settings.finishMs !== undefined ? { keptWorkSeconds: seconds(settings.finishMs) } : {}),
    },
  };
}

/** The images an event reports as made upstream and not delivered; 0 when the field is absent. */
export function undeliveredImagesOf(event: UsageEvent): number {
  const value = (event as unknown as Record<string, unknown>)[UNDELIVERED_IMAGES_FIELD];
  return typeof value === 'number' ? value : 0;
}

/** The token usage an event reports, or undefined. */
export function tokensOf(event: UsageEvent): Record<string, number> | undefined {
  const value = (event as unknown as Record<string, unknown>)[TOKENS_FIELD];
  return typeof value === 'object' && value !== null ? (value as Record<string, number>) : undefined;
}

/**
 * The options of one instance among several on one Redis: every store the gateway keeps shared state in
 * (tasks, Idempotency-Keys and kept answers, quotas), under `prefix`.
 */
export function redisStores(client: Redis, prefix: string, limits?: QuotaLimits): Partial<GatewayOptions> {
  return {
    store: redisTaskStore({ client, prefix: `${prefix}tasks:` }),
    idempotency: { store: redisIdempotencyStore({ client, prefix: `${prefix}idem:` }) },
    ...(limits ? { tenancy: { quotas: { limits, redis: client, prefix: `${prefix}quota:` } } } : {}),
  };
}
