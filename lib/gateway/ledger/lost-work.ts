// Work a gateway instance held when it stopped (docs/tenancy-and-billing.md "The books", "Crashes"):
// another instance finds its lease lapsed and books it. What that instance knows is what the record
// says: who asked, for how many images, and whether the upstream call had started. A call that started
// has an unknown outcome (the vendor may have made, and billed, every image asked): one attempt
// `unknown`; the loss is the gateway's (`lostBy: 'gateway'`), so the ledger absorbs it unless
// `tenancy.chargeFailedWork`. Work that never reached a vendor has no attempt, and costs nothing.
// The same rule books a call cut while it may have been under way (a cancelled image task): there the
// loss is the caller's act.
import type { ProviderName } from '../../types.js';
import { type Usage, attempting, usageFor } from '../use-case.js';
import type { AttemptRecord } from './vendor-work.js';

/** What the record of the lost work says. */
export interface LostWork {
  model: string;
  /** Known once a call was made: work without one never reached a vendor. */
  provider?: ProviderName;
  /** The model the upstream was called with, when it differs from `model`: what the lost work is priced as. */
  upstreamModel?: string;
  /** The images charged at the start: the most the vendor may have made. */
  imagesAsked: number;
  /** The upstream call had started (a task marked running, a request that made its call). */
  started: boolean;
  sizeAsked?: string;
  quality?: string;
  /** The vendor's id of the work, when it was recorded before the instance stopped. */
  id?: string;
}

/** The usage the ledger books lost work from: the last (only) attempt's outcome is `unknown`. */
export function lostWorkUsage(lost: LostWork): Usage {
  const usage = usageFor(lost.model);
  if (lost.provider !== undefined) usage.provider = lost.provider;
  if (lost.upstreamModel !== undefined) usage.upstreamModel = lost.upstreamModel;
  usage.imagesAsked = lost.imagesAsked;
  usage.lostBy = 'gateway';
  if (lost.sizeAsked !== undefined) usage.sizeAsked = lost.sizeAsked;
  if (lost.quality !== undefined) usage.imageQuality = lost.quality;
  if (lost.started && lost.provider !== undefined) {
    const attempt = mayHaveBeenUnderWay(usage, lost.provider, lost.imagesAsked);
    if (lost.id) attempt.id = lost.id;
  }
  return usage;
}

/**
 * The "may have been under way" rule: the work of a call that was ended before its outcome was known.
 * Its last attempt (one is started when none was recorded) is `unknown`, the vendor may have made all
 * `imagesAsked`; an attempt already settled, or work whose made images are known, stays as it is.
 */
export function mayHaveBeenUnderWay(usage: Usage, provider: ProviderName, imagesAsked: number): AttemptRecord {
  if (!usage.attempts?.length) attempting(usage, provider, usage.upstreamModel);
  const last = usage.attempts!.at(-1)!;
  if (!last.outcome && usage.upstreamImages === undefined) {
    last.outcome = 'unknown';
    last.images = imagesAsked;
  }
  return last;
}
