// The `results` stage of the image pipeline (docs/tenancy-and-billing.md): the upstream's answer made
// whole and capped. The upstream never decides how many images the caller gets and is charged for: at
// most what the request allowed, the rest dropped and reported in the usage event; the bytes of a
// b64_json answer are downloaded here (results/result-images.ts). An opened stream passes on untouched.
import { GENERIC_IMAGE_FAMILY } from '../../../images/model-families.js';
import { downloadImages } from '../../results/result-images.js';
import { allowedImages } from '../images-allowed.js';
import type { ImageStage } from '../image-work.js';
import { capPassthroughImages } from '../passthrough-image-cap.js';

export const results: ImageStage = {
  name: 'results',
  run(work, next) {
    const { usage, deps } = work;
    const prepared = work.prepared!;
    const answer = work.attempted!;
    if (answer.kind === 'stream') return next();
    if (answer.kind === 'passthrough') {
      usage.upstreamRequestId = answer.response.requestId;
      const capped = capPassthroughImages(answer.response.body, usage.provider ?? 'upstream', prepared.asked, answer.response.requestId);
      usage.upstreamImages = capped.upstreamImages;
      usage.images = capped.images;
      if (capped.sizes) usage.imageSizes = capped.sizes;
      if (capped.usage) usage.upstreamUsage = capped.usage;
      work.whole = { kind: 'passthrough', response: { ...answer.response, body: capped.body } };
      return next();
    }
    const { response } = answer;
    usage.upstreamRequestId = response.extra.request_id || undefined;
    usage.upstreamImages = response.data.length;
    // (a family's: the images charged, an image group the request set itself included)
    response.data = response.data.slice(0, prepared.family ? prepared.asked : allowedImages(answer.request, GENERIC_IMAGE_FAMILY));
    usage.images = response.data.length;
    if (response.sizes) usage.imageSizes = response.sizes.slice(0, usage.images);
    if (response.usage) usage.upstreamUsage = response.usage;
    // for the usage event only: the caller's answer is the contract §2.4 body
    delete response.sizes;
    delete response.usage;
    if (answer.request.responseFormat !== 'b64_json') {
      work.whole = { kind: 'image', response };
      return next();
    }
    return downloadImages(response, prepared.call, answer.provider, { allowPrivate: deps.options.allowPrivateResultUrls }).then((images) => {
      work.bytes = images;
      work.whole = { kind: 'image', response, images };
      return next();
    });
  },
};
