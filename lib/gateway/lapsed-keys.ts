// Idempotency-Key requests whose instance stopped (docs/tenancy-and-billing.md "Retries"): a running
// key holds a lease its request's instance renews (idempotency.ts). When the lease lapses, the first
// instance to find it (the key's watch job on the scheduler, or a retry that meets the key) claims it
// atomically in the store, so exactly one books the lost request: its one usage event through the
// ledger (the upstream call, when it had started, is an attempt of unknown outcome, lost by the
// gateway: ledger/lost-work.ts) and its quota given back as the books say. The key is left
// `interrupted`: the next request with it is told so (409 `idempotency_key_interrupted`) and frees it.
import { ERROR_CODES } from '../errors/error-codes.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { NextPoll } from '../stores/scheduling/job-scheduler.js';
import { type RunningLease, keepsLeases } from '../stores/idempotency/idempotency-store.js';
import { bookFields } from './ledger/reckoning.js';
import { lostWorkUsage } from './ledger/lost-work.js';
import { hasLapsed } from './leases/lease-terms.js';
import type { ResolvedOptions } from './options.js';
import { messageOf } from './tasks/background-work.js';
import type { TaskWatches } from './tasks/task-jobs.js';
import { Pricing } from './ledger/pricing.js';
import type { Quotas } from './tenancy/quotas.js';

// scheduler job ids of key watches; the rest is the scoped key (base64url)
const PREFIX = 'idemkey_';
// a watch looks just after the lease's end
const WATCH_MARGIN_MS = 1_000;

export class LapsedKeys implements TaskWatches {
  constructor(
    private readonly options: ResolvedOptions,
    private readonly quotas: Quotas,
  ) {}

  /** Leases are kept: the store can renew and claim them atomically. */
  get enabled(): boolean {
    const store = this.options.idempotency?.store;
    return store !== undefined && keepsLeases(store);
  }

  owns(id: string): boolean {
    return id.startsWith(PREFIX);
  }

  /** Arms the key's watch for the end of its lease, on whichever instance runs the scheduler's job. */
  arm(key: string, leaseUntil: number): Promise<void> {
    return this.options.scheduler.schedulePoll(PREFIX + key, Math.max(0, leaseUntil - Date.now()) + WATCH_MARGIN_MS, watchKey(key, leaseUntil));
  }

  /** The scheduler's watch of a running key: nothing once it ended; its lease lapsed: claimed and booked; else looks again at the lease's end. */
  async watch(id: string): Promise<NextPoll | undefined> {
    const key = id.slice(PREFIX.length);
    const record = await this.options.idempotency?.store.peek?.(key);
    if (record?.state !== 'running' || !record.lease) return undefined;
    const now = Date.now();
    if (!hasLapsed(record.lease.leaseUntil, now)) return { delayMs: record.lease.leaseUntil - now + WATCH_MARGIN_MS, key: watchKey(key, record.lease.leaseUntil) };
    await this.claim(key, now);
    return undefined;
  }

  /**
   * Claims a key whose lease lapsed by `now` and books its request; true when this call claimed it
   * (the key is then `interrupted`), false when it was not lapsed or another instance claimed it first.
   */
  async claim(key: string, now: number): Promise<boolean> {
    const config = this.options.idempotency;
    if (!config?.store.claimLapsed) return false;
    const claimed = await config.store.claimLapsed(key, now, config.runningTtlMs);
    if (claimed?.state !== 'running' || !claimed.lease) return false;
    await this.book(claimed.lease);
    return true;
  }

  /** The lost request's one usage event and the settlement of its charge (never throws: the key is claimed once). */
  private async book(lease: RunningLease): Promise<void> {
    const { options } = this;
    const { work } = lease;
    const started = work.attempted === true && work.provider !== undefined;
    const usage = lostWorkUsage({
      model: work.model,
      ...(work.provider !== undefined ? { provider: work.provider } : {}),
      imagesAsked: work.imagesAsked ?? 0,
      started,
      ...(work.sizeAsked !== undefined ? { sizeAsked: work.sizeAsked } : {}),
      ...(work.quality !== undefined ? { quality: work.quality } : {}),
    });
    const error = new GatewayError({
      status: 502,
      code: ERROR_CODES.idempotencyKeyInterrupted,
      message: 'The gateway instance running this request stopped before it answered; its outcome is unknown.',
    });
    const books = bookFields(usage, { error }, options.ledger);
    const charged = work.charged;
    try {
      const back = (charged?.images ?? 0) - books.images - (books.undeliveredImages ?? 0);
      if (back > 0) await this.quotas.refundImages(work.caller.id, back, charged?.imagesWindowEnd);
      if (charged?.budget !== undefined) await this.quotas.settleBudget(work.caller.id, charged.budget, Pricing.micros(books.cost) ?? 0, charged.budgetWindowEnd);
    } catch (thrown) {
      options.logger.warn({ caller: work.caller.id, error: messageOf(thrown) }, 'the charge of an interrupted request was not settled');
    }
    if (!options.onUsage) return;
    try {
      options.onUsage({
        caller: work.caller,
        route: work.route,
        model: work.model,
        ...(work.provider !== undefined ? { provider: work.provider } : {}),
        status: error.status,
        latencyMs: Date.now() - work.startedAt,
        errorCode: error.code,
        ...(work.quality !== undefined ? { imageQuality: work.quality } : {}),
        ...(work.route.startsWith('images.') ? { vendorWork: { images: 0, attempts: [] } } : {}),
        ...books,
      });
    } catch (thrown) {
      options.logger.error({ error: messageOf(thrown) }, 'onUsage threw');
    }
  }
}

function watchKey(key: string, leaseUntil: number): string {
  return `${PREFIX}${key}:lease:${leaseUntil}`;
}
