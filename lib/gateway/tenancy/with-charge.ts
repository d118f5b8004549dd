// The one place a request is charged against the caller's quotas, and settled by the ledger's books
// (docs/architecture.md "One use-case shape"; docs/tenancy-and-billing.md "The books"). Charged after
// validation and the resolver, before any upstream call; a refused charge is the quota's 429 and nothing
// runs. When the work ends, the quotas keep exactly what the ledger charges the tenant (ledger/reckoning.ts):
// the images it received, lost by its own act, or kept for its retry; the rest comes back, and a money
// budget is settled to what those cost. A video task's seconds and budget are settled at its terminal
// state (video-tasks/video-task-usage.ts); a stream settles when it ends (settleBooks).
// A dry run (`Prefer: dry-run`, docs/tenancy-and-billing.md "Quotes before work") reaches this same
// point, validated and resolved, and is answered the quote of this charge instead: the limits peeked,
// not consumed, and the work never run.
import { rejectionOf } from '../../errors/rejection-of.js';
import type { Caller } from '../../types.js';
import { Pricing } from '../ledger/pricing.js';
import { type Outcome, type Usage, settle } from '../use-case.js';
import type { QuotaCost } from './quota-cost.js';
import { type QuotaCharge, Quotas } from './quotas.js';
import { type WorkEnd, costOfBooks, reckon } from '../ledger/reckoning.js';
import { type Quoted, quoteOf } from './quote.js';

/** When a successful outcome is settled: at once, or by the work itself later (a stream, when it ends). */
export type Settlement = 'at-answer' | 'by-work';

/**
 * Charges `cost`, runs `work` with the charge, and settles: the outcome carries `usage`, with the
 * RateLimit fields of the charge. Work whose answer is still producing when it returns (a stream)
 * says `by-work` and settles itself with `settleBooks`; a failure is always settled here.
 * `dryRun` (the request asked for a quote): nothing is charged and `work` does not run; the answer
 * is the quote, or the charge's own 429.
 */
export function withCharge<A>(quotas: Quotas, caller: Caller, cost: QuotaCost, usage: Usage, work: (charge: QuotaCharge) => Promise<A>, settlement?: Settlement): Promise<Outcome<A>>;
export function withCharge<A>(
  quotas: Quotas,
  caller: Caller,
  cost: QuotaCost,
  usage: Usage,
  work: (charge: QuotaCharge) => Promise<A>,
  settlement: Settlement,
  dryRun: boolean | undefined,
): Promise<Outcome<A | Quoted>>;
export function withCharge<A>(
  quotas: Quotas,
  caller: Caller,
  cost: QuotaCost,
  usage: Usage,
  work: (charge: QuotaCharge) => Promise<A>,
  settlement: Settlement = 'at-answer',
  dryRun?: boolean,
): Promise<Outcome<A | Quoted>> {
  if (dryRun) return settle(usage, () => quotas.peek(caller, cost).then((limits): Quoted => ({ kind: 'quote', quote: quoteOf(usage.model, cost, quotas.pricing, limits) })));
  // no quotas configured: nothing to take or give back, and no promise spent on it per request
  if (!quotas.enabled) return settle(usage, () => work(Quotas.nothing));
  return settle(usage, () => quotas.charge(caller, cost)).then((charged) => {
    if (!charged.ok) return { ok: false, error: charged.error, usage };
    const charge = charged.answer;
    usage.rateLimit = charge.rateLimit;
    if (charge.taken.length > 0) usage.charged = chargedOf(charge, cost);
    return settle(usage, () => work(charge)).then((outcome) => {
      if (outcome.ok && settlement === 'by-work') return outcome;
      // answered at its deadline while the work went on: whether its answer is kept for the retry is
      // known when the request ends, where its usage event settles it by the same books
      if (usage.lateAnswer) {
        usage.settleLater = (end) => settleBooks(quotas, charge, cost, usage, end);
        return outcome;
      }
      return settleBooks(quotas, charge, cost, usage, outcome.ok ? {} : { error: outcome.error }).then(() => outcome);
    });
  });
}

/**
 * Settles a charge to the ledger's books of the work as it ended. Never rejects (docs/tenancy-and-billing.md
 * "Settlement"): a counter that cannot be reached, or anything else that fails, is logged, and the
 * charge stays until its window ends; the caller awaits it before the work's usage event all the same.
 * A failed video create gives back its seconds and its task slot (no task runs); a video task that
 * runs keeps them until its terminal state.
 */
export function settleBooks(quotas: Quotas, charge: QuotaCharge, cost: QuotaCost, usage: Usage, end: WorkEnd): Promise<void> {
  // nothing charged (quotas off, or no limit for these kinds): nothing to give back
  if (charge.taken.length === 0) return Promise.resolve();
  return rejectionOf(() => settleCharge(quotas, charge, cost, usage, end)).catch((error: unknown) => quotas.unsettled(error));
}

/** settleBooks' arithmetic: the images not charged back, the budget to what the charged work cost. */
function settleCharge(quotas: Quotas, charge: QuotaCharge, cost: QuotaCost, usage: Usage, end: WorkEnd): Promise<void> {
  const books = reckon(usage, end, quotas.ledger);
  const asked = cost.images ?? 0;
  const refunds: Array<'images' | 'videoSeconds' | 'videoTasks'> = [];
  if (asked > books.charged) refunds.push('images');
  if (end.error !== undefined) refunds.push('videoSeconds', 'videoTasks');
  const given = refunds.length > 0 ? charge.refund(refunds, { images: asked - books.charged }) : Promise.resolve();
  if (charge.budget === undefined || !quotas.pricing) return given;
  // a video task that runs is settled when it ends; a failed create made nothing
  if (cost.videoTasks !== undefined && end.error === undefined) return given;
  // the money of what the tenant is charged; images kept for its retry stay reserved until they are settled
  const held = { ...books, undelivered: books.undelivered + books.kept, billable: books.billable || books.kept > 0 };
  const actual = Pricing.micros(costOfBooks(usage, held, end, quotas.pricing)) ?? 0;
  return given.then(() => charge.settleBudget(actual));
}

/** What a charge took, and when its windows end: what another instance gives back when this one stops (a lapsed Idempotency-Key lease). */
function chargedOf(charge: QuotaCharge, cost: QuotaCost): NonNullable<Usage['charged']> {
  return {
    ...(charge.taken.includes('images') && cost.images !== undefined ? { images: cost.images, ...(charge.windowEnds.images !== undefined ? { imagesWindowEnd: charge.windowEnds.images } : {}) } : {}),
    ...(charge.budget !== undefined ? { budget: charge.budget, ...(charge.windowEnds.budget !== undefined ? { budgetWindowEnd: charge.windowEnds.budget } : {}) } : {}),
  };
}
