// Per-caller quotas in billing units (docs/tenancy-and-billing.md): requests and images per minute,
// video-seconds per day, concurrent video tasks. Each kind is one rate-limiter-flexible counter per
// caller (memory, or Redis shared by every instance); the caller's own limit is compared with the
// counter after a weighted consume, so one counter serves callers on different plans. A refused
// charge gives back what it took: a refused request costs nothing. A quote (`Prefer: dry-run`) reads
// the counters without consuming (`peek`): the same limits, the same 429, nothing taken. The kinds and
// what a request costs in them are quota-cost.ts, the counters quota-counters.ts, what a counter's
// reading tells the caller quota-readings.ts.
import type { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { QuotaExceededError, RateLimitFields } from '../../errors/quota-exceeded-error.js';
import type { Caller } from '../../types.js';
import type { Logger } from '../../options/host-hooks.js';
import type { QuotaLimits, QuotaState } from '../../options/gateway-options.js';
import { type ResolvedQuotas, checkQuotaLimits } from './resolve-tenancy.js';
import { MICROS, type Pricing } from '../ledger/pricing.js';
import type { LedgerPolicy } from '../ledger/reckoning.js';
import { QUOTA_KINDS, type QuotaCost, type QuotaKind, countsKind, limitOf } from './quota-cost.js';
import { isDisconnected, quotaCounters, windowEndsOf } from './quota-counters.js';
import { quotaRefusalOf, rateLimitFieldsOf } from './quota-readings.js';

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

/** What a charge took, as its work records it to be settled later or elsewhere (`Usage['charged']`, a lease's `charged`). */
export interface RecordedCharge {
  images?: number;
  imagesWindowEnd?: number;
  /** Money reserved, in millionths. */
  budget?: number;
  budgetWindowEnd?: number;
}

const NOTHING: QuotaCharge = { taken: [], rateLimit: [], windowEnds: {}, refund: async () => {}, settleBudget: async () => {} };
const CHARGED_NOTHING = Promise.resolve(NOTHING);

export class Quotas {
  private readonly counters: Record<Kind, RateLimiterAbstract>;
  private readonly windows: Record<Kind, number | undefined>;
  /** How long each counter keeps a charge, seconds: a new window's reset, for the refusal a quote reports. */
  private readonly durations: Record<Kind, number>;
  /**
   * False when no quotas are configured: every charge takes nothing (withCharge skips it). A field
   * decided once with the options, not a getter: a request without quotas runs no code of this module
   * (docs/architecture.md "The walk of one image request").
   */
  readonly enabled: boolean;

  constructor(
    private readonly config: ResolvedQuotas | undefined,
    private readonly logger: Logger,
    /** How long a video-task slot is held at most (a task nobody sees end): callbacks.maxFollowMs. */
    videoSlotMs: number,
    /** The ledger's policy: the `tenancy.pricing` option (what a money budget reserves and settles) and who pays for lost work. */
    readonly ledger: LedgerPolicy = { pricing: undefined, chargeFailedWork: false },
  ) {
    const { counters, windows, durations } = quotaCounters(config, videoSlotMs);
    this.counters = counters;
    this.windows = windows;
    this.durations = durations;
    this.enabled = config?.limits !== undefined;
  }

  /** The `tenancy.pricing` option: what a money budget reserves and settles. */
  get pricing(): Pricing | undefined {
    return this.ledger.pricing;
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
    const kinds = (Object.keys(QUOTA_KINDS) as Kind[]).filter((kind) => countsKind(kind, cost, limits));
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
        throw quotaRefusalOf(kind, limit, this.windows[kind], result, cost[kind]!, this.pricing?.currency);
      }
    }
    const rateLimit = kinds.map((kind, index) => rateLimitFieldsOf(kind, limitOf(limits, kind), this.windows[kind], (settled[index] as PromiseFulfilledResult<RateLimiterRes>).value));
    return this.chargeOf(key, cost, taken, windowEnds, rateLimit);
  }

  /**
   * A charge taken earlier, rebuilt from what its work recorded (`Usage['charged']`: a lapsed
   * Idempotency-Key's lease, work kept for a retry), so that another instance, or a later job, settles
   * it as the request that took it would have: by the same books, within the windows it was taken in.
   */
  recorded(callerId: string, charged: RecordedCharge): QuotaCharge {
    const taken: Kind[] = [];
    const cost: QuotaCost = {};
    const windowEnds: Partial<Record<Kind, number>> = {};
    if (charged.images !== undefined) {
      taken.push('images');
      cost.images = charged.images;
      if (charged.imagesWindowEnd !== undefined) windowEnds.images = charged.imagesWindowEnd;
    }
    if (charged.budget !== undefined) {
      taken.push('budget');
      cost.budget = charged.budget;
      if (charged.budgetWindowEnd !== undefined) windowEnds.budget = charged.budgetWindowEnd;
    }
    return this.chargeOf(callerId, cost, taken, windowEnds, []);
  }

  /** What `taken` of `cost` is, to give back and settle: each kind at most once, never more than was taken. */
  private chargeOf(key: string, cost: QuotaCost, taken: readonly Kind[], windowEnds: Partial<Record<Kind, number>>, rateLimit: readonly RateLimitFields[]): QuotaCharge {
    const giveBack = (which: readonly Kind[], amounts: QuotaCost): Promise<void> => this.reward(key, which, amounts, windowEnds);
    let refunded = new Set<Kind>();
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
    const kinds = (Object.keys(QUOTA_KINDS) as Kind[]).filter((kind) => limits[QUOTA_KINDS[kind].limit] !== undefined);
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
      const charged = countsKind(kind, asked, limits);
      const amount = charged ? (asked[kind] ?? 0) : 0;
      // as the charge sees it after its consume: what was counted in this window, plus this request
      const after = Math.max(0, used?.consumedPoints ?? 0) + amount;
      // a limit the request does not count is never what refuses it
      const passes = !charged || after <= limit;
      // a counter with nothing in its window would start one with this charge
      const counted = { consumedPoints: after, msBeforeNext: used ? used.msBeforeNext : this.durations[kind] * 1000 };
      return {
        kind,
        charged,
        asked: amount,
        passes,
        remaining: Math.max(0, limit - after),
        ...(passes ? {} : { refusal: quotaRefusalOf(kind, limit, this.windows[kind], counted, amount, this.pricing?.currency) }),
      };
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

  /**
   * A settlement that failed (docs/tenancy-and-billing.md "Settlement"): logged, never thrown. What it
   * would have given back stays charged until its window ends: the caller pays too much, never too little.
   */
  unsettled(error: unknown): void {
    this.logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'a charge was not settled');
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
    const kinds = (Object.keys(QUOTA_KINDS) as Kind[]).filter((kind) => limits[QUOTA_KINDS[kind].limit] !== undefined);
    return Promise.all(
      kinds.map(async (kind) => {
        const limit = limitOf(limits, kind);
        const used = await this.counters[kind].get(caller.id);
        const consumed = Math.max(0, used?.consumedPoints ?? 0);
        // a budget is told in money, counted in millionths
        const scale = kind === 'budget' ? MICROS : 1;
        return {
          name: QUOTA_KINDS[kind].name,
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
          this.logger.warn({ caller: key, quota: QUOTA_KINDS[kind].name, error: error instanceof Error ? error.message : String(error) }, 'a quota refund failed');
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
}
