// The expiry of work kept for a client's retry (docs/tenancy-and-billing.md "Retries", "The books"): a
// kept answer nobody took in `idempotency.keptAnswerSeconds` is taken out of the store by a job on the
// scheduler (so it runs on whichever instance is alive, on BullMQ), and settled by the ledger: the
// images its client lost by leaving are charged to the tenant (`undeliveredImages`); those a slow vendor
// lost to the gateway's deadline are the operator's (`absorbedImages`, given back to the quotas), unless
// `tenancy.chargeFailedWork`. The retry that takes the answer first settles it instead, by delivering it.
import type { NextPoll } from '../../stores/scheduling/job-scheduler.js';
import type { KeptWorkRecord } from '../../stores/idempotency/idempotency-store.js';
import { keptBookFields } from '../ledger/reckoning.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { messageOf } from '../tasks/background-work.js';
import type { TaskWatches } from '../tasks/task-jobs.js';
import type { Quotas } from '../tenancy/quotas.js';

const JOB_PREFIX = 'kept_';

/** The scheduler's id of the expiry of the kept work stored under `key`. */
export function keptWorkJobId(key: string): string {
  return `${JOB_PREFIX}${key}`;
}

export class KeptWorkExpiry implements TaskWatches {
  constructor(
    private readonly options: ResolvedOptions,
    private readonly quotas: Quotas,
  ) {}

  owns(jobId: string): boolean {
    return jobId.startsWith(JOB_PREFIX);
  }

  /** Takes the kept answer, if a retry has not: it was never delivered, and is settled now. */
  async watch(jobId: string): Promise<NextPoll | undefined> {
    const store = this.options.idempotency?.store;
    if (!store?.take) return undefined;
    const record = await store.take(jobId.slice(JOB_PREFIX.length));
    // delivered to a retry (and billed there), or taken by one already: nothing to settle
    if (record?.state !== 'done' || !record.kept || record.delivered) return undefined;
    await this.expired(record.kept);
    return undefined;
  }

  private async expired(kept: KeptWorkRecord): Promise<void> {
    const { options } = this;
    const fields = keptBookFields(kept, 'expired', options.ledger);
    // the operator absorbs it: what its charge held comes back to the tenant's quotas
    if (fields.absorbedImages) {
      const failed = (error: unknown): void => options.logger.warn({ error: messageOf(error) }, 'kept work refund failed');
      await this.quotas.refundImages(kept.caller.id, fields.absorbedImages, kept.windowEnds?.images).catch(failed);
      if (kept.budgetMicros !== undefined) await this.quotas.settleBudget(kept.caller.id, kept.budgetMicros, 0, kept.windowEnds?.budget).catch(failed);
    }
    if (!options.onUsage) return;
    try {
      options.onUsage({
        caller: kept.caller,
        route: kept.route,
        model: kept.model,
        ...(kept.provider ? { provider: kept.provider } : {}),
        // what the first request's caller was told: it left (499), or the deadline passed (504)
        status: kept.lostBy === 'client_left' ? 499 : 504,
        latencyMs: 0,
        ...(kept.sizes ? { imageSizes: kept.sizes } : {}),
        ...(kept.quality !== undefined ? { imageQuality: kept.quality } : {}),
        ...fields,
      });
    } catch (error) {
      options.logger.error({ error: messageOf(error) }, 'onUsage threw');
    }
  }
}
