// The books of one gateway request (docs/tenancy-and-billing.md "The books", "Usage events"): what its
// answer says it costs (`x-request-cost`), the settlement of work that ended after its answer, its one
// usage event, and the record of work kept for the client's retry. The inbound side hands over the facts
// of how the request ended (its status, whether the client received the answer, what it failed with);
// every figure of the books is reckoned here, by the ledger's one rule (reckoning.ts), and nowhere in
// lib/express/.
import type { Logger } from '../../options/host-hooks.js';
import type { KeptWorkRecord } from '../../stores/idempotency/idempotency-store.js';
import type { UsageEvent } from '../../types.js';
import type { RequestEnd, Usage } from '../use-case.js';
import { Pricing } from './pricing.js';
import { type LedgerPolicy, bookFields, costOfBooks, keptBookFields, reckon } from './reckoning.js';

export class RequestBooks {
  constructor(
    private readonly policy: LedgerPolicy,
    private readonly onUsage: ((event: UsageEvent) => void) | undefined,
    private readonly logger: Logger,
  ) {}

  /** `<amount> <currency>` of a whole answer of a priced model: what its usage event's `cost` will say. */
  costHeader(usage: Usage): string | undefined {
    const { cost } = bookFields(usage, {}, this.policy);
    return cost ? `${cost.amount} ${cost.currency}` : undefined;
  }

  /** The request is done: late work settles its charge by the books of its end, and its one usage event goes out. */
  close(ended: RequestEnd): void {
    const { usage, end, delivered } = ended;
    // late work settles its charge by the books of its end (with-charge.ts), whether or not an event goes out
    if (usage.settleLater) void usage.settleLater(end);
    if (!ended.reports || !this.onUsage || !ended.caller) return;
    try {
      this.onUsage({
        caller: ended.caller,
        route: ended.route,
        model: delivered ? delivered.model : usage.model,
        provider: delivered ? delivered.provider : usage.provider,
        ...(delivered ? (delivered.upstreamModel !== undefined ? { upstreamModel: delivered.upstreamModel } : {}) : usage.upstreamModel !== undefined ? { upstreamModel: usage.upstreamModel } : {}),
        ...(usage.upstreamImages !== undefined ? { upstreamImages: usage.upstreamImages } : {}),
        status: ended.status,
        latencyMs: ended.latencyMs,
        upstreamRequestId: usage.upstreamRequestId,
        ...(ended.errorCode !== undefined ? { errorCode: ended.errorCode } : {}),
        ...(usage.storedBytes !== undefined ? { storedBytes: usage.storedBytes } : {}),
        ...(usage.imageSizes !== undefined ? { imageSizes: usage.imageSizes } : {}),
        ...(usage.upstreamUsage !== undefined ? { upstreamUsage: usage.upstreamUsage } : {}),
        ...(usage.tokens !== undefined ? { tokens: usage.tokens } : {}),
        ...(usage.imageQuality !== undefined ? { imageQuality: usage.imageQuality } : {}),
        ...(delivered ? keptBookFields(delivered, 'delivered', this.policy) : bookFields(usage, end, this.policy)),
      });
    } catch (error) {
      this.logger.error({ requestId: ended.requestId, error: error instanceof Error ? error.message : String(error) }, 'onUsage threw');
    }
  }

  /**
   * The books of work kept for the client's retry: the images it holds, at which sizes, why it was not
   * received, and what its charge holds for it (its fee included: all of it comes back when the operator
   * absorbs it). The caller and route are the inbound side's.
   */
  keptWork(usage: Usage, lostBy: KeptWorkRecord['lostBy']): Omit<KeptWorkRecord, 'caller' | 'route'> {
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
      lostBy,
      ...(usage.charged ? { windowEnds: { images: usage.charged.imagesWindowEnd, budget: usage.charged.budgetWindowEnd } } : {}),
      ...(money !== undefined ? { budgetMicros: money } : {}),
    };
  }
}
