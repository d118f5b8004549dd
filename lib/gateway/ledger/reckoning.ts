// The one ledger rule (docs/tenancy-and-billing.md "The books"): what a request's upstream attempts may
// cost the operator (`vendorWork`), what reached the caller, and why the rest did not, turned into what
// the tenant is charged. Every path reckons here: the usage event of a request, the settlement of its
// quota and budget charge, a stream when it ends, an image task at its terminal state, kept work when
// it is delivered or expires. Nothing else decides who pays.
// - the tenant pays for what it received, and for what was lost by its own act: it left, cut a stream,
//   cancelled running work (`undeliveredImages`);
// - work lost by the vendor or the gateway (a 5xx, an unknown outcome, a failed download or store, a
//   crash) is the operator's cost (`absorbedImages`), unless `tenancy.chargeFailedWork` says otherwise;
// - images beyond what the request asked for are the vendor's excess: never the tenant's;
// - work kept for the client's retry is not charged yet (`keptImages`): the event that delivers it, or
//   its expiry, settles it.
import { ClientGoneError } from '../../errors/client-gone-error.js';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Cost } from '../../options/pricing.js';
import type { Pricing, PricedWork } from './pricing.js';
import type { LostBy, VendorAttempt, VendorWork } from '../../types.js';
import type { Usage } from '../use-case.js';
import { type AttemptRecord, outcomeOfFailure } from './vendor-work.js';
import type { WorkEnd } from './work-end.js';

export type { WorkEnd } from './work-end.js';

// causes that are the tenant's own act: the tenant pays for what they lost
// (an image the moderation policy withheld was made at the tenant's request: docs/content-safety.md)
const TENANT_ACTS: ReadonlySet<LostBy> = new Set(['client_left', 'stream_cut', 'cancelled', 'flagged']);

// failures of the gateway's own, after the vendor's work: the rest are the vendor's
const GATEWAY_FAILURES: ReadonlySet<string> = new Set([ERROR_CODES.storageFailed, ERROR_CODES.resultNotKept, ERROR_CODES.internalError, ERROR_CODES.taskInterrupted]);

/** What the billing policy lets the ledger charge. */
export interface LedgerPolicy {
  /** Work lost by the vendor or the gateway is charged to the tenant too (`tenancy.chargeFailedWork`). */
  chargeFailedWork: boolean;
  pricing: Pricing | undefined;
}

/** The books of one event. */
export interface Reckoning {
  vendorWork: VendorWork;
  /** Images the caller received, charged. */
  images: number;
  /** Images charged that the caller did not receive. */
  undelivered: number;
  /** Images the vendor may bill that the tenant is not charged for. */
  absorbed: number;
  /** Images kept for the client's retry, charged later. */
  kept: number;
  lostBy?: LostBy;
  /** The size of each undelivered image, as asked (else as the vendor reported). */
  undeliveredSizes?: string[];
  /** Images charged against the tenant's quota: received, lost by its act, and kept for it. */
  charged: number;
  /** A billable request: it answered, or charged the tenant something. */
  billable: boolean;
}

/** The vendor work of a request's attempts: earlier ones were refusals (the fallback rule), the last one as it ended. */
function vendorWorkOf(usage: Usage, end: WorkEnd): VendorWork {
  const records = usage.attempts ?? [];
  const attempts: VendorAttempt[] = [];
  records.forEach((record, index) => {
    if (record.calls && record.calls.length > 0) attempts.push(...record.calls);
    else attempts.push(settledAttempt(record, index === records.length - 1 ? usage : undefined, end));
  });
  let images = 0;
  let seconds = 0;
  for (const attempt of attempts) {
    images += attempt.images;
    seconds += attempt.seconds ?? 0;
  }
  return seconds > 0 ? { images, seconds, attempts } : { images, attempts };
}

/** An attempt's outcome: as settled where the call ended, else read from how the request ended. */
function settledAttempt(record: AttemptRecord, last: Usage | undefined, end: WorkEnd): VendorAttempt {
  const base = { provider: record.provider, ...(record.id ? { id: record.id } : {}), ...(record.seconds !== undefined ? { seconds: record.seconds } : {}) };
  if (record.outcome) return { ...base, images: record.outcome === 'refused' || record.outcome === 'failed' ? 0 : (record.images ?? 0), outcome: record.outcome };
  // an earlier attempt that nobody settled was one the fallback rule left: refused before any work
  if (!last) return { ...base, images: 0, outcome: 'refused' };
  const asked = last.imagesAsked ?? 0;
  const id = base.id ?? last.upstreamRequestId;
  const withId = id ? { ...base, id } : base;
  if (last.upstreamImages !== undefined) return { ...withId, images: last.upstreamImages, outcome: 'made' };
  if (end.error === undefined) return { ...withId, images: last.images, outcome: 'made' };
  const outcome = outcomeOfFailure(end.error);
  return { ...withId, images: outcome === 'refused' ? 0 : Math.max(asked, last.images), outcome };
}

/** Why the work that did not reach the caller was lost, when the place it was lost did not say. */
function causeOf(usage: Usage, end: WorkEnd): LostBy {
  if (usage.lostBy) return usage.lostBy;
  if (end.cut) return 'stream_cut';
  if (end.clientLeft || end.error instanceof ClientGoneError) return 'client_left';
  if (GatewayError.is(end.error)) return GATEWAY_FAILURES.has(end.error.code) ? 'gateway' : 'upstream';
  // a failure that is no GatewayError while the client is still there: the gateway's own
  if (end.error !== undefined) return 'gateway';
  // an answer with fewer images than the vendor's calls may have made (a fan-out call that failed)
  return 'upstream';
}

/** The one ledger rule: the books of a request (or a task) that ended as `end`. */
export function reckon(usage: Usage, end: WorkEnd, policy: LedgerPolicy): Reckoning {
  const vendorWork = vendorWorkOf(usage, end);
  const asked = usage.imagesAsked;
  // a whole answer that failed reached nobody; a stream's images went out one by one as they came
  const answered = end.error === undefined || end.streamed ? usage.images : 0;
  if (asked === undefined) {
    // an answer the moderation policy refused (chat, responses: billed by its tokens) was made at the tenant's request
    const billable = (end.error === undefined && !end.clientLeft) || usage.lostBy === 'flagged';
    return { vendorWork, images: answered, undelivered: 0, absorbed: vendorWork.images, kept: 0, charged: answered, billable };
  }
  // what the tenant asked for of what the vendor may have made; the vendor's excess is its own
  const forTenant = Math.min(asked, Math.max(vendorWork.images, answered));
  const excess = vendorWork.images - forTenant;
  const received = end.clientLeft || end.kept ? 0 : Math.min(answered, forTenant);
  const lost = forTenant - received;
  const books: Reckoning = {
    vendorWork,
    images: received,
    undelivered: 0,
    absorbed: Math.max(0, excess),
    kept: 0,
    charged: received,
    billable: received > 0 || (end.error === undefined && !end.clientLeft),
  };
  if (lost <= 0) return books;
  if (end.kept) {
    books.kept = lost;
    books.charged += lost;
    books.lostBy = 'client_left';
    return books;
  }
  const cause = causeOf(usage, end);
  books.lostBy = cause;
  if (TENANT_ACTS.has(cause) || policy.chargeFailedWork) {
    books.undelivered = lost;
    books.charged += lost;
    books.billable = true;
    const size = usage.sizeAsked ?? usage.imageSizes?.[0];
    if (size) books.undeliveredSizes = Array.from({ length: lost }, (_, index) => usage.imageSizes?.[received + index] ?? size);
  } else books.absorbed += lost;
  return books;
}

/** What the tenant is charged in money for the books: the images it pays for, tokens, seconds, the fee once. */
export function costOfBooks(usage: Usage, books: Reckoning, end: WorkEnd, pricing: Pricing | undefined, video?: PricedWork['video']): Cost | undefined {
  if (!pricing) return undefined;
  const paid = books.images + books.undelivered;
  const sizes = paid > 0 ? sizesOf(usage, books) : undefined;
  const work: PricedWork = {
    model: usage.model,
    // a name the table lacks is priced as the upstream model it ran on (docs/tenancy-and-billing.md "Which price a request follows")
    ...(usage.upstreamModel !== undefined ? { upstreamModel: usage.upstreamModel } : {}),
    // a request that charged nothing costs nothing (its price row still says so, with amount 0)
    status: books.billable ? 200 : 500,
    images: paid,
    ...(sizes ? { imageSizes: sizes } : {}),
    ...(usage.upstreamUsage ? { upstreamUsage: usage.upstreamUsage } : {}),
    ...(usage.tokens && books.billable ? { tokens: usage.tokens } : {}),
    ...(usage.imageQuality !== undefined ? { imageQuality: usage.imageQuality } : {}),
    ...(video ? { video } : {}),
  };
  return pricing.costOf(work, { fee: !end.noFee });
}

/**
 * The size of each image the tenant pays for: as the vendor reported the received ones, as asked the
 * lost ones; '' where neither is known (the price row's default).
 */
function sizesOf(usage: Usage, books: Reckoning): string[] {
  const reported = usage.imageSizes ?? [];
  const sizes: string[] = [];
  for (let index = 0; index < books.images; index += 1) sizes.push(reported[index] ?? usage.sizeAsked ?? '');
  for (let index = 0; index < books.undelivered; index += 1) sizes.push(books.undeliveredSizes?.[index] ?? usage.sizeAsked ?? '');
  return sizes;
}

/** The billing fields of a usage event: the books, their cost, the vendor work (docs/tenancy-and-billing.md "The books"). */
export interface BookFields {
  images: number;
  undeliveredImages?: number;
  undeliveredSizes?: string[];
  absorbedImages?: number;
  keptImages?: number;
  flaggedImages?: number;
  lostBy?: LostBy;
  vendorWork?: VendorWork;
  /** On the event that settles kept work: the images that came from an earlier request's vendor work. */
  kept?: { images: number };
  cost?: Cost;
}

/** The usage event's billing fields for work that ended as `end`. */
export function bookFields(usage: Usage, end: WorkEnd, policy: LedgerPolicy, video?: PricedWork['video']): BookFields {
  const books = reckon(usage, end, policy);
  const cost = costOfBooks(usage, books, end, policy.pricing, video);
  return {
    images: books.images,
    ...(books.undelivered > 0 ? { undeliveredImages: books.undelivered } : {}),
    ...(books.undeliveredSizes ? { undeliveredSizes: books.undeliveredSizes } : {}),
    ...(books.absorbed > 0 ? { absorbedImages: books.absorbed } : {}),
    ...(books.kept > 0 ? { keptImages: books.kept } : {}),
    ...(usage.flaggedImages ? { flaggedImages: usage.flaggedImages } : {}),
    ...(books.lostBy && (books.undelivered > 0 || books.absorbed > 0 || books.kept > 0) ? { lostBy: books.lostBy } : {}),
    // on every event of work that was charged or reached a vendor, `{ images: 0, attempts: [] }` when it reached none
    ...((usage.attempts && usage.attempts.length > 0) || usage.imagesAsked !== undefined ? { vendorWork: books.vendorWork } : {}),
    ...(cost ? { cost } : {}),
  };
}

/** Work kept for the client's retry, as its record keeps it (kept-work/kept-work-keeper.ts): what the event that settles it charges. */
import type { KeptWork } from '../use-case.js';
export type { KeptWork };

/** The billing fields of the event that settles kept work: delivered to a retry (charged), or expired (by why it was lost). */
export function keptBookFields(kept: KeptWork, how: 'delivered' | 'expired', policy: LedgerPolicy): BookFields & { kept: { images: number } } {
  const charged = how === 'delivered' || kept.lostBy === 'client_left' || policy.chargeFailedWork;
  const usage: Usage = {
    model: kept.model,
    ...(kept.upstreamModel !== undefined ? { upstreamModel: kept.upstreamModel } : {}),
    images: kept.images,
    imagesAsked: kept.images,
    ...(kept.sizes ? { imageSizes: kept.sizes } : {}),
    ...(kept.quality !== undefined ? { imageQuality: kept.quality } : {}),
  };
  const books: Reckoning = {
    vendorWork: { images: 0, attempts: [] },
    images: how === 'delivered' ? kept.images : 0,
    undelivered: how === 'expired' && charged ? kept.images : 0,
    absorbed: charged ? 0 : kept.images,
    kept: 0,
    charged: charged ? kept.images : 0,
    billable: charged,
    ...(kept.sizes && how === 'expired' && charged ? { undeliveredSizes: kept.sizes } : {}),
  };
  const cost = costOfBooks(usage, books, {}, policy.pricing);
  return {
    images: books.images,
    ...(books.undelivered > 0 ? { undeliveredImages: books.undelivered, lostBy: kept.lostBy } : {}),
    ...(books.undeliveredSizes ? { undeliveredSizes: books.undeliveredSizes } : {}),
    ...(books.absorbed > 0 ? { absorbedImages: books.absorbed, lostBy: kept.lostBy } : {}),
    vendorWork: books.vendorWork,
    kept: { images: kept.images },
    ...(cost ? { cost } : {}),
  };
}
