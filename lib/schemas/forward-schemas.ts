// Schemas of the routes forwarded to OpenAI-compatible upstreams (contract §4.2). Only what the gateway
// must know is checked; every other field passes through (vendors add fields).

/** contract §4.2: `model` and `messages` of `{ role, content }`; content is a string or content parts. */
export const chatCompletionsSchema = {
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
} as const;

/** POST /v1/responses: shapes "not shown" by the spec; `input` is a string or a list of items. */
export const responsesSchema = {
  $id: 'gateway/responses',
  type: 'object',
  required: ['model'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: { type: ['string', 'array'] },
    stream: { type: 'boolean' },
  },
} as const;

/** POST /api/v3/images/generations, Ark Seedream's native body (upstreams §2.7). */
export const nativeImageSchema = {
  $id: 'gateway/native-image',
  type: 'object',
  required: ['model', 'prompt'],
  properties: {
    model: { type: 'string', minLength: 1 },
    prompt: { type: 'string', minLength: 1 },
    image: {
      anyOf: [{ type: 'string', minLength: 1 }, { type: 'array', minItems: 1, maxItems: 14, items: { type: 'string', minLength: 1 } }],
      message: 'must be an image URL or Data URL, or a list of 1 to 14 of them',
    },
    response_format: { enum: ['url', 'b64_json'] },
    size: { type: 'string', minLength: 1 },
    watermark: { type: 'boolean' },
    stream: { type: 'boolean' },
  },
} as const;

/** POST /api/v3/open/CreateAsset: Volcengine's CreateAsset body (upstreams §2.6). */
export const createAssetSchema = {
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
} as const;
