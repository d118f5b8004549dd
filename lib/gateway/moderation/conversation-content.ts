// What the moderation policy reads of a chat completions or responses body (docs/content-safety.md
// "Chat and responses that make images"): which of them it covers (a responses body with the
// `image_generation` tool; chat for a model that makes images), and what the caller sent in them: each
// text part, in every role, its own check named by its path in the body, and the caller's images. A
// body the policy does not cover is not read at all, so plain chat costs nothing more.
import { isObject } from '../../json/json-values.js';
import type { ModelCatalogue } from '../../models/model-catalogue.js';
import type { ModelEndpoint } from '../../options/model-catalogue.js';
import type { RouteName } from '../../types.js';
import { type InputImage, imageOf } from './image-moderation.js';
import type { CheckedText } from './moderation.js';

// a catalogue row that answers on one of these is an image model: on chat it answers with images
const IMAGE_ENDPOINTS: readonly ModelEndpoint[] = ['/v1/images/generations', '/v1/images/edits', '/api/v3/images/generations'];

/**
 * Whether a chat or responses request makes images, so the image routes' policy covers it: a responses
 * body whose `tools` hold `{ type: 'image_generation' }`; a chat body whose `modalities` hold `image`, or
 * whose model's catalogue row is an image model (the catalogue marks no output modalities of its own).
 */
export function makesImages(route: RouteName, body: Readonly<Record<string, unknown>>, model: string, models: ModelCatalogue): boolean {
  if (route === 'responses') return Array.isArray(body.tools) && body.tools.some((tool) => isObject(tool) && tool.type === 'image_generation');
  if (route !== 'chat.completions') return false;
  if (Array.isArray(body.modalities) && body.modalities.includes('image')) return true;
  const entry = models.find(model);
  return entry !== undefined && IMAGE_ENDPOINTS.some((endpoint) => entry.endpoints[endpoint] !== undefined);
}

/** What the caller sent in a chat or responses body: each text part (path, role, text) and each image. */
export interface ConversationContent {
  texts: CheckedText[];
  images: InputImage[];
}

/**
 * The text parts and images of a chat body (`messages`, every role) or a responses body
 * (`instructions`, `input`). A part's text is read whatever its `type` says, so a mislabelled part is
 * no way around the check.
 */
export function conversationContent(route: RouteName, body: Readonly<Record<string, unknown>>): ConversationContent {
  const found: ConversationContent = { texts: [], images: [] };
  if (route === 'chat.completions') {
    if (Array.isArray(body.messages)) body.messages.forEach((message, index) => readItem(message, `messages[${index}]`, undefined, found));
    return found;
  }
  readItems(body.instructions, 'instructions', undefined, found);
  // a string input is the user's message (OpenAI's Responses API)
  readItems(body.input, 'input', 'user', found);
  return found;
}

/** A string (one text) or a list of items (messages, or parts given as items). */
function readItems(value: unknown, path: string, role: string | undefined, found: ConversationContent): void {
  if (typeof value === 'string') addText(found, path, role, value);
  else if (Array.isArray(value)) value.forEach((item, index) => readItem(item, `${path}[${index}]`, role, found));
}

/** One message or item: its content, a text or image it holds itself, a tool's output handed back. */
function readItem(item: unknown, path: string, role: string | undefined, found: ConversationContent): void {
  if (typeof item === 'string') return addText(found, path, role, item);
  if (!isObject(item)) return;
  const own = typeof item.role === 'string' ? item.role : role;
  readPart(item, path, own, found);
  // a function call's output handed back to the model is text the caller sent (Responses API)
  if (typeof item.output === 'string') addText(found, `${path}.output`, own, item.output);
  const { content } = item;
  if (typeof content === 'string') addText(found, `${path}.content`, own, content);
  else if (Array.isArray(content))
    content.forEach((part, index) => (typeof part === 'string' ? addText(found, `${path}.content[${index}]`, own, part) : readPart(part, `${path}.content[${index}]`, own, found)));
}

/** A content part: its `text`, and its `image_url` (chat's `{ url }`, the Responses API's string). */
function readPart(part: unknown, path: string, role: string | undefined, found: ConversationContent): void {
  if (!isObject(part)) return;
  if (typeof part.text === 'string') addText(found, `${path}.text`, role, part.text);
  const media = part.image_url;
  const url = isObject(media) ? media.url : media;
  if (typeof url === 'string' && url !== '') found.images.push(imageOf(url));
}

function addText(found: ConversationContent, field: string, role: string | undefined, text: string): void {
  found.texts.push(role === undefined ? { field, text } : { field, role, text });
}
