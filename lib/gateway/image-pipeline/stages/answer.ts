// The `answer` stage of the image pipeline (docs/routes.md "Streamed images"): what a streamed request is
// answered. The upstream's stream relayed or translated (its charge settled by the images it delivered,
// when it ends: image-streams.ts), or the whole answer as one completed event per image, its charge
// settled here. A whole request is answered what the stages before left (`work.whole`): its list has
// no answer stage (image-stages.ts).
import { GatewayError } from '../../../errors/gateway-error.js';
import { settleBooks } from '../../tenancy/with-charge.js';
import { type StreamedImage, eventsOf, groupEvents, imagesOfAnswer, imagesOfPassthrough, relayedImages } from '../image-streams.js';
import type { ImageStage, ImageWork } from '../image-work.js';

export const answer: ImageStage = {
  name: 'answer',
  only: 'stream',
  run: (work) => streamAnswer(work),
};

async function streamAnswer(work: ImageWork): Promise<void> {
  const { deps, usage, request } = work;
  const prepared = work.prepared!;
  const { settings } = request.stream!;
  const { charge, cost } = work.charged!;
  const provider = usage.provider ?? 'upstream';
  const policy = { allowPrivate: deps.options.allowPrivateResultUrls };
  const attempted = work.attempted!;
  if (attempted.kind === 'stream') {
    const { rules, stream } = attempted;
    if (rules.kind === 'relay') {
      const clientGone = (): boolean => request.from.cancel.clientGone.aborted;
      work.answer = { kind: 'relay', relayed: relayedImages(usage, stream, { quotas: deps.quotas, charge, cost, clientGone }, prepared.asked) };
      return;
    }
    const group = { rules, stream, provider, call: prepared.call, policy, settings, asked: prepared.asked, quotas: deps.quotas, charge, cost };
    work.answer = { kind: 'events', events: groupEvents(usage, group) };
    return;
  }
  const whole = work.whole!;
  const images: StreamedImage[] = whole.kind === 'passthrough' ? await imagesOfPassthrough(whole.response.body, prepared.call, provider, policy) : imagesOfAnswer(whole.response, whole.images);
  // a stream with no image event would end as if nothing were asked: the caller is told instead
  if (images.length === 0) throw GatewayError.noImage(provider, '', usage.upstreamRequestId);
  await settleBooks(deps.quotas, charge, cost, usage, {});
  work.answer = { kind: 'events', events: eventsOf(images, settings, usage.upstreamUsage) };
}
