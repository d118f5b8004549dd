// The public options of health-aware routing (docs/routing-and-health.md): how the gateway picks among
// the upstreams `resolveUpstream` returns, the circuit breaker that keeps failing ones out, where the
// health is shared, and the events and reports an operator reads. Types only; gateway/routing/ reads them.
import type { ProviderName, Upstream } from '../types.js';

/**
 * How the healthy upstreams of a list are ordered (docs/routing-and-health.md "Strategies"):
 * `'ordered'` as the resolver listed them, `'weighted'` by `Upstream.weight`, `'latency'` fastest first
 * (with a floor of exploration), `'price'` cheapest first by the model catalogue's price, ties by latency.
 */
export type RoutingStrategy = 'ordered' | 'weighted' | 'latency' | 'price';

/** What `resolveUpstream` may return in place of a list: the list and its own strategy. */
export interface RoutedUpstreams {
  upstreams: readonly Upstream[];
  /** This list's strategy, over `routing.strategy`. @example strategy: 'weighted' */
  strategy?: RoutingStrategy;
}

/**
 * The circuit breaker of each upstream (docs/routing-and-health.md "States"). Each key is optional.
 * @example breaker: { failures: 3, cooldownSeconds: 10 }
 */
export interface BreakerOptions {
  /** Consecutive failures that open an upstream. Default 5. @example failures: 3 */
  failures?: number;
  /** Share of failed calls within `windowSeconds` that opens it (once `minCalls` were made). Default 0.5. @example failureRate: 0.3 */
  failureRate?: number;
  /** The window of `failureRate`, seconds. Default 60. @example windowSeconds: 30 */
  windowSeconds?: number;
  /** Calls in the window before `failureRate` is read. Default 20. @example minCalls: 50 */
  minCalls?: number;
  /**
   * Distinct caller ids whose failures within `windowSeconds` it takes before a 5xx, a timeout or an
   * unreadable answer (failures a request itself may cause) opens the upstream for every caller. Below
   * that, a caller's own `failures` in a row open it for that caller alone for `cooldownSeconds`. 429s,
   * connect failures and operator-account failures open it for everyone regardless. 1: any caller's
   * failures open it for everyone. Default 3. @example minCallers: 5
   */
  minCallers?: number;
  /** Seconds an upstream stays open, or the vendor's `Retry-After` when longer. Default 30. @example cooldownSeconds: 10 */
  cooldownSeconds?: number;
  /** Seconds an operator-account failure (401, 403, account blocked, quota exhausted) keeps it open. Default 300. @example accountCooldownSeconds: 600 */
  accountCooldownSeconds?: number;
  /**
   * The longest vendor `Retry-After` honoured, seconds: a 429's wait rests the upstream at most this
   * long, and a longer wait keeps an opened upstream out at most this long. A `Retry-After` that cannot
   * be read (a bad HTTP date, a negative or non-numeric value) gets `cooldownSeconds`. Default 300.
   * @example maxRetryAfterSeconds: 120
   */
  maxRetryAfterSeconds?: number;
}

/**
 * The Redis client health is shared through (`routing.store`): ioredis's shape. The gateway never
 * waits for it on a request: it reads a local copy that the channel's messages update.
 */
export interface RoutingHealthClient {
  /** ioredis's connection state: nothing is sent once it is 'end'. */
  status?: string;
  publish(channel: string, message: string): Promise<unknown>;
  hset(key: string, field: string, value: string): Promise<unknown>;
  hgetall(key: string): Promise<Record<string, string>>;
  hdel(key: string, field: string): Promise<unknown>;
  /** Claims the one half-open trial of the cluster (`SET key value PX ms NX`); without it each instance sends its own trial. */
  set?(key: string, value: string, px: 'PX', milliseconds: number, nx: 'NX'): Promise<unknown>;
  /**
   * Frees the trial's claim once its outcome is known, only while it is still this instance's (a
   * compare-and-delete Lua script: a claim that outlived its lease may be another instance's by then).
   * Without it the claim is left to lapse at the end of its lease (60 s).
   */
  eval?(script: string, numkeys: number, key: string, value: string): Promise<unknown>;
  /** A second connection for the subscription (a subscribed connection can send nothing else). */
  duplicate(): RoutingHealthSubscriber;
}

/** The subscribing connection `duplicate()` returns (ioredis's shape). */
export interface RoutingHealthSubscriber {
  subscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  quit(): Promise<unknown>;
  disconnect?(): void;
}

/**
 * The `routing` option. Each key is optional.
 * @example routing: { strategy: 'latency', breaker: { cooldownSeconds: 10 } }
 */
export interface RoutingOptions {
  /** Default `'ordered'` (the list as the resolver returned it). @example strategy: 'weighted' */
  strategy?: RoutingStrategy;
  /** The circuit breaker; `false` turns it off (every upstream is always tried). Default on, with BreakerOptions' defaults. */
  breaker?: BreakerOptions | false;
  /**
   * An override: a Redis client (ioredis) of its own to share health between instances. Default: the
   * `redis` option's client, else each instance keeps its own. Nothing is shared with `breaker: false`.
   * @example store: new Redis(process.env.HEALTH_REDIS_URL)
   */
  store?: RoutingHealthClient;
  /** An override: prepended to the Redis key and channel. Default `'<redis.prefix>health:'` (`'gw:health:'`). @example prefix: 'myapp:health:' */
  prefix?: string;
  /** Share of `'latency'` choices that try another upstream first, so a recovered one is seen again. Default 0.05. @example explore: 0.1 */
  explore?: number;
  /** The clock, ms since the epoch (tests pass their own). Default `Date.now`. */
  now?: () => number;
}

/** What fails together: one upstream's health is kept per provider, base URL, credential, upstream model and route kind. */
export interface UpstreamIdentity {
  provider: ProviderName;
  baseURL: string;
  /** A short hash of the credential (`apiKey` or `accessKeyId`), never the key; `'none'` without one. */
  credential: string;
  /** The upstream model (`Upstream.model`, else the caller's). */
  model: string;
  route: 'images' | 'video' | 'chat' | 'assets';
}

/** `closed`: used. `open`: skipped until `openUntil`. `half-open`: one trial request, the rest go elsewhere. */
export type UpstreamState = 'closed' | 'open' | 'half-open';

/**
 * Why the state changed. `caller-failures`: opened for one caller alone by its own failures (the event's
 * `caller`); every other caller still uses the upstream.
 */
export type UpstreamHealthReason = 'failures' | 'failure-rate' | 'account' | 'retry-after' | 'caller-failures' | 'trial-failed' | 'cooldown-over' | 'recovered';

/** What `onUpstreamHealth` hears when an upstream changes state on this instance. */
export interface UpstreamHealthEvent {
  upstream: UpstreamIdentity;
  state: UpstreamState;
  reason: UpstreamHealthReason;
  /** When the state began. */
  since: Date;
  /** When an open upstream is tried again. */
  openUntil?: Date;
  /** The one caller id it changed for (opened by its own failures, `caller-failures`, or closed again by its success); absent when it changed for every caller. */
  caller?: string;
}

/** An upstream open (skipped) for one caller alone, by that caller's own failures (docs/routing-and-health.md "Whose failure"). */
export interface UpstreamCallerState {
  caller: string;
  /** The caller's own consecutive failures. */
  failures: number;
  since: Date;
  /** When this caller may use it again. */
  openUntil: Date;
}

/** One upstream in `router.health()`. */
export interface UpstreamHealthReport {
  upstream: UpstreamIdentity;
  state: UpstreamState;
  /** Consecutive failures now. */
  failures: number;
  /** The moving estimate of its time to answer (first byte for streams), ms; undefined before a success. */
  latencyMs?: number;
  /** When an open upstream is tried again; undefined when not open. */
  openUntil?: Date;
  reason?: UpstreamHealthReason;
  since?: Date;
  /** The callers it is open for alone, now, by their own failures (`state` is everyone else's); absent when none. */
  openFor?: UpstreamCallerState[];
}
