// Where the images sit in an OpenAI-compatible answer the gateway passes on (docs/content-safety.md
// "The stages", output images): an image route's `data[]`, the Responses API's `image_generation_call`
// items (`result`, base64), and chat's `choices[].message.images[]` and image content parts. Each is
// found with the list that holds it, so the output check can take a flagged one out of the answer.
import { isObject } from '../../json/json-values.js';
import type { RouteName } from '../../types.js';

/** Where an image's bytes are: in the answer (base64), at a URL, or nowhere readable (withheld). */
export type AnswerImageSource = { base64: string } | { url: string } | undefined;

/** One image of an answer: its source, and the list entry that carries it. */
export interface AnswerImage {
  source: AnswerImageSource;
  list: unknown[];
  entry: unknown;
}

/** The images of an answer; `counted`: the route counts its images in the usage (the image routes). */
export interface AnswerImages {
  images: AnswerImage[];
  counted: boolean;
}

/** The images of a parsed answer of `route`; undefined when the answer has no place for images. */
export function imagesOfAnswer(route: RouteName, parsed: unknown): AnswerImages | undefined {
  if (!isObject(parsed)) return undefined;
  if (route === 'responses') return Array.isArray(parsed.output) ? { images: responseImages(parsed.output), counted: false } : undefined;
  if (route === 'chat.completions') return Array.isArray(parsed.choices) ? { images: chatImages(parsed.choices), counted: false } : undefined;
  if (!Array.isArray(parsed.data)) return undefined;
  // an image route's `data`: every entry is an image, and one with nothing readable is withheld
  const data = parsed.data as unknown[];
  return { images: data.map((entry) => ({ source: dataSource(entry), list: data, entry })), counted: true };
}

/** The answer without the images given: each taken out of its list. */
export function dropImages(images: readonly AnswerImage[]): void {
  const dropped = new Set(images.map((image) => image.entry));
  for (const list of new Set(images.map((image) => image.list))) {
    const kept = list.filter((entry) => !dropped.has(entry));
    list.splice(0, list.length, ...kept);
  }
}

function dataSource(entry: unknown): AnswerImageSource {
  if (!isObject(entry)) return undefined;
  if (typeof entry.b64_json === 'string' && entry.b64_json !== '') return { base64: entry.b64_json };
  return typeof entry.url === 'string' && entry.url !== '' ? { url: entry.url } : undefined;
}

/** `output[]` items of type `image_generation_call` with a `result` (one still in progress has none). */
function responseImages(output: unknown[]): AnswerImage[] {
  return output.flatMap((entry) =>
    isObject(entry) && entry.type === 'image_generation_call' && typeof entry.result === 'string' && entry.result !== '' ? [{ source: sourceOf(entry.result), list: output, entry }] : [],
  );
}

/** Per choice: `message.images[]` (`{ image_url: { url } }`, as OpenRouter-style vendors answer) and `image_url` parts of `message.content`. */
function chatImages(choices: unknown[]): AnswerImage[] {
  const images: AnswerImage[] = [];
  for (const choice of choices) {
    const message = isObject(choice) ? choice.message : undefined;
    if (!isObject(message)) continue;
    const lists = [message.images, message.content].filter((list): list is unknown[] => Array.isArray(list));
    for (const list of lists) {
      for (const entry of list) {
        const media = isObject(entry) ? entry.image_url : undefined;
        const url = isObject(media) ? media.url : media;
        if (typeof url === 'string' && url !== '') images.push({ source: sourceOf(url), list, entry });
      }
    }
  }
  return images;
}

/** A Data URL or bare base64 in the answer, or an http(s) URL to fetch. */
function sourceOf(value: string): AnswerImageSource {
  if (/^data:/i.test(value)) return { base64: value.slice(value.indexOf(',') + 1) };
  return /^https?:\/\//i.test(value) ? { url: value } : { base64: value };
}
