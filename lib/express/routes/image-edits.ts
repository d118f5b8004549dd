// POST /v1/images/edits (multipart, contract §4.2; docs/architecture.md compatibility). For image-family models the
// uploaded files become Data URL image items and the form the same multimodal request as
// POST /v1/images/generations, through the same pipeline. Other models get the form re-sent
// upstream with the model renamed and the files (mask included) intact. A JSON body (OpenAI's JSON
// edit shape, `images: [{ image_url }]`) is read into the same form (gateway/json-edit.ts) and
// takes the same path (docs/routes.md "Edits as JSON").
import type { RequestHandler } from 'express';
import { GatewayError } from '../../errors/gateway-error.js';
import { routeHandler } from '../route-handler.js';
import { sniffImageType } from '../../images/sniff-image-type.js';
import { uploadedChunks, uploadedHead } from '../body/upload-chunks.js';
import { requireModel } from '../body/json-body.js';
import type { GatewayDeps } from '../../gateway/gateway-deps.js';
import type { EditForm, FormFile, FormImage } from '../../gateway/image-pipeline/image-edit-form.js';
import { type ImageTasksRoute, serveImageRequest } from './serve-image-request.js';
import { readImageStreamAsk } from '../../images/image-stream-ask.js';
import { readJsonEdit } from '../../gateway/image-pipeline/json-edit.js';
import type { RequestContext } from '../request-context.js';

type UploadedFile = Express.Multer.File;
type FormFields = Record<string, unknown>;

// the official SDKs send one file as `image` and several as repeated `image[]`; some clients `image[N]`
const IMAGE_FIELD = /^image(?:\[(\d*)\])?$/;

export function imageEditsHandler(deps: GatewayDeps, tasks?: ImageTasksRoute): RequestHandler {
  return routeHandler('imageEdits', async (context) => {
    const { req } = context;
    const fields: FormFields = typeof req.body === 'object' && req.body !== null ? (req.body as FormFields) : {};
    // recorded now, so a rejected edit is metered with its model like any other route
    const model = (context.usage.model = requireModel(fields.model));
    // multer sets `files` on a multipart body; the JSON parser never does
    if (!Array.isArray(req.files)) return serveJsonEdit(deps, context, model, fields, tasks);
    const uploads = req.files;
    const { images, mask } = sortFiles(uploads);
    if (images.length === 0) throw GatewayError.invalidRequest("image is required: upload 1 to 3 image files in 'image' or 'image[]'", 'image');
    if (images.length > deps.options.limits.imagesPerRequest) {
      throw GatewayError.invalidRequest(`Too many images: at most ${deps.options.limits.imagesPerRequest}, got ${images.length}`, 'image');
    }
    const prompt = fields.prompt;
    if (typeof prompt !== 'string' || prompt.trim() === '') {
      throw GatewayError.invalidRequest('prompt is required: the edit instruction must not be empty', 'prompt');
    }
    // a form field is text: stream=true, partial_images=2 (docs/routes.md "Streamed images")
    const stream = readImageStreamAsk(fields, 'form');
    // the use case gets the form as plain data (docs/architecture.md "One use-case shape")
    const files = new Map(uploads.map((file) => [file, formFileOf(file)]));
    const plain = (image: ImageFile): FormImage => ({ file: files.get(image.file)!, mime: image.mime });
    const form: EditForm = { fields, prompt, images: images.map(plain), ...(mask ? { mask: plain(mask) } : {}), files: [...files.values()] };
    await serveImageRequest(deps, context, { route: 'images.edits', model, input: { kind: 'form', form } }, { stream, tasks });
  });
}

/** The JSON edit: its images decoded or fetched into the form a multipart edit makes, then the same path. */
async function serveJsonEdit(deps: GatewayDeps, context: RequestContext, model: string, body: FormFields, tasks: ImageTasksRoute | undefined): Promise<void> {
  const prompt = body.prompt;
  if (typeof prompt !== 'string' || prompt.trim() === '') {
    throw GatewayError.invalidRequest('prompt is required: the edit instruction must not be empty', 'prompt');
  }
  // read before any image is fetched: a stream that cannot be honoured costs no download
  const stream = readImageStreamAsk(body, 'json');
  const form = await readJsonEdit(deps, body, prompt, context.clientGone);
  await serveImageRequest(deps, context, { route: 'images.edits', model, input: { kind: 'form', form } }, { stream, tasks });
}

/** A parsed upload as plain data: its bytes stay the chunks they arrived in. */
function formFileOf(file: UploadedFile): FormFile {
  return { field: file.fieldname, name: file.originalname, type: file.mimetype, size: file.size, chunks: uploadedChunks(file) };
}

interface ImageFile {
  file: UploadedFile;
  mime: string;
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
