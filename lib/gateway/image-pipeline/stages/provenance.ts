// The `provenance` stage of the image pipeline (docs/provenance.md): with the `provenance` option, each
// image the caller is answered is signed with the operator's manifest when the caller's options sign,
// then read and reported (`data[i].provenance`, the usage event's `provenance`). It runs after the
// output check and before `store`, so what is stored, streamed, kept and answered is the same signed
// file; without signing the bytes go on exactly as the vendor sent them. The caller's options are read
// by the `call` stage (a streamed request whose images are reported is answered from the whole answer).
import { GatewayError } from '../../../errors/gateway-error.js';
import type { ImageGenerationResponse } from '../../../images/image-generation-response.js';
import { isObject, parseJsonBody } from '../../../json/json-values.js';
import type { ProvenanceReport } from '../../../options/provenance-options.js';
import { applyProvenance } from '../../../provenance/provenance-policy.js';
import { downloadImages } from '../../results/result-images.js';
import { imagesOfPassthrough } from '../image-streams.js';
import type { ImageStage, ImageWork } from '../image-work.js';

export const provenance: ImageStage = {
  name: 'provenance',
  only: 'provenance',
  run(work, next) {
    const { whole, request } = work;
    if (!whole || !request.provenance) return next();
    return (whole.kind === 'passthrough' ? onPassthrough(work, whole.response.body) : onImageAnswer(work, whole.response, whole.images)).then(next);
  },
};

async function onImageAnswer(work: ImageWork, response: ImageGenerationResponse, images: Array<Buffer | undefined> | undefined): Promise<void> {
  const { deps, usage, request } = work;
  const prepared = work.prepared!;
  const provider = usage.provider ?? 'upstream';
  const known = response.data.map((item, index) => images?.[index] ?? work.bytes?.[index] ?? (item.b64_json !== '' ? Buffer.from(item.b64_json, 'base64') : undefined));
  // a `url` answer's images are downloaded once to be read (within limits.downloadBytes and downloadTimeoutMs)
  const missing: ImageGenerationResponse = { ...response, data: response.data.map((item, index) => (known[index] ? { ...item, url: '', b64_json: 'known' } : item)) };
  const downloaded = known.some((bytes) => bytes === undefined) ? await downloadImages(missing, prepared.call, provider, { allowPrivate: deps.options.allowPrivateResultUrls }) : [];
  const bytes = known.map((item, index) => item ?? downloaded[index]);
  if (bytes.some((item) => item === undefined)) throw GatewayError.noImage(provider, ': an image has neither url nor b64_json', usage.upstreamRequestId);
  // without result storage a `url` image reaches the caller from the vendor's own URL: not signed (docs/provenance.md)
  const stored = deps.options.storage !== undefined;
  const delivered = response.data.map((item, index) => stored || images?.[index] !== undefined || item.b64_json !== '');
  const result = await applyProvenance(request.provenance!, bytes as Buffer[], madeBy(work), deps.options.logger, delivered);
  const kept = work.bytes ?? (work.bytes = []);
  response.data.forEach((item, index) => {
    const out = result.bytes[index]!;
    if (result.signed[index]) {
      if (images) images[index] = out;
      else if (item.b64_json !== '') item.b64_json = out.toString('base64');
    }
    // `store` writes the bytes known, so a stored `url` serves the signed file
    kept[index] = out;
    item.provenance = result.reports[index]!;
  });
  usage.provenance = result.reports.map((report) => report.c2pa);
}

async function onPassthrough(work: ImageWork, body: Buffer): Promise<void> {
  const { deps, usage, request } = work;
  const whole = work.whole as Extract<ImageWork['whole'], { kind: 'passthrough' }>;
  if (whole.response.status < 200 || whole.response.status >= 300) return;
  const provider = usage.provider ?? 'upstream';
  const images = await imagesOfPassthrough(body, work.prepared!.call, provider, { allowPrivate: deps.options.allowPrivateResultUrls });
  const parsed = parseJsonBody(body) as Record<string, unknown> & { data: unknown[] };
  // without result storage a `url` image reaches the caller from the vendor's own URL: not signed
  const stored = deps.options.storage !== undefined;
  const delivered = parsed.data.map((item) => stored || (isObject(item) && typeof item.b64_json === 'string' && item.b64_json !== ''));
  const result = await applyProvenance(
    request.provenance!,
    images.map((image) => image.bytes),
    madeBy(work),
    deps.options.logger,
    delivered,
  );
  const data = parsed.data.map((item, index) => {
    const entry: Record<string, unknown> = isObject(item) ? { ...item } : {};
    // with storage, the bytes read here (signed or as they came) go on as b64_json, which `store` writes:
    // a `url` image is downloaded once, and answered by the stored URL alone as the upstream answered it
    const byUrl = typeof entry.b64_json !== 'string' || entry.b64_json === '';
    if (result.signed[index] || (stored && byUrl)) {
      if (byUrl) work.urlsAsBytes = true;
      entry.b64_json = result.bytes[index]!.toString('base64');
    }
    entry.provenance = result.reports[index] satisfies ProvenanceReport | undefined;
    return entry;
  });
  work.whole = { kind: 'passthrough', response: { ...whole.response, contentType: 'application/json', body: Buffer.from(JSON.stringify({ ...parsed, data })) } };
  usage.provenance = result.reports.map((report) => report.c2pa);
}

function madeBy(work: ImageWork): Parameters<typeof applyProvenance>[2] {
  const { request, usage } = work;
  const form = request.input.kind === 'form' ? request.input.form : undefined;
  // an edit's uploaded images are its ingredients (docs/provenance.md "Signing"); URLs are not fetched for it
  const inputs = (form?.images ?? []).map((image, index) => ({ bytes: Buffer.concat(image.file.chunks as Buffer[]), title: image.file.name || `image[${index}]` }));
  return { caller: request.from.caller, provider: usage.provider, model: usage.upstreamModel ?? request.model, inputs };
}
