// POST /v1/images/edits (multipart, contract §4.2; docs/architecture.md compatibility). For image-family models the
// uploaded files become Data URL image items and the form the same multimodal request as
// POST /v1/images/generations, through the same pipeline. Other models get the form re-sent
// upstream with the model renamed and the files (mask included) intact.
import type { RequestHandler } from 'express';
import { GatewayError } from '../../errors/gateway-error.js';
import { asyncHandler } from '../async-handler.js';
import { readImageGenerationRequest } from '../../images/image-request.js';
import { sniffImageType } from '../../images/sniff-image-type.js';
import { UploadedImage } from '../../images/uploaded-image.js';
import { uploadedChunks, uploadedHead } from '../body/upload-chunks.js';
import { requireModel } from './request-fields.js';
import type { GatewayDeps } from '../../gateway/gateway-deps.js';
import { routeStateOf } from '../route-state.js';
import { serveImageRequest } from './serve-image-request.js';

type UploadedFile = Express.Multer.File;
type FormFields = Record<string, unknown>;

interface ImageFile {
  file: UploadedFile;
  mime: string;
}

// the official SDKs send one file as `image` and several as repeated `image[]`; some clients `image[N]`
const IMAGE_FIELD = /^image(?:\[(\d*)\])?$/;

export function imageEditsHandler(deps: GatewayDeps): RequestHandler {
  return asyncHandler(async (req, res) => {
    const fields: FormFields = typeof req.body === 'object' && req.body !== null ? (req.body as FormFields) : {};
    const files = Array.isArray(req.files) ? req.files : [];
    const model = requireModel(fields.model);
    // recorded now, so a rejected edit is metered with its model like any other route
    routeStateOf(res).model = model;
    const { images, mask } = sortFiles(files);
    if (images.length === 0) throw GatewayError.invalidRequest("image is required: upload 1 to 3 image files in 'image' or 'image[]'", 'image');
    if (images.length > deps.options.limits.imagesPerRequest) {
      throw GatewayError.invalidRequest(`Too many images: at most ${deps.options.limits.imagesPerRequest}, got ${images.length}`, 'image');
    }
    const prompt = fields.prompt;
    if (typeof prompt !== 'string' || prompt.trim() === '') {
      throw GatewayError.invalidRequest('prompt is required: the edit instruction must not be empty', 'prompt');
    }

    await serveImageRequest(deps, req, res, {
      route: 'images.edits',
      model,
      readRequest: (family) => {
        // the DashScope multimodal call has no mask input: say so rather than drop it silently
        if (mask) throw GatewayError.invalidRequest(`mask is not supported by model '${model}': describe the region to change in the prompt`, 'mask');
        // uploads stay raw bytes: upload://<i> in the body, UploadedImage in the request
        const uploads = images.map(({ file, mime }) => new UploadedImage(mime, uploadedChunks(file), file.size));
        return readImageGenerationRequest(editAsGenerationBody(model, prompt, images, fields), family, deps.imageRules, uploads);
      },
      requestedImages: fields.n,
      requestedFormat: fields.response_format,
      forward: (api, call, upstream) => api.forwardMultipart(call, '/images/edits', rebuildForm(fields, files, upstream.model ?? model), upstream),
    });
  });
}

/** Image files in the order the caller meant, each checked to really be an image. */
function sortFiles(files: UploadedFile[]): { images: ImageFile[]; mask?: ImageFile } {
  const indexed: Array<{ index: number; file: UploadedFile }> = [];
  const ordered: UploadedFile[] = [];
  let mask: ImageFile | undefined;
  for (const file of files) {
    const match = IMAGE_FIELD.exec(file.fieldname);
    if (file.fieldname === 'mask') {
      if (mask) throw GatewayError.invalidRequest('Only one mask file is allowed', 'mask');
      mask = { file, mime: imageTypeOf(file, 'mask') };
    } else if (!match) {
      throw GatewayError.invalidRequest(`Unexpected file field '${file.fieldname.slice(0, 100)}': send images in 'image' or 'image[]', and an optional 'mask'`, file.fieldname);
    } else if (match[1] !== undefined && match[1] !== '') {
      indexed.push({ index: Number(match[1]), file });
    } else {
      ordered.push(file);
    }
  }
  // `image` and `image[]` keep their arrival order (how the SDKs send them), then `image[N]` by N
  const all = [...ordered, ...indexed.sort((a, b) => a.index - b.index).map((entry) => entry.file)];
  return { images: all.map((file, index) => ({ file, mime: imageTypeOf(file, `image[${index}]`) })), mask };
}

function imageTypeOf(file: UploadedFile, name: string): string {
  if (file.size === 0) throw GatewayError.invalidRequest(`${name} is an empty file`, file.fieldname);
  const mime = sniffImageType(uploadedHead(file, 32));
  if (!mime) throw GatewayError.invalidRequest(`${name} is not an image: upload PNG, JPEG, WebP, GIF, BMP, TIFF or HEIC`, file.fieldname);
  return mime;
}

/** The form as a generations body: files as Data URL items, then the prompt (contract §2.2 rule 3). */
function editAsGenerationBody(model: string, prompt: string, images: ImageFile[], fields: FormFields): Record<string, unknown> {
  const parameters: Record<string, unknown> = {};
  for (const name of ['watermark', 'prompt_extend'] as const) {
    if (fields[name] !== undefined) parameters[name] = formBoolean(fields[name], name);
  }
  if (typeof fields.negative_prompt === 'string') parameters.negative_prompt = fields.negative_prompt;
  if (fields.seed !== undefined) parameters.seed = formInteger(fields.seed, 'seed');
  const body: Record<string, unknown> = {
    model,
    input: {
      messages: [{ role: 'user', content: [...images.map((_image, index) => ({ image: `upload://${index}` })), { text: prompt }] }],
    },
    parameters,
  };
  if (fields.n !== undefined) body.n = formInteger(fields.n, 'n');
  if (fields.size !== undefined) body.size = fields.size;
  if (fields.response_format !== undefined) body.response_format = fields.response_format;
  return body;
}

function formInteger(value: unknown, name: string): number {
  if (typeof value === 'string' && /^\d{1,9}$/.test(value.trim())) return Number(value.trim());
  throw GatewayError.invalidRequest(`${name} must be a whole number`, name);
}

function formBoolean(value: unknown, name: string): boolean {
  if (value === 'true' || value === 'false') return value === 'true';
  throw GatewayError.invalidRequest(`${name} must be 'true' or 'false'`, name);
}

/** The caller's form again, model renamed, files as they came (multer nests `a[b]` names; flatten back). */
function rebuildForm(fields: FormFields, files: UploadedFile[], upstreamModel: string): FormData {
  const form = new FormData();
  const append = (name: string, value: unknown): void => {
    // multer folds a repeated name into an array; re-send it repeated under the same name
    if (Array.isArray(value)) value.forEach((item) => append(name, item));
    else if (typeof value === 'object' && value !== null) for (const [key, inner] of Object.entries(value)) append(`${name}[${key}]`, inner);
    else form.append(name, String(value));
  };
  for (const [name, value] of Object.entries(fields)) append(name, name === 'model' ? upstreamModel : value);
  for (const file of files) {
    form.append(file.fieldname, new Blob([...uploadedChunks(file)], { type: file.mimetype || 'application/octet-stream' }), file.originalname || 'image');
  }
  return form;
}
