// Schemas of the routes forwarded to OpenAI-compatible upstreams (contract §4.2). Only what the gateway
// must know is checked; every other field passes through (vendors add fields). Each schema is declared
// with the type of the bodies it accepts (object-schema.ts).
import type { ObjectSchema, OtherFields } from './object-schema.js';

/** What the forwarding route reads of every forwarded body, whichever of the schemas below it passed. */
export type ForwardedBody = { model: string; stream?: boolean } & OtherFields;

export interface ChatCompletionsFields {
  model: string;
  messages: Array<{ role: string; content?: string | unknown[] | null } & OtherFields>;
  stream?: boolean;
}

/** contract §4.2: `model` and `messages` of `{ role, content }`; content is a string or content parts. */
export const chatCompletionsSchema: ObjectSchema<ChatCompletionsFields> = {
  $id: 'gateway/chat-completions',
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1 },
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role'],
        properties: {
          role: { type: 'string', minLength: 1 },
          // null is allowed for assistant messages that carry tool_calls (OpenAI's own rule)
          content: { type: ['string', 'array', 'null'] },
        },
      },
    },
    stream: { type: 'boolean' },
  },
};

export interface ResponsesFields {
  model: string;
  input?: string | unknown[];
  stream?: boolean;
}

/** POST /v1/responses: shapes "not shown" by the spec; `input` is a string or a list of items. */
export const responsesSchema: ObjectSchema<ResponsesFields> = {
  $id: 'gateway/responses',
  type: 'object',
  required: ['model'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: { type: ['string', 'array'] },
    stream: { type: 'boolean' },
  },
};

export interface NativeImageFields {
  model: string;
  prompt: string;
  image?: string | string[];
  response_format?: 'url' | 'b64_json';
  size?: string;
  watermark?: boolean;
  stream?: boolean;
}

/** POST /api/v3/images/generations, Ark Seedream's native body (upstreams §2.7). */
export const nativeImageSchema: ObjectSchema<NativeImageFields> = {
  $id: 'gateway/native-image',
  type: 'object',
  required: ['model', 'prompt'],
  properties: {
    model: { type: 'string', minLength: 1 },
    prompt: { type: 'string', minLength: 1 },
    image: {
      anyOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', minItems: 1, maxItems: 14, items: { type: 'string', minLength: 1 } },
      ],
      message: 'must be an image URL or Data URL, or a list of 1 to 14 of them',
    },
    response_format: { enum: ['url', 'b64_json'] },
    size: { type: 'string', minLength: 1 },
    watermark: { type: 'boolean' },
    stream: { type: 'boolean' },
  },
};

export interface CreateAssetFields {
  GroupId: string;
  URL: string;
  AssetType: 'Image' | 'Video' | 'Audio';
  Name?: string;
  ProjectName?: string;
}
export type CreateAssetBody = CreateAssetFields & OtherFields;

/** POST /api/v3/open/CreateAsset: Volcengine's CreateAsset body (upstreams §2.6). */
export const createAssetSchema: ObjectSchema<CreateAssetFields> = {
  $id: 'gateway/create-asset',
  type: 'object',
  required: ['GroupId', 'URL', 'AssetType'],
  properties: {
    GroupId: { type: 'string', minLength: 1 },
    URL: { type: 'string', minLength: 1, pattern: '^https?://', message: 'must be an http(s) URL of the media file' },
    AssetType: { enum: ['Image', 'Video', 'Audio'] },
    Name: { type: 'string' },
    ProjectName: { type: 'string' },
  },
};
