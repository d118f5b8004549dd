// The `charge` stage of the image pipeline (docs/tenancy-and-billing.md "The books"): the caller's quotas
// and money budget charged once the request is validated, resolved and its input checked, before any
// upstream call, with the stages after it run inside the charge (tenancy/with-charge.ts), so any failure
// of theirs is settled by the ledger's books. A whole answer settles when it is made; a stream settles by
// the images it delivered when it ends; a dry run stops here, answered the quote of this charge.
import { type PriceAsk, upstreamModelsOf } from '../../ledger/pricing.js';
import { withCharge } from '../../tenancy/with-charge.js';
import type { ImageRequest, Prepared } from '../image-preparation.js';
import { qualityOf, sizeAsked } from '../image-input.js';
import type { ImageStage } from '../image-work.js';
import type { Usage } from '../../use-case.js';

export const charge: ImageStage = {
  name: 'charge',
  run(work, next) {
    const { deps, usage, request } = work;
    const prepared = work.prepared!;
    const cost = { requests: 1, images: prepared.asked, priced: pricedAsk(request, prepared, usage) };
    return withCharge(
      deps.quotas,
      request.from.caller,
      cost,
      usage,
      (taken) => {
        work.charged = { charge: taken, cost };
        // a whole request's answer is what the stages left; a stream's, what the answer stage made of it
        return next().then(() => work.answer ?? work.whole!);
      },
      request.stream ? 'by-work' : 'at-answer',
      request.from.dryRun,
    ).then((outcome) => {
      work.outcome = outcome;
    });
  },
};

/**
 * What a money budget reserves for the call: the most its images may cost (docs/tenancy-and-billing.md
 * "Cost in money"); the quality asked is recorded in the usage, for the price of what was made.
 */
export function pricedAsk(request: ImageRequest, prepared: Prepared, usage: Usage): PriceAsk {
  const quality = qualityOf(request.input);
  if (quality !== undefined) usage.imageQuality = quality;
  const size = prepared.request?.parameters.size ?? sizeAsked(request.input);
  if (typeof size === 'string' && /^\d+[x*]\d+$/.test(size)) usage.sizeAsked = size.replace('*', 'x');
  return {
    model: request.model,
    upstreamModels: upstreamModelsOf(prepared.upstreams),
    images: prepared.asked,
    ...(typeof size === 'string' ? { size } : {}),
    ...(quality !== undefined ? { quality } : {}),
  };
}
