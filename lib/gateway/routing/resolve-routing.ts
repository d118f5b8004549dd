// The `routing` and `onUpstreamHealth` options checked once (docs/routing-and-health.md "Defaults"), with
// a GatewayConfigError that shows the fix, and the instance's UpstreamHealth built from them. Health is
// shared through `routing.store`, else through the `redis` option's client (docs/configuration.md "redis").
import { GatewayConfigError } from '../../errors/config-error.js';
import type { Logger } from '../../options/host-hooks.js';
import type { BreakerOptions, RoutingOptions, RoutingStrategy, UpstreamHealthEvent } from '../../options/routing-options.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import type { BreakerSettings } from './circuit-breaker.js';
import { SharedHealth } from './shared-health.js';
import { UpstreamHealth } from './upstream-health.js';
import { DEFAULT_REDIS_PREFIX, REDIS_NAMESPACES, type ResolvedRedis } from '../options/redis-option.js';

export const ROUTING_STRATEGIES: readonly RoutingStrategy[] = ['ordered', 'weighted', 'latency', 'price'];

const DEFAULT_BREAKER: Readonly<Required<BreakerOptions>> = Object.freeze({
  failures: 5,
  failureRate: 0.5,
  windowSeconds: 60,
  minCalls: 20,
  cooldownSeconds: 30,
  accountCooldownSeconds: 300,
  maxRetryAfterSeconds: 300,
  minCallers: 3,
});

const ROUTING_NAMES = { strategy: true, breaker: true, store: true, prefix: true, explore: true, now: true } as const satisfies Record<keyof RoutingOptions, true>;
const EXAMPLE = "routing: { strategy: 'ordered', breaker: { failures: 5, cooldownSeconds: 30 }, store: redis }";

/** The instance's upstream health, from the options; its shared store started. `shared`: the `redis` option. */
export function resolveRouting(
  routing: RoutingOptions | undefined,
  onUpstreamHealth: ((event: UpstreamHealthEvent) => void) | undefined,
  logger: Logger,
  telemetry: Telemetry,
  shared?: ResolvedRedis,
): UpstreamHealth {
  const options = routing ?? {};
  if (options === null || typeof options !== 'object') throw new GatewayConfigError('routing_type', 'options.routing must be an object.', EXAMPLE);
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(ROUTING_NAMES, key)) throw new GatewayConfigError('routing_unknown', `Unknown routing option '${key}'.`, `use only: ${Object.keys(ROUTING_NAMES).join(', ')}.`);
  }
  if (options.strategy !== undefined && !ROUTING_STRATEGIES.includes(options.strategy)) {
    throw new GatewayConfigError('routing_value', `routing.strategy must be one of ${ROUTING_STRATEGIES.join(', ')}.`, "routing: { strategy: 'weighted' }");
  }
  if (options.explore !== undefined && !(typeof options.explore === 'number' && options.explore >= 0 && options.explore <= 1)) {
    throw new GatewayConfigError('routing_value', 'routing.explore must be a number from 0 to 1.', 'routing: { explore: 0.05 }');
  }
  if (options.now !== undefined && typeof options.now !== 'function')
    throw new GatewayConfigError('routing_value', 'routing.now must be a function returning ms.', 'routing: { now: () => Date.now() }');
  if (onUpstreamHealth !== undefined && typeof onUpstreamHealth !== 'function') {
    throw new GatewayConfigError('option_type', 'options.onUpstreamHealth must be a function.', 'onUpstreamHealth: (event) => pager.notify(event)');
  }
  const store = options.store;
  if (store !== undefined && (store === null || typeof store !== 'object' || typeof store.duplicate !== 'function' || typeof store.publish !== 'function' || typeof store.hgetall !== 'function')) {
    throw new GatewayConfigError(
      'routing_store',
      'routing.store must be a Redis client (ioredis): publish, hset, hgetall, hdel and duplicate.',
      'routing: { store: new Redis(process.env.REDIS_URL) }',
    );
  }
  const now = options.now ?? Date.now;
  const breaker = resolveBreaker(options.breaker);
  const health = new UpstreamHealth(
    { strategy: options.strategy ?? 'ordered', breaker, explore: options.explore ?? 0.05, now, random: Math.random },
    { logger, telemetry, ...(onUpstreamHealth ? { onUpstreamHealth } : {}) },
  );
  // what is shared is the breakers' states and trials: without a breaker there is nothing to share,
  // and no subscribing connection is opened
  const client = store ?? shared?.client;
  if (client && breaker) {
    const states = new SharedHealth(client, options.prefix ?? `${shared?.prefix ?? DEFAULT_REDIS_PREFIX}${REDIS_NAMESPACES.health}`, logger, (record) => health.adopt(record), now);
    health.share(states);
    states.start();
  }
  return health;
}

function resolveBreaker(breaker: BreakerOptions | false | undefined): BreakerSettings | undefined {
  if (breaker === false) return undefined;
  const given = breaker ?? {};
  if (given === null || typeof given !== 'object') throw new GatewayConfigError('routing_breaker', 'routing.breaker must be an object or false.', 'routing: { breaker: { failures: 5 } }');
  const values = { ...DEFAULT_BREAKER };
  for (const [name, value] of Object.entries(given) as Array<[keyof BreakerOptions, unknown]>) {
    if (!Object.hasOwn(DEFAULT_BREAKER, name)) throw new GatewayConfigError('routing_breaker', `Unknown routing.breaker option '${name}'.`, `use only: ${Object.keys(DEFAULT_BREAKER).join(', ')}.`);
    const valid =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      value >= 0 &&
      (name === 'failureRate' ? value <= 1 : name === 'failures' || name === 'minCalls' || name === 'minCallers' ? Number.isInteger(value) && value >= 1 : true);
    if (!valid)
      throw new GatewayConfigError(
        'routing_breaker',
        `routing.breaker.${name} must be ${name === 'failureRate' ? 'a share from 0 to 1' : name === 'failures' || name === 'minCalls' || name === 'minCallers' ? 'a whole number of 1 or more' : 'a positive number'}.`,
        `routing: { breaker: { ${name}: ${DEFAULT_BREAKER[name]} } }`,
      );
    values[name] = value;
  }
  return {
    failures: values.failures,
    failureRate: values.failureRate,
    windowMs: values.windowSeconds * 1000,
    minCalls: values.minCalls,
    cooldownMs: values.cooldownSeconds * 1000,
    accountCooldownMs: values.accountCooldownSeconds * 1000,
    maxRetryAfterMs: values.maxRetryAfterSeconds * 1000,
    minCallers: values.minCallers,
  };
}
