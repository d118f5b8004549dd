// resolveOptions(): required options, defaults, limits merging, freezing, and config errors that show the fix.
import { describe, expect, it } from 'vitest';
import { GatewayConfigError } from '../../lib/errors/config-error.js';
import { DEFAULT_IMAGE_MODELS } from '../../lib/images/model-families.js';
import { DEFAULT_LIMITS } from '../../lib/default-limits.js';
import { resolveOptions } from '../../lib/gateway/resolve-options.js';
import type { GatewayOptions } from '../../lib/options/gateway-options.js';

const verifyKey: GatewayOptions['verifyKey'] = () => null;
const resolveUpstream: GatewayOptions['resolveUpstream'] = () => null;

function configError(options: unknown): GatewayConfigError {
  try {
    resolveOptions(options as GatewayOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayConfigError);
    return error as GatewayConfigError;
  }
  throw new Error('expected resolveOptions to throw');
}

describe('resolveOptions: mis-configuration throws GatewayConfigError with a fix', () => {
  it.each<{ name: string; options: unknown; code: string; problem: string }>([
    { name: 'no options', options: undefined, code: 'options_missing', problem: 'createGatewayRouter needs an options object.' },
    { name: 'missing verifyKey', options: { resolveUpstream }, code: 'verify_key_missing', problem: 'options.verifyKey must be a function' },
    { name: 'verifyKey not a function', options: { verifyKey: { 'sk-a': 'a' }, resolveUpstream }, code: 'verify_key_missing', problem: 'options.verifyKey must be a function' },
    { name: 'missing resolveUpstream', options: { verifyKey }, code: 'resolve_upstream_missing', problem: 'options.resolveUpstream must be a function' },
    { name: 'unknown option', options: { verifyKey, resolveUpstream, limit: {} }, code: 'option_unknown', problem: "Unknown option 'limit'." },
    { name: 'onUsage not a function', options: { verifyKey, resolveUpstream, onUsage: true }, code: 'option_type', problem: 'options.onUsage must be a function.' },
    {
      name: 'unknown routing strategy',
      options: { verifyKey, resolveUpstream, routing: { strategy: 'random' } },
      code: 'routing_value',
      problem: 'routing.strategy must be one of ordered, weighted, latency, price.',
    },
    { name: 'unknown routing option', options: { verifyKey, resolveUpstream, routing: { toString: 1 } }, code: 'routing_unknown', problem: "Unknown routing option 'toString'." },
    {
      name: 'breaker failures of 0',
      options: { verifyKey, resolveUpstream, routing: { breaker: { failures: 0 } } },
      code: 'routing_breaker',
      problem: 'routing.breaker.failures must be a whole number of 1 or more.',
    },
    {
      name: 'breaker minCallers of 1.5',
      options: { verifyKey, resolveUpstream, routing: { breaker: { minCallers: 1.5 } } },
      code: 'routing_breaker',
      problem: 'routing.breaker.minCallers must be a whole number of 1 or more.',
    },
    {
      name: 'breaker maxRetryAfterSeconds negative',
      options: { verifyKey, resolveUpstream, routing: { breaker: { maxRetryAfterSeconds: -1 } } },
      code: 'routing_breaker',
      problem: 'routing.breaker.maxRetryAfterSeconds must be a positive number.',
    },
    { name: 'unknown breaker option', options: { verifyKey, resolveUpstream, routing: { breaker: { cooldown: 5 } } }, code: 'routing_breaker', problem: "Unknown routing.breaker option 'cooldown'." },
    { name: 'a store that is no Redis client', options: { verifyKey, resolveUpstream, routing: { store: {} } }, code: 'routing_store', problem: 'routing.store must be a Redis client' },
    { name: 'onUpstreamHealth not a function', options: { verifyKey, resolveUpstream, onUpstreamHealth: 'log' }, code: 'option_type', problem: 'options.onUpstreamHealth must be a function.' },
    {
      name: 'allow.privateImageUrls not a boolean',
      options: { verifyKey, resolveUpstream, allow: { privateImageUrls: 'yes' } },
      code: 'option_type',
      problem: 'options.allow.privateImageUrls must be a boolean.',
    },
    { name: 'allow not an object', options: { verifyKey, resolveUpstream, allow: true }, code: 'option_type', problem: 'options.allow must be an object.' },
    { name: 'unknown allow option', options: { verifyKey, resolveUpstream, allow: { localCallbacks: true } }, code: 'option_unknown', problem: "Unknown allow option 'localCallbacks'." },
    { name: 'unknown tenancy option', options: { verifyKey, resolveUpstream, tenancy: { billing: {} } }, code: 'option_unknown', problem: "Unknown tenancy option 'billing'." },
    {
      name: 'tenancy.chargeFailedWork not a boolean',
      options: { verifyKey, resolveUpstream, tenancy: { chargeFailedWork: 'yes' } },
      code: 'option_type',
      problem: 'options.tenancy.chargeFailedWork must be true or false.',
    },
    { name: 'onStrikeLimit not a function', options: { verifyKey, resolveUpstream, onStrikeLimit: 'page' }, code: 'option_type', problem: 'options.onStrikeLimit must be a function.' },
    {
      name: 'the catalogue given as models itself',
      options: { verifyKey, resolveUpstream, models: [] },
      code: 'option_moved',
      problem: 'options.models is now { catalogue, list }',
    },
    {
      name: 'the strike hook inside the moderation policy',
      options: { verifyKey, resolveUpstream, moderation: { check: () => ({ flagged: false, categories: [] }), onStrikeLimit: () => {} } },
      code: 'option_moved',
      problem: 'moderation.onStrikeLimit is now the top-level option onStrikeLimit.',
    },
    {
      name: 'the strike key prefix under its old name',
      options: { verifyKey, resolveUpstream, moderation: { check: () => ({ flagged: false, categories: [] }), redisPrefix: 'x:' } },
      code: 'option_moved',
      problem: 'moderation.redisPrefix is now moderation.prefix',
    },
    { name: 'a scheduler that is not one', options: { verifyKey, resolveUpstream, callbacks: { scheduler: {} } }, code: 'scheduler_type', problem: 'options.callbacks.scheduler lacks start' },
    { name: 'redis given as a URL', options: { verifyKey, resolveUpstream, redis: 'redis://127.0.0.1:6379' }, code: 'redis_type', problem: 'options.redis must be an object { client, prefix? }.' },
    { name: 'redis without its client', options: { verifyKey, resolveUpstream, redis: { prefix: 'gw:' } }, code: 'redis_client', problem: 'options.redis.client must be a connected ioredis client.' },
    {
      name: 'a redis client lacking commands',
      options: { verifyKey, resolveUpstream, redis: { client: { get: () => null, set: () => 'OK' } } },
      code: 'redis_client',
      problem: 'options.redis.client must be a connected ioredis client (it lacks del, eval, evalsha, multi, publish, hset, hgetall, hdel, duplicate).',
    },
    { name: 'an unknown redis option', options: { verifyKey, resolveUpstream, redis: { url: 'redis://127.0.0.1:6379' } }, code: 'option_unknown', problem: "Unknown redis option 'url'." },
    {
      name: 'tenancy.afterAuthentication not middleware',
      options: { verifyKey, resolveUpstream, tenancy: { afterAuthentication: 'rateLimit' } },
      code: 'option_type',
      problem: 'options.tenancy.afterAuthentication must be a middleware (req, res, next) or a list of them.',
    },
    {
      name: 'limits.compressedBodies not a boolean or object',
      options: { verifyKey, resolveUpstream, limits: { compressedBodies: 'gzip' } },
      code: 'compressed_bodies_type',
      problem: 'options.limits.compressedBodies must be a boolean or an object.',
    },
    {
      name: 'limits.imageTasks with an unknown field',
      options: { verifyKey, resolveUpstream, limits: { imageTasks: { slots: 4 } } },
      code: 'image_tasks_unknown',
      problem: "Unknown limits.imageTasks option 'slots'.",
    },
    { name: 'limits not an object', options: { verifyKey, resolveUpstream, limits: 5 }, code: 'limits_type', problem: 'options.limits must be an object.' },
    { name: 'unknown limit', options: { verifyKey, resolveUpstream, limits: { bodyBytes: 1 } }, code: 'limit_unknown', problem: "Unknown limit 'bodyBytes'." },
    // regression: `key in DEFAULT_LIMITS` walked the prototype chain, so Object.prototype names pass as limits
    { name: 'a prototype name as a limit', options: { verifyKey, resolveUpstream, limits: { toString: 1 } }, code: 'limit_unknown', problem: "Unknown limit 'toString'." },
    {
      name: 'negative limit',
      options: { verifyKey, resolveUpstream, limits: { dataUrlBytes: -1 } },
      code: 'limit_value',
      problem: 'limits.dataUrlBytes must be a positive integer, got -1.',
    },
    { name: 'zero limit', options: { verifyKey, resolveUpstream, limits: { imagesPerRequest: 0 } }, code: 'limit_value', problem: 'limits.imagesPerRequest must be a positive integer, got 0.' },
    {
      name: 'fractional limit',
      options: { verifyKey, resolveUpstream, limits: { upstreamTimeoutMs: 1.5 } },
      code: 'limit_value',
      problem: 'limits.upstreamTimeoutMs must be a positive integer, got 1.5.',
    },
    { name: 'string limit', options: { verifyKey, resolveUpstream, limits: { jsonBodyBytes: '10mb' } }, code: 'limit_value', problem: 'limits.jsonBodyBytes must be a positive integer, got 10mb.' },
    { name: 'imageModels not an array', options: { verifyKey, resolveUpstream, imageModels: {} }, code: 'image_models_type', problem: 'options.imageModels must be an array of families.' },
    {
      name: 'imageModels entry without pattern',
      options: { verifyKey, resolveUpstream, imageModels: [{ minImages: 0, maxImages: 0, maxN: 1 }] },
      code: 'image_models_pattern',
      problem: "options.imageModels[0].pattern must be a model name or a prefix ending in '*'.",
    },
    {
      name: "imageModels pattern '*' alone",
      options: { verifyKey, resolveUpstream, imageModels: [{ pattern: '*', minImages: 0, maxImages: 0, maxN: 1 }] },
      code: 'image_models_pattern',
      problem: "options.imageModels[0].pattern must be a model name or a prefix ending in '*'.",
    },
    {
      name: 'imageModels entry with a negative number',
      options: { verifyKey, resolveUpstream, imageModels: [...DEFAULT_IMAGE_MODELS, { pattern: 'y-*', minImages: -1, maxImages: 1, maxN: 1 }] },
      code: 'image_models_number',
      problem: 'options.imageModels[4].minImages must be a whole number >= 0.',
    },
    {
      name: 'imageModels entry with minImages > maxImages',
      options: { verifyKey, resolveUpstream, imageModels: [{ pattern: 'y-edit', minImages: 2, maxImages: 1, maxN: 1 }] },
      code: 'image_models_range',
      problem: 'options.imageModels[0] needs minImages <= maxImages and maxN >= 1.',
    },
    {
      name: 'imageModels entry with maxN 0',
      options: { verifyKey, resolveUpstream, imageModels: [{ pattern: 'y-edit', minImages: 0, maxImages: 1, maxN: 0 }] },
      code: 'image_models_range',
      problem: 'options.imageModels[0] needs minImages <= maxImages and maxN >= 1.',
    },
    { name: 'imageModels entry null', options: { verifyKey, resolveUpstream, imageModels: [null] }, code: 'image_models_pattern', problem: 'options.imageModels[0].pattern' },
  ])('$name', ({ options, code, problem }) => {
    const error = configError(options);
    expect(error.code).toBe(code);
    expect(error.name).toBe('GatewayConfigError');
    const [first, fix] = error.message.split('\nFix: ');
    expect(first).toContain(problem);
    expect(fix).toMatch(/\S/); // a fix is always shown, on its own line
  });
});

describe('resolveOptions: an option under its old name is refused with its new place', () => {
  it.each<{ old: string; value: unknown; now: string }>([
    { old: 'compressedBodies', value: true, now: 'limits.compressedBodies' },
    { old: 'imageTasks', value: { concurrency: 4 }, now: 'limits.imageTasks' },
    { old: 'listModels', value: () => [], now: 'models.list' },
    { old: 'allowPrivateImageUrls', value: true, now: 'allow.privateImageUrls' },
    { old: 'allowPrivateResultUrls', value: true, now: 'allow.privateResultUrls' },
    { old: 'allowOperatorAssets', value: true, now: 'allow.operatorAssets' },
    { old: 'fallthrough', value: true, now: 'allow.fallthrough' },
    { old: 'pricing', value: { currency: 'USD' }, now: 'tenancy.pricing' },
    { old: 'quotas', value: { limits: {} }, now: 'tenancy.quotas' },
    { old: 'billing', value: { chargeFailedWork: true }, now: 'tenancy.chargeFailedWork' },
    { old: 'safetyIdentifier', value: false, now: 'tenancy.safetyIdentifier' },
    { old: 'scheduler', value: {}, now: 'callbacks.scheduler' },
    { old: 'afterAuthentication', value: () => {}, now: 'tenancy.afterAuthentication' },
  ])('$old -> $now', ({ old, value, now }) => {
    const error = configError({ verifyKey, resolveUpstream, [old]: value });
    expect(error.code).toBe('option_moved');
    const [first, fix] = error.message.split('\nFix: ');
    expect(first).toContain(`Option '${old}' is now ${now}.`);
    expect(fix).toContain(`${now.split('.')[0]}: {`);
  });
});

describe('resolveOptions: defaults and merging', () => {
  it('applies every default and freezes the result', () => {
    const resolved = resolveOptions({ verifyKey, resolveUpstream });
    expect({
      verifyKey: resolved.verifyKey,
      resolveUpstream: resolved.resolveUpstream,
      limits: resolved.limits,
      families: resolved.imageModels.families,
      allowPrivateImageUrls: resolved.allowPrivateImageUrls,
      onUsage: resolved.onUsage,
    }).toStrictEqual({
      verifyKey,
      resolveUpstream,
      limits: DEFAULT_LIMITS,
      families: DEFAULT_IMAGE_MODELS,
      allowPrivateImageUrls: false,
      onUsage: undefined,
    });
    expect(Object.keys(resolved.logger).sort()).toEqual(['error', 'info', 'warn']);
    expect(resolved.logger.info({}, 'silent by default')).toBeUndefined();
    for (const part of [resolved, resolved.limits, resolved.logger, resolved.imageModels, resolved.imageModels.families]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
  });

  it.each<{ name: string; limits: Record<string, number | undefined>; expected: Record<string, number> }>([
    { name: 'one key', limits: { dataUrlBytes: 1024 }, expected: { ...DEFAULT_LIMITS, dataUrlBytes: 1024 } },
    {
      name: 'two keys',
      limits: { imagesPerRequest: 2, upstreamTimeoutMs: 5_000 },
      expected: { ...DEFAULT_LIMITS, imagesPerRequest: 2, upstreamTimeoutMs: 5_000 },
    },
    { name: 'an undefined key keeps its default', limits: { jsonBodyBytes: undefined }, expected: { ...DEFAULT_LIMITS } },
    { name: 'empty object', limits: {}, expected: { ...DEFAULT_LIMITS } },
  ])('partial limits merge with DEFAULT_LIMITS ($name)', ({ limits, expected }) => {
    const resolved = resolveOptions({ verifyKey, resolveUpstream, limits });
    expect(resolved.limits).toStrictEqual(expected);
    expect(Object.isFrozen(resolved.limits)).toBe(true);
    expect(DEFAULT_LIMITS.dataUrlBytes).toBe(10 * 1024 * 1024); // the defaults themselves are untouched
  });

  it('keeps given values: allow.privateImageUrls, onUsage, logger methods, imageModels', () => {
    const onUsage = (): void => {};
    const lines: string[] = [];
    const logger = {
      prefix: 'gw',
      warn(this: { prefix: string }, _fields: Record<string, unknown>, message: string) {
        lines.push(`${this.prefix}: ${message}`);
      },
    };
    const family = { pattern: 'y-image*', minImages: 0, maxImages: 1, maxN: 2 };
    const resolved = resolveOptions({ verifyKey, resolveUpstream, allow: { privateImageUrls: true }, onUsage, logger, imageModels: [family] });
    resolved.logger.warn({}, 'careful');
    resolved.logger.error({}, 'not configured, so silent');
    expect({
      allowPrivateImageUrls: resolved.allowPrivateImageUrls,
      onUsage: resolved.onUsage,
      families: resolved.imageModels.families,
      found: resolved.imageModels.find('y-image-1'),
      lines,
    }).toStrictEqual({ allowPrivateImageUrls: true, onUsage, families: [family], found: family, lines: ['gw: careful'] });
  });
});
