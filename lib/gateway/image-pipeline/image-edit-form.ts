// The multipart edit form of POST /v1/images/edits as plain data, and its two translations
// (docs/architecture.md "Compatibility with plain OpenAI clients"): for an image-family model, the same
// multimodal request as POST /v1/images/generations (files as upload items, then the prompt); for
// any other model, the form again for an OpenAI-compatible upstream, model renamed, files intact.
import { GatewayError } from '../../errors/gateway-error.js';
import { type FormBody, type FormPart, encodeFormBody } from '../../transport/form-body.js';

/** One uploaded file, as the inbound side read it: its bytes stay the chunks they arrived in. */
export interface FormFile {
  field: string;
  name: string;
  /** The Content-Type the client sent for the part. */
  type: string;
  size: number;
  chunks: readonly Buffer[];
}

/** An uploaded file checked to be an image: its type sniffed from its first bytes. */
export interface FormImage {
  file: FormFile;
  mime: string;
}

/** The edit form: fields as the parser produced them, the images in the caller's order, the mask, every file as sent. */
export interface EditForm {
  fields: Record<string, unknown>;
  prompt: string;
  images: readonly FormImage[];
  mask?: FormImage;
  files: readonly FormFile[];
}

/** The form as a generations body: files as `upload://<i>` items, then the prompt (contract §2.2 rule 3). */
export function editAsGenerationBody(model: string, form: EditForm): Record<string, unknown> {
  const { fields } = form;
  const parameters: Record<string, unknown> = {};
  for (const name of ['watermark', 'prompt_extend'] as const) {
    if (fields[name] !== undefined) parameters[name] = formBoolean(fields[name], name);
  }
  if (typeof fields.negative_prompt === 'string') parameters.negative_prompt = fields.negative_prompt;
  if (fields.seed !== undefined) parameters.seed = formInteger(fields.seed, 'seed');
  const body: Record<string, unknown> = {
    model,
    input: {
      messages: [{ role: 'user', content: [...form.images.map((_image, index) => ({ image: `upload://${index}` })), { text: form.prompt }] }],
    },
    parameters,
  };
  if (fields.n !== undefined) body.n = formInteger(fields.n, 'n');
  if (fields.size !== undefined) body.size = fields.size;
  // an edit that names no format is answered with the bytes, as OpenAI's image models answer every
  // edit and as the clients read it (the openai SDK's `b64_json`; the Vercel AI SDK's edit reads it
  // without asking): never an empty `b64_json` (docs/routes.md "The answer")
  body.response_format = fields.response_format ?? 'b64_json';
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

/**
 * The caller's form again, model renamed, files as they came (the parser nests `a[b]` names; flatten
 * back): encoded from the files' chunks as they are sent, never copied into one Blob per file.
 */
export function rebuildForm(form: EditForm, upstreamModel: string): FormBody {
  const parts: FormPart[] = [];
  const append = (name: string, value: unknown): void => {
    // a repeated name arrives folded into an array; re-send it repeated under the same name
    if (Array.isArray(value)) value.forEach((item) => append(name, item));
    else if (typeof value === 'object' && value !== null) for (const [key, inner] of Object.entries(value)) append(`${name}[${key}]`, inner);
    else parts.push({ name, value: String(value) });
  };
  for (const [name, value] of Object.entries(form.fields)) append(name, name === 'model' ? upstreamModel : value);
  for (const file of form.files) parts.push({ name: file.field, fileName: file.name || 'image', type: file.type || 'application/octet-stream', chunks: file.chunks });
  return encodeFormBody(parts);
}
