// The books of paid work (docs/tenancy-and-billing.md "The books", "Settlement", "Usage events"): one
// object per router that ends every unit of paid work that is not a task the same way, whoever saw it
// end: a request when its response closes, an Idempotency-Key request whose instance stopped (lapsed
// keys), and work kept for a client's retry when it expires. Each end hands over its facts (EndedWork);
// the books settle its charge first (awaited; a failure is logged, never thrown), then emit its one
// usage event, in the one shape every such event has (usageEventOf), every figure reckoned by the
// ledger's one rule (reckoning.ts). The books also say what a whole answer costs (`x-request-cost`) and
// what work kept for a retry holds. Nothing in lib/express/ reckons, prices or builds an event. A
// task's terminal event is still made where the task ends (tasks/task-usage-event.ts).
import type { Logger } from '../../options/host-hooks.js';
import type { KeptWorkRecord } from '../../stores/idempotency/idempotency-store.js';
import type { Caller, UsageEvent } from '../../types.js';
import type { EndedWork, Usage } from '../use-case.js';
import { Pricing } from './pricing.js';
import { type BookFields, type LedgerPolicy, bookFields, costOfBooks, keptBookFields, reckon } from './reckoning.js';

/** The books' part of a kept-work record: all of it but for whom and on which route. */
export type KeptWorkBooks = Omit<KeptWorkRecord, 'caller' | 'route'>;

const DONE: Promise<void> = Promise.resolve();

export class WorkBooks {
  constructor(
    /** Who pays for lost work, and the price table (`tenancy.chargeFailedWork`, `tenancy.pricing`). */
    readonly policy: LedgerPolicy,
    private readonly onUsage: ((event: UsageEvent) => void) | undefined,
    private readonly logger: Logger,
  ) {}

  /** `<amount> <currency>` of a whole answer of a priced model: what its usage event's `cost` will say. */
  costHeader(usage: Usage): string | undefined {
    const { cost } = bookFields(usage, {}, this.policy);
    return cost ? `${cost.amount} ${cost.currency}` : undefined;
  }

  /**
   * The work ended: its charge settled by the books of its end (`usage.settleLater`, when its end
   * settles it), then its one usage event. Resolves once both are done; never rejects. Work with
   * nothing to settle reports at once, with no promise of its own (the hot path's requests).
   */
  close(ended: EndedWork): Promise<void> {
    const settlement = ended.usage.settleLater;
    if (!settlement) {
      this.report(ended);
      return DONE;
    }
    return this.settle(ended, settlement).then(() => this.report(ended));
  }

  /**
   * The books of work kept for the client's retry: the images it holds, at which sizes, why it was not
   * received, and what its charge holds for it (its fee included: all of it comes back when the operator
   * absorbs it). `late`: the caller was answered at the deadline while the work went on (the vendor was
   * slow), else the client left.
   */
  keptWork(usage: Usage, late: boolean): KeptWorkBooks {
    const books = reckon(usage, { kept: true }, this.policy);
    const images = books.kept;
    const sizes = Array.from({ length: images }, (_, index) => usage.imageSizes?.[index] ?? usage.sizeAsked ?? '');
    const money = usage.charged?.budget !== undefined ? Pricing.micros(costOfBooks(usage, { ...books, undelivered: images, kept: 0, billable: true }, {}, this.policy.pricing)) : undefined;
    return {
      model: usage.model,
      ...(usage.provider ? { provider: usage.provider } : {}),
      ...(usage.upstreamModel !== undefined ? { upstreamModel: usage.upstreamModel } : {}),
      images,
      ...(sizes.every((size) => size !== '') && sizes.length > 0 ? { sizes } : {}),
      ...(usage.imageQuality !== undefined ? { quality: usage.imageQuality } : {}),
      lostBy: late ? 'upstream' : 'client_left',
      ...(usage.charged ? { windowEnds: { images: usage.charged.imagesWindowEnd, budget: usage.charged.budgetWindowEnd } } : {}),
      ...(money !== undefined ? { budgetMicros: money } : {}),
    };
  }

  /**
   * One way for every settlement (docs/tenancy-and-billing.md "Settlement"): awaited before the event,
   * so a host that reads the quotas on an event sees them settled; a counter that cannot be reached is
   * logged, the charge stays until its window ends, and the event goes out all the same.
   */
  private async settle(ended: EndedWork, settlement: NonNullable<Usage['settleLater']>): Promise<void> {
    try {
      await settlement(ended.end);
    } catch (error) {
      this.logger.warn({ requestId: ended.requestId, caller: ended.caller?.id, error: messageOf(error) }, 'a charge was not settled');
    }
  }

  /** The work's one usage event, when it reports one. An error `onUsage` throws is logged. */
  private report(ended: EndedWork): void {
    const { caller } = ended;
    if (!ended.reports || !this.onUsage || !caller) return;
    try {
      this.onUsage(usageEventOf(caller, ended, this.fieldsOf(ended)));
    } catch (error) {
      this.logger.error({ requestId: ended.requestId, error: messageOf(error) }, 'onUsage threw');
    }
  }

  /** The event's billing fields: of the kept work it settles, else of the work's own end. */
  private fieldsOf(ended: EndedWork): BookFields {
    return ended.kept ? keptBookFields(ended.kept.work, ended.kept.how, this.policy) : bookFields(ended.usage, ended.end, this.policy);
  }
}

/** What the event says the work was: the request's usage, or, for kept work it settles, the kept record. */
function describedBy(ended: EndedWork): Pick<Usage, 'model' | 'provider' | 'upstreamModel' | 'imageSizes' | 'imageQuality'> {
  const kept = ended.kept?.work;
  if (!kept) return ended.usage;
  // the images came from an earlier request's vendor work: the event names what that work made
  return {
    model: kept.model,
    ...(kept.provider !== undefined ? { provider: kept.provider } : {}),
    ...(kept.upstreamModel !== undefined ? { upstreamModel: kept.upstreamModel } : {}),
    ...(kept.sizes !== undefined ? { imageSizes: kept.sizes } : {}),
    ...(kept.quality !== undefined ? { imageQuality: kept.quality } : {}),
  };
}

/** The usage event of `ended` for `caller`, with `fields` its books. */
function usageEventOf(caller: Caller, ended: EndedWork, fields: BookFields): UsageEvent {
  const { usage } = ended;
  const work = describedBy(ended);
  return {
    caller,
    route: ended.route,
    model: work.model,
    ...(work.provider !== undefined ? { provider: work.provider } : {}),
    ...(work.upstreamModel !== undefined ? { upstreamModel: work.upstreamModel } : {}),
    ...(usage.upstreamImages !== undefined ? { upstreamImages: usage.upstreamImages } : {}),
    status: ended.status,
    latencyMs: ended.latencyMs,
    ...(usage.upstreamRequestId !== undefined ? { upstreamRequestId: usage.upstreamRequestId } : {}),
    ...(ended.errorCode !== undefined ? { errorCode: ended.errorCode } : {}),
    ...(usage.storedBytes !== undefined ? { storedBytes: usage.storedBytes } : {}),
    ...(usage.provenance !== undefined ? { provenance: usage.provenance } : {}),
    ...(work.imageSizes !== undefined ? { imageSizes: work.imageSizes } : {}),
    ...(usage.upstreamUsage !== undefined ? { upstreamUsage: usage.upstreamUsage } : {}),
    ...(usage.tokens !== undefined ? { tokens: usage.tokens } : {}),
    ...(work.imageQuality !== undefined ? { imageQuality: work.imageQuality } : {}),
    ...fields,
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
