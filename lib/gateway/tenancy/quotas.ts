// Per-caller quotas in billing units (docs/tenancy-and-billing.md): requests and images per minute,
// video-seconds per day, concurrent video tasks. Each kind is one rate-limiter-flexible counter per
// caller (memory, or Redis shared by every instance); the caller's own limit is compared with the
// counter after a weighted consume, so one counter serves callers on different plans. A refused
// charge gives back what it took: a refused request costs nothing. A quote (`Prefer: dry-run`) reads
// the counters without consuming (`peek`): the same limits, the same 429, nothing taken.
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { QuotaExceededError, type RateLimitFields } from '../../errors/quota-exceeded-error.js';
import type { Caller } from '../../types.js';
import type { Logger } from '../../options/host-hooks.js';
import type { QuotaLimits, QuotaState } from '../../options/gateway-options.js';
import { type ResolvedQuotas, checkQuotaLimits } from './resolve-tenancy.js';
import { MICROS, type PriceAsk, type Pricing } from '../ledger/pricing.js';
import type { LedgerPolicy } from '../ledger/reckoning.js';

/** What one request costs, per kind. */
export interface QuotaCost {
  requests?: number;
  images?: number;
  videoSeconds?: number;
  videoTasks?: number;
  /** Money, in millionths of the pricing currency: filled by the charge from `priced` when the caller has a budget. */
  budget?: number;
  /** What the request asks for, for the most it may cost (a money budget's reservation). */
  priced?: PriceAsk;
}

/** A kind of quota a request is charged against. */
export type QuotaKind = Exclude<keyof QuotaCost, 'priced'>;
type Kind = QuotaKind;

/** One of the caller's limits as a request would meet it, read without taking anything (`Quotas.peek`). */
export interface QuotaPeek {
  kind: QuotaKind;
  /** The real charge would count this kind: the caller has a limit for it and the request costs it something. */
  charged: boolean;
  /** What the request would take, in the counter's unit (a money budget in millionths); 0 when not charged. */
  asked: number;
  /** The charge would pass this limit. */
  passes: boolean;
  /** What would be left once the request took `asked` (never below 0), in the counter's unit. */
  remaining: number;
  /** The 429 the charge would answer, when it would not pass. */
  refusal?: QuotaExceededError;
}

/** What a charge took, so the parts the caller did not get can be given back (never throws). */
export interface QuotaCharge {
  /** The kinds this charge counted (those the caller has a limit for). */
  readonly taken: readonly Kind[];
  /** What is left of each counted limit after this charge, for the RateLimit headers of the answer. */
  readonly rateLimit: readonly RateLimitFields[];
  /**
   * When each counted kind's window ends (ms since the epoch): a give-back after that would land in a
   * later window, which never held this charge, and so is dropped (see `Quotas.reward`).
   */
  readonly windowEnds: Readonly<Partial<Record<Kind, number>>>;
  /** Gives back `kinds`, whole or (`amounts`) in part; each kind at most once, and only within the window it was taken in. */
  refund(kinds: readonly Kind[], amounts?: QuotaCost): Promise<void>;
  /** The money reserved, in millionths, when the caller has a budget. */
  readonly budget?: number;
  /** Settles the money budget to what the work cost (millionths): the rest back, or the excess taken. Once. */
  settleBudget(actual: number): Promise<void>;
}

const KINDS: Record<Kind, { limit: keyof QuotaLimits; name: QuotaState['name']; unit: string }> = {
  requests: { limit: 'requestsPerMinute', name: 'requests', unit: 'requests per minute' },
  images: { limit: 'imagesPerMinute', name: 'images', unit: 'images per minute' },
  videoSeconds: { limit: 'videoSecondsPerDay', name: 'video-seconds', unit: 'video-seconds per day' },
  videoTasks: { limit: 'concurrentVideoTasks', name: 'video-tasks', unit: 'video tasks running at once' },
  budget: { limit: 'budget', name: 'budget', unit: 'budget' },
};
// the counters count; the caller's limit decides. Far above any limit, so the counter never refuses.
const COUNTER_POINTS = Number.MAX_SAFE_INTEGER;
// the memory counters expire with setTimeout, which fires at once past 2^31-1 ms (24.8 days): a longer
// window would forget every charge immediately, so a slot is held 24 days at most
const MAX_WINDOW_SECONDS = 24 * 86_400;
const WINDOW_END_MARGIN_MS = 250;
const NOTHING: QuotaCharge = { taken: [], rateLimit: [], windowEnds: {}, refund: async () => {}, settleBudget: async () => {} };
const CHARGED_NOTHING = Promise.resolve(NOTHING);

export class Quotas {
  private readonly counters: Record<Kind, RateLimiterAbstract>;
  private readonly windows: Record<Kind, number | undefined>;
  /** How long each counter keeps a charge, seconds: a new window's reset, for the refusal a quote reports. */
  private readonly durations: Record<Kind, number>;

  constructor(
    private readonly config: ResolvedQuotas | undefined,
    private readonly logger: Logger,
    /** How long a video-task slot is held at most (a task nobody sees end): callbacks.maxFollowMs. */
    videoSlotMs: number,
    /** The ledger's policy: the `pricing` option (what a money budget reserves and settles) and who pays for lost work. */
    readonly ledger: LedgerPolicy = { pricing: undefined, chargeFailedWork: false },
  ) {
    const budgetWindow = config?.budgetWindowSeconds ?? 86_400;
    this.windows = { requests: 60, images: 60, videoSeconds: 86_400, videoTasks: undefined, budget: budgetWindow };
    const durations: Record<Kind, number> = (this.durations = {
      requests: 60,
      images: 60,
      videoSeconds: 86_400,
      videoTasks: Math.min(Math.ceil(videoSlotMs / 1000), MAX_WINDOW_SECONDS),
      budget: budgetWindow,
    });
    const make = (kind: Kind): RateLimiterAbstract => {
      const common = { points: COUNTER_POINTS, duration: durations[kind], keyPrefix: `${config?.prefix ?? 'gw:quota:'}${kind}` };
      return config?.redis ? new RateLimiterRedis({ ...common, storeClient: config.redis }) : new RateLimiterMemory(common);
    };
    this.counters = { requests: make('requests'), images: make('images'), videoSeconds: make('videoSeconds'), videoTasks: make('videoTasks'), budget: make('budget') };
  }

  /** The `pricing` option: what a money budget reserves and settles. */
  get pricing(): Pricing | undefined {
    return this.ledger.pricing;
  }

  /** False when no quotas are configured: every charge takes nothing (withCharge skips it). */
  get enabled(): boolean {
    return this.config?.limits !== undefined;
  }

  /** The charge that took nothing, for work that needs one when quotas are off. */
  static readonly nothing: QuotaCharge = NOTHING;

  /** The caller's limits (none when quotas are off or the host's function says so). A throwing lookup is a 500. */
  async limitsFor(caller: Caller): Promise<QuotaLimits | undefined> {
    const limits = this.config?.limits;
    if (limits === undefined) return undefined;
    if (typeof limits !== 'function') return limits;
    try {
      const found = (await limits(caller)) ?? undefined;
      // a plan row with a misspelt or non-numeric limit would otherwise be a quota silently not enforced
      if (found !== undefined) checkQuotaLimits(found, 'quotas.limits(caller)');
      return found;
    } catch (error) {
      this.logger.error({ caller: caller.id, error: error instanceof Error ? error.message : String(error) }, 'quotas.limits threw or returned invalid limits; answering 500');
      throw GatewayError.internal();
    }
  }

  /**
   * Takes `cost` from the caller's budgets, all or nothing: a 429 QuotaExceededError naming the
   * first limit that would be passed, and nothing kept. Kinds without a limit are not counted.
   */
  charge(caller: Caller, cost: QuotaCost): Promise<QuotaCharge> {
    // quotas off: one shared settled promise, not two async frames per request (docs/architecture.md "Performance")
    if (this.config?.limits === undefined) return CHARGED_NOTHING;
    return this.chargeLimited(caller, cost);
  }

  private async chargeLimited(caller: Caller, cost: QuotaCost): Promise<QuotaCharge> {
    const limits = await this.limitsFor(caller);
    if (!limits) return NOTHING;
    const budget = this.reservation(limits, cost);
    if (budget !== undefined) cost.budget = budget;
    const kinds = (Object.keys(KINDS) as Kind[]).filter((kind) => counts(kind, cost, limits));
    if (kinds.length === 0) return NOTHING;
    const key = caller.id;
    // a lost connection fails now instead of holding the request in ioredis's offline queue
    if (this.config?.redis && isDisconnected(this.config.redis)) return this.storeDown(new Error(`Redis is not connected (${String(this.config.redis.status)})`));
    const settled = await Promise.allSettled(kinds.map((kind) => this.counters[kind].consume(key, cost[kind])));
    const taken = kinds.filter((_kind, index) => settled[index]!.status === 'fulfilled');
    const windowEnds = windowEndsOf(kinds, settled);
    const giveBack = (which: readonly Kind[], amounts: QuotaCost = cost): Promise<void> => this.reward(key, which, amounts, windowEnds);
    const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) {
      await giveBack(taken);
      return this.storeDown(failed.reason);
    }
    for (const [index, kind] of kinds.entries()) {
      const result = (settled[index] as PromiseFulfilledResult<RateLimiterRes>).value;
      const limit = limitOf(limits, kind);
      if (result.consumedPoints > limit) {
        await giveBack(taken);
        throw this.refusal(kind, limit, result, cost[kind]!);
      }
    }
    let refunded = new Set<Kind>();
    const rateLimit = kinds.map((kind, index) => this.fields(kind, limitOf(limits, kind), (settled[index] as PromiseFulfilledResult<RateLimiterRes>).value));
    return {
      taken,
      rateLimit,
      windowEnds,
      ...(cost.budget !== undefined && taken.includes('budget') ? { budget: cost.budget } : {}),
      settleBudget: async (actual) => {
        if (!taken.includes('budget') || refunded.has('budget') || cost.budget === undefined) return;
        refunded = new Set([...refunded, 'budget']);
        if (actual < cost.budget) await giveBack(['budget'], { budget: cost.budget - actual });
        else if (actual > cost.budget) await this.spend(key, actual - cost.budget, windowEnds.budget);
      },
      refund: async (which, amounts) => {
        const now = which.filter((kind) => taken.includes(kind) && !refunded.has(kind));
        refunded = new Set([...refunded, ...now]);
        // never more than was charged
        const back = Object.fromEntries(now.map((kind) => [kind, Math.min(cost[kind]!, amounts?.[kind] ?? cost[kind]!)]));
        await giveBack(
          now.filter((kind) => back[kind]! > 0),
          back,
        );
      },
    };
  }

  /**
   * Each of the caller's limits as `cost` would meet it, read from the counters without consuming
   * (rate-limiter-flexible's `get`): whether the charge would pass it, what would remain, and the 429
   * it would answer otherwise (the same as `charge`'s). Nothing is taken; an unreachable Redis is the
   * charge's 503 (or, with `whenRedisDown: 'allow'`, no limits: the request would run uncounted).
   */
  async peek(caller: Caller, cost: QuotaCost): Promise<QuotaPeek[]> {
    const limits = await this.limitsFor(caller);
    if (!limits) return [];
    const budget = this.reservation(limits, cost);
    const asked: QuotaCost = budget === undefined ? cost : { ...cost, budget };
    const kinds = (Object.keys(KINDS) as Kind[]).filter((kind) => limits[KINDS[kind].limit] !== undefined);
    if (this.config?.redis && isDisconnected(this.config.redis)) {
      this.storeDown(new Error(`Redis is not connected (${String(this.config.redis.status)})`));
      return [];
    }
    const settled = await Promise.allSettled(kinds.map((kind) => this.counters[kind].get(caller.id)));
    const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) {
      this.storeDown(failed.reason);
      return [];
    }
    return kinds.map((kind, index) => {
      const used = (settled[index] as PromiseFulfilledResult<RateLimiterRes | null>).value;
      const limit = limitOf(limits, kind);
      const charged = counts(kind, asked, limits);
      const amount = charged ? (asked[kind] ?? 0) : 0;
      // as the charge sees it after its consume: what was counted in this window, plus this request
      const after = Math.max(0, used?.consumedPoints ?? 0) + amount;
      // a limit the request does not count is never what refuses it
      const passes = !charged || after <= limit;
      // a counter with nothing in its window would start one with this charge
      const counted = { consumedPoints: after, msBeforeNext: used ? used.msBeforeNext : this.durations[kind] * 1000 };
      return { kind, charged, asked: amount, passes, remaining: Math.max(0, limit - after), ...(passes ? {} : { refusal: this.refusal(kind, limit, counted, amount) }) };
    });
  }

  /**
   * What a money budget reserves, in millionths: the most the request may cost by the price table;
   * undefined when the caller has no budget or the model no price (then the budget does not count it).
   */
  private reservation(limits: QuotaLimits, cost: QuotaCost): number | undefined {
    if (limits.budget === undefined || !cost.priced || !this.pricing) return cost.budget;
    return this.pricing.mostMicros(cost.priced) ?? cost.budget;
  }

  /** Frees one concurrent-video-task slot of `callerId` (a task reached a terminal state), if taken in the window that ends at `windowEnd`. Never throws. */
  async releaseVideoTask(callerId: string, windowEnd?: number): Promise<void> {
    await this.reward(callerId, ['videoTasks'], { videoTasks: 1 }, { videoTasks: windowEnd });
  }

  /** Gives back the video-seconds of a task that ended without a video, if taken in the window that ends at `windowEnd`. Never throws. */
  async refundVideoSeconds(callerId: string, seconds: number, windowEnd?: number): Promise<void> {
    await this.reward(callerId, ['videoSeconds'], { videoSeconds: seconds }, { videoSeconds: windowEnd });
  }

  /** Gives back images charged to `callerId` that a task did not produce, if taken in the window that ends at `windowEnd`. Never throws. */
  async refundImages(callerId: string, images: number, windowEnd?: number): Promise<void> {
    await this.reward(callerId, ['images'], { images }, { images: windowEnd });
  }

  /**
   * Settles a money budget reserved earlier (a video task at its terminal state): gives back what the
   * work did not cost, or takes what it cost beyond the reservation (never refused: the work is done).
   * Only within the window it was reserved in. Never throws.
   */
  async settleBudget(callerId: string, reserved: number, actual: number, windowEnd?: number): Promise<void> {
    if (actual < reserved) await this.reward(callerId, ['budget'], { budget: reserved - actual }, { budget: windowEnd });
    else if (actual > reserved) await this.spend(callerId, actual - reserved, windowEnd);
  }

  /** Counts money spent beyond a reservation, in its window (never refused, never throws). */
  private async spend(key: string, micros: number, windowEnd: number | undefined): Promise<void> {
    if (windowEnd !== undefined && windowEnd <= Date.now()) return;
    try {
      await this.counters.budget.penalty(key, micros);
    } catch (error) {
      this.logger.warn({ caller: key, quota: 'budget', error: error instanceof Error ? error.message : String(error) }, 'a budget settlement failed');
    }
  }

  /** Each configured limit of the caller with what is left now (docs/configuration.md "The router it returns": `router.quota(caller)`). */
  async state(caller: Caller): Promise<QuotaState[]> {
    const limits = await this.limitsFor(caller);
    if (!limits) return [];
    const kinds = (Object.keys(KINDS) as Kind[]).filter((kind) => limits[KINDS[kind].limit] !== undefined);
    return Promise.all(
      kinds.map(async (kind) => {
        const limit = limitOf(limits, kind);
        const used = await this.counters[kind].get(caller.id);
        const consumed = Math.max(0, used?.consumedPoints ?? 0);
        // a budget is told in money, counted in millionths
        const scale = kind === 'budget' ? MICROS : 1;
        return {
          name: KINDS[kind].name,
          limit: limit / scale,
          remaining: Math.max(0, limit - consumed) / scale,
          resetSeconds: this.windows[kind] === undefined || !used ? 0 : Math.ceil(used.msBeforeNext / 1000),
        };
      }),
    );
  }

  /**
   * Gives `cost` back. A counter whose window ended since the charge has been reset (rate-limiter-
   * flexible starts a new window at the next consume or reward): a give-back then would create a
   * negative count, a bonus the caller never paid for, so it is dropped; the old window is gone anyway.
   */
  private async reward(key: string, kinds: readonly Kind[], cost: QuotaCost, windowEnds: Partial<Record<Kind, number>> = {}): Promise<void> {
    const now = Date.now();
    await Promise.all(
      kinds.map(async (kind) => {
        const end = windowEnds[kind];
        if (end !== undefined && end <= now) return;
        try {
          await this.counters[kind].reward(key, cost[kind]);
        } catch (error) {
          // the budget stays charged until its window ends: the caller pays too much, never too little
          this.logger.warn({ caller: key, quota: KINDS[kind].name, error: error instanceof Error ? error.message : String(error) }, 'a quota refund failed');
        }
      }),
    );
  }

  private storeDown(reason: unknown): QuotaCharge {
    const message = reason instanceof Error ? reason.message : String(reason);
    if (this.config?.whenRedisDown === 'allow') {
      this.logger.warn({ error: message }, 'quota counters unreachable; request runs uncounted (quotas.whenRedisDown: allow)');
      return NOTHING;
    }
    this.logger.error({ error: message }, 'quota counters unreachable; answering 503 (quotas.whenRedisDown: refuse)');
    throw new GatewayError({
      status: 503,
      code: ERROR_CODES.quotaUnavailable,
      message: 'The usage quotas cannot be checked right now, so the request was not run. Retry shortly.',
      retryAfterSeconds: 5,
      type: 'server_error',
    });
  }

  private fields(kind: Kind, limit: number, result: Counted): RateLimitFields {
    const window = this.windows[kind];
    return {
      name: KINDS[kind].name,
      quota: limit,
      ...(window !== undefined ? { windowSeconds: window } : {}),
      remaining: Math.max(0, limit - result.consumedPoints),
      resetSeconds: window === undefined ? 0 : Math.ceil(result.msBeforeNext / 1000),
    };
  }

  private refusal(kind: Kind, limit: number, result: Counted, asked: number): QuotaExceededError {
    const { name, unit } = KINDS[kind];
    const window = this.windows[kind];
    const remaining = Math.max(0, limit - (result.consumedPoints - asked));
    // a concurrency slot frees when a task ends, which no clock predicts: a minute is an honest hint
    const resetSeconds = window === undefined ? 60 : Math.max(1, Math.ceil(result.msBeforeNext / 1000));
    if (kind === 'budget') {
      const money = (micros: number): string => `${(micros / MICROS).toFixed(2)} ${this.pricing?.currency ?? ''}`.trim();
      const message =
        asked > limit
          ? `This request may cost up to ${money(asked)}, more than your whole budget of ${money(limit)} per ${window} s.`
          : `Budget exceeded: ${money(limit)} per ${window} s (budget); this request may cost up to ${money(asked)} and ${money(remaining)} remain. Retry in ${resetSeconds} s.`;
      return new QuotaExceededError(message, { name, quota: limit, ...(window !== undefined ? { windowSeconds: window } : {}), remaining, resetSeconds });
    }
    const message =
      asked > limit
        ? `This request needs ${asked} of your ${limit} ${unit}, more than the whole quota.`
        : `Quota exceeded: ${limit} ${unit} (${name}); this request needs ${asked} and ${remaining} remain. Retry in ${resetSeconds} s.`;
    return new QuotaExceededError(message, { name, quota: limit, ...(window !== undefined ? { windowSeconds: window } : {}), remaining, resetSeconds });
  }
}

/** A counter as a charge left it: what its window holds and when it resets. */
type Counted = Pick<RateLimiterRes, 'consumedPoints' | 'msBeforeNext'>;

/**
 * Whether a charge of `cost` counts `kind`: the caller has a limit for it and the request costs it
 * something. A budget is taken even at 0 reserved (tokens cannot be foreseen): it is settled to the
 * cost, and a caller already past it is refused.
 */
function counts(kind: Kind, cost: QuotaCost, limits: QuotaLimits): boolean {
  return ((cost[kind] ?? 0) > 0 || (kind === 'budget' && cost.budget !== undefined)) && limits[KINDS[kind].limit] !== undefined;
}

/** A caller's limit of a kind in the counter's unit: a money budget in millionths. */
function limitOf(limits: QuotaLimits, kind: Kind): number {
  const limit = limits[KINDS[kind].limit]!;
  return kind === 'budget' ? Math.floor(limit * MICROS) : limit;
}

/** When each consumed counter's window ends (no end for a counter without expiry). */
function windowEndsOf(kinds: readonly Kind[], settled: ReadonlyArray<PromiseSettledResult<RateLimiterRes>>): Partial<Record<Kind, number>> {
  const now = Date.now();
  const ends: Partial<Record<Kind, number>> = {};
  kinds.forEach((kind, index) => {
    const result = settled[index];
    // the counter's expiry was read before its answer travelled back: a margin, so that a give-back
    // never races the reset of the window it belongs to
    if (result?.status === 'fulfilled' && result.value.msBeforeNext > 0) ends[kind] = now + result.value.msBeforeNext - WINDOW_END_MARGIN_MS;
  });
  return ends;
}

/** ioredis's states of a connection that was lost ('wait' and 'connecting' at startup still queue and succeed). */
function isDisconnected(client: { status?: string }): boolean {
  return client.status === 'reconnecting' || client.status === 'close' || client.status === 'end';
}
