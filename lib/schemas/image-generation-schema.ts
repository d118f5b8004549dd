// JSON schema of POST /v1/images/generations for image-family models (contract §2.1-2.3), plus the
// OpenAI-client compatibility fields of docs/architecture.md (top-level prompt, size, n). Unknown fields pass
// (vendors add parameters); `message` annotations become the error text for their node. The types
// below are what the schema accepts (object-schema.ts).
import type { ObjectSchema, OtherFields } from './object-schema.js';

/** Exactly one of the two: the schema refuses an item with both, neither or any other field. */
type ImageContentItem = { text: string } | { image: string };

export interface ImageGenerationFields {
  model: string;
  prompt?: string;
  response_format?: 'url' | 'b64_json';
  size?: string;
  n?: number;
  /** contract §2.1: exactly one user message. */
  input?: { messages: [{ role: 'user'; content: ImageContentItem[] } & OtherFields] } & OtherFields;
  parameters?: {
    size?: string;
    n?: number;
    watermark?: boolean;
    prompt_extend?: boolean;
    negative_prompt?: string;
    seed?: number;
  } & OtherFields;
}
export type ImageGenerationBody = ImageGenerationFields & OtherFields;

const contentItem = {
  type: 'object',
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: false,
  properties: {
    text: { type: 'string' },
    image: { type: 'string', minLength: 1, message: "must be a non-empty public http(s) URL or a 'data:image/...;base64,' URL" },
  },
  message: "must have exactly one of 'text' (the prompt) or 'image' (a URL or Data URL)",
} as const;

export const imageGenerationSchema: ObjectSchema<ImageGenerationFields> = {
  $id: 'gateway/image-generation',
  type: 'object',
  required: ['model'],
  properties: {
    model: { type: 'string', minLength: 1 },
    prompt: { type: 'string' },
    response_format: { enum: ['url', 'b64_json'] },
    // OpenAI-client compatibility (docs/architecture.md): copied into parameters when parameters does not set them
    size: { type: 'string', pattern: '^([1-9][0-9]{1,4}[x*][1-9][0-9]{1,4}|[1-9](\\.[0-9])?K)$', message: "must look like '1024x1024', '1024*1024' or a named size such as '2K'" },
    n: { type: 'integer', minimum: 1 },
    input: {
      type: 'object',
      required: ['messages'],
      properties: {
        messages: {
          type: 'array',
          minItems: 1,
          maxItems: 1,
          message: 'must hold exactly one message ({ role: "user", content: [...] })',
          items: {
            type: 'object',
            required: ['role', 'content'],
            properties: {
              role: { const: 'user' },
              content: { type: 'array', minItems: 1, maxItems: 16, items: contentItem },
            },
          },
        },
      },
    },
    parameters: {
      type: 'object',
      properties: {
        // contract §2.3: '*' separates width and height; the 'x' form is answered before the schema runs
        // named sizes (`2K`) are the vendors' own where they have them (Wan 2.7, Seedream): docs/models.md
        size: { type: 'string', pattern: '^([1-9][0-9]{1,4}\\*[1-9][0-9]{1,4}|[1-9](\\.[0-9])?K)$', message: "must be '<width>*<height>', e.g. '1024*1024', or a named size such as '2K'" },
        n: { type: 'integer', minimum: 1 },
        watermark: { type: 'boolean' },
        prompt_extend: { type: 'boolean' },
        negative_prompt: { type: 'string', maxLength: 2000 },
        seed: { type: 'integer', minimum: 0, maximum: 2147483647 },
      },
    },
  },
};
