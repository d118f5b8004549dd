// Where media URLs sit in the bodies the gateway forwards as they are (chat completions, responses,
// Ark native images, OpenAI-compatible image generations): each one gets the one URL check
// (public-url.ts) before the upstream is called, and the body sent on carries the normalized URL.
// Data URLs stay allowed where the upstreams take them; the upstream bounds their size.
import { isObject } from '../json/json-values.js';
import { DataUrlText } from '../json/data-url-text.js';
import type { RouteName } from '../types.js';
import { type PublicUrlPolicy, requirePublicUrl } from './public-url.js';

type Json = Record<string, unknown>;

/**
 * The body with every media URL checked and normalized; a refused URL is a 400 naming its field.
 * Objects are copied only along a path whose URL changed, so a large body is not cloned.
 */
export function checkForwardedUrls(route: RouteName, body: Json, policy: PublicUrlPolicy): Json {
  // a DataUrlText is a Data URL the JSON parser kept as bytes (json-body.ts); JSON.stringify restores it
  const check = (value: unknown, path: string): unknown => ((typeof value === 'string' && /^data:/i.test(value)) || value instanceof DataUrlText ? value : requirePublicUrl(value, path, policy));
  switch (route) {
    case 'chat.completions':
      return withField(body, 'messages', (messages) =>
        mapArray(messages, (message, index) => withField(message, 'content', (content) => mapArray(content, (part, at) => contentPart(part, `messages[${index}].content[${at}]`, check)))),
      );
    case 'responses':
      return withField(body, 'input', (input) =>
        mapArray(input, (item, index) => {
          const path = `input[${index}]`;
          // an input item may be a message with content parts, or a part itself
          const own = contentPart(item, path, check);
          return withField(own, 'content', (content) => mapArray(content, (part, at) => contentPart(part, `${path}.content[${at}]`, check)));
        }),
      );
    case 'images.native':
    case 'images.generations':
      // Ark Seedream (and OpenAI-compatible image APIs modelled on it): `image` is a URL or a list
      return withField(body, 'image', (image) => (Array.isArray(image) ? mapArray(image, (url, index) => check(url, `image[${index}]`)) : check(image, 'image')));
    default:
      return body;
  }
}

type Check = (value: unknown, path: string) => unknown;

// Keys of a content part whose value the upstream fetches: chat `image_url` / `video_url`
// (`{ url }` or a bare URL), responses `input_image.image_url` and `input_file.file_url`. Checked
// whatever the part's `type` says, so a mislabelled part is no way around the check.
const URL_KEYS = ['image_url', 'video_url', 'file_url'] as const;

function contentPart(part: unknown, path: string, check: Check): unknown {
  if (!isObject(part)) return part;
  let next = part;
  for (const key of URL_KEYS) {
    const media = next[key];
    if (media === undefined || media === null) continue;
    next = isObject(media) ? withField(next, key, () => withField(media, 'url', (url) => check(url, `${path}.${key}.url`))) : withField(next, key, (url) => check(url, `${path}.${key}`));
  }
  return next;
}

/** `object[key]` replaced by `change(object[key])`: the same object when nothing changed. */
function withField<T>(object: T, key: string, change: (value: unknown) => unknown): T {
  if (!isObject(object) || !Object.hasOwn(object, key) || object[key] === undefined) return object;
  const value = object[key];
  const next = change(value);
  return next === value ? object : { ...object, [key]: next };
}

/** The array with each item mapped: the same array when no item changed (and any non-array as is). */
function mapArray(value: unknown, change: (item: unknown, index: number) => unknown): unknown {
  if (!Array.isArray(value)) return value;
  let copy: unknown[] | undefined;
  value.forEach((item: unknown, index) => {
    const next = change(item, index);
    if (next !== item) (copy ??= [...(value as readonly unknown[])])[index] = next;
  });
  return copy ?? value;
}
