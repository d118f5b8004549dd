// The expiry of work kept for a client's retry (docs/tenancy-and-billing.md "Retries", "The books"): a
// kept answer nobody took in `idempotency.keptAnswerSeconds` is taken out of the store by a job on the
// scheduler (so it runs on whichever instance is alive, on BullMQ), and ended by the books
// (ledger/work-books.ts) as any paid work is: its charge settled, then its one usage event. The images
// its client lost by leaving are charged to the tenant (`undeliveredImages`); those a slow vendor lost to
// the gateway's deadline are the operator's (`absorbedImages`, given back to the quotas), unless
// `tenancy.chargeFailedWork`. The retry that takes the answer first settles it instead, by delivering it.
import type { NextPoll } from '../../stores/scheduling/job-scheduler.js';
import type { KeptWorkRecord } from '../../stores/idempotency/idempotency-store.js';
import type { ResolvedOptions } from '../resolve-options.js';
import type { TaskWatches } from '../tasks/task-jobs.js';
import type { Quotas } from '../tenancy/quotas.js';
import { expiredKeptSettlement } from '../tenancy/recorded-charges.js';
import { usageFor } from '../use-case.js';

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

  private expired(kept: KeptWorkRecord): Promise<void> {
    const usage = usageFor(kept.model);
    usage.settleLater = expiredKeptSettlement(this.quotas, kept);
    return this.options.books.close({
      caller: kept.caller,
      route: kept.route,
      // what the first request's caller was told: it left (499), or the deadline passed (504)
      status: kept.lostBy === 'client_left' ? 499 : 504,
      latencyMs: 0,
      errorCode: undefined,
      usage,
      end: {},
      kept: { work: kept, how: 'expired' },
      reports: true,
    });
  }
}
