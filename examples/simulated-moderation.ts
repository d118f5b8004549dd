// A simulated content moderation service with the wire format of OpenAI's `POST /v1/moderations` (the
// openai SDK's ModerationCreateParams and ModerationCreateResponse), so the example's gateway runs the
// real `openAIModeration` checker with no account (docs/content-safety.md). It checks requests as the API
// does (fields, part types, one image per call, Data URLs and their size) and judges with two rules a
// newcomer can trigger: a short word list for text, and an image that is mostly pure red (a PNG decoded
// here with node:zlib) for images. The specs use it as the fake the adapter's contract is tested against.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { inflateSync } from 'node:zlib';
import { BodyNotJson, BodyTooLarge, type Listening, listenOnLoopback, parseJson, readBody, sendJson } from './simulation-http.js';

/** The categories of the moderation API, in its order. */
export const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

/** The simulated word list: a prompt with one of these words is flagged in that category. */
export const FLAGGED_WORDS: Readonly<Record<string, (typeof MODERATION_CATEGORIES)[number]>> = {
  massacre: 'violence',
  kill: 'violence',
  gore: 'violence/graphic',
  counterfeit: 'illicit',
  hateful: 'hate',
};

/** The largest image the simulator takes, decoded bytes (the adapter's own cap). */
const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const DATA_URL = /^data:(image\/(?:png|jpeg|webp|gif));base64,([A-Za-z0-9+/]*={0,2})$/;

export interface SimulatedModeration extends Listening {
  /** `${origin}/v1`: the baseURL of `openAIModeration`. */
  baseURL: string;
  /** Every accepted request body, in order (the contract spec reads them). */
  received: Array<{ model?: string; input: unknown }>;
  /** Requests refused with a 4xx, with the message they got. */
  refusals: string[];
}

export async function startSimulatedModeration(): Promise<SimulatedModeration> {
  const received: SimulatedModeration['received'] = [];
  const refusals: string[] = [];
  const refuse = (res: ServerResponse, status: number, message: string, param: string | null = null): void => {
    refusals.push(message);
    sendJson(res, status, { error: { message, type: 'invalid_request_error', param, code: null } });
  };
  const listening = await listenOnLoopback((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      if (req.method !== 'POST' || req.url !== '/v1/moderations') return sendJson(res, 404, { error: { message: 'Not found', type: 'invalid_request_error', param: null, code: null } });
      if (!/^Bearer \S+$/.test(req.headers.authorization ?? '')) return refuse(res, 401, 'You did not provide an API key.');
      let body: unknown;
      try {
        body = parseJson(await readBody(req, MAX_BODY_BYTES));
      } catch (error) {
        if (error instanceof BodyTooLarge) return refuse(res, 413, 'The request body is too large.');
        if (error instanceof BodyNotJson) return refuse(res, 400, 'We could not parse the JSON body of your request.');
        throw error;
      }
      const problem = problemOf(body);
      if (problem) return refuse(res, 400, problem.message, problem.param);
      const { model, input } = body as { model?: string; input: unknown };
      received.push({ ...(model !== undefined ? { model } : {}), input });
      sendJson(res, 200, { id: `modr-${received.length}`, model: model ?? 'omni-moderation-latest', results: resultsOf(input) });
    })().catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: 'The simulator failed.', type: 'server_error', param: null, code: null } });
    });
  });
  return { ...listening, baseURL: `${listening.origin}/v1`, received, refusals };
}

/** What the API would refuse in the request, with the field it names. */
function problemOf(body: unknown): { message: string; param: string } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { message: 'The body must be a JSON object.', param: 'input' };
  for (const key of Object.keys(body)) if (key !== 'input' && key !== 'model') return { message: `Unrecognized request argument supplied: ${key}`, param: key };
  const { input, model } = body as Record<string, unknown>;
  if (model !== undefined && typeof model !== 'string') return { message: 'model must be a string.', param: 'model' };
  if (typeof input === 'string') return undefined;
  if (!Array.isArray(input) || input.length === 0) return { message: "'input' is a required property: a string, a list of strings or a list of text and image_url parts.", param: 'input' };
  if (input.every((item) => typeof item === 'string')) return undefined;
  let images = 0;
  for (const [index, part] of input.entries()) {
    const at = `input[${index}]`;
    if (typeof part !== 'object' || part === null) return { message: `${at} must be a text or image_url part.`, param: at };
    const { type } = part as { type?: unknown };
    if (type === 'text') {
      if (typeof (part as { text?: unknown }).text !== 'string') return { message: `${at}.text must be a string.`, param: `${at}.text` };
    } else if (type === 'image_url') {
      images += 1;
      const url = (part as { image_url?: { url?: unknown } }).image_url?.url;
      if (typeof url !== 'string') return { message: `${at}.image_url.url must be a string.`, param: `${at}.image_url.url` };
      const match = DATA_URL.exec(url);
      // the real API fetches public URLs; the simulator has no network, and the gateway sends Data URLs only
      if (!match) return { message: `${at}.image_url.url must be a base64 Data URL of a PNG, JPEG, WebP or GIF image.`, param: `${at}.image_url.url` };
      if ((match[2]!.length * 3) / 4 > MAX_IMAGE_BYTES) return { message: `${at} is larger than ${MAX_IMAGE_BYTES} bytes.`, param: `${at}.image_url.url` };
    } else return { message: `${at}.type must be 'text' or 'image_url'.`, param: `${at}.type` };
  }
  if (images > 1) return { message: 'Only one image can be moderated per request.', param: 'input' };
  return undefined;
}

/** One result per string of a string list, one for a multimodal list as a whole. */
function resultsOf(input: unknown): unknown[] {
  if (typeof input === 'string') return [resultOf([input], [])];
  const list = input as unknown[];
  if (list.every((item) => typeof item === 'string')) return list.map((text) => resultOf([text], []));
  const texts = list.flatMap((part) => ((part as { type: string }).type === 'text' ? [(part as { text: string }).text] : []));
  const images = list.flatMap((part) => ((part as { type: string }).type === 'image_url' ? [(part as { image_url: { url: string } }).image_url.url] : []));
  return [resultOf(texts, images)];
}

function resultOf(texts: readonly string[], images: readonly string[]): Record<string, unknown> {
  const categories = Object.fromEntries(MODERATION_CATEGORIES.map((name) => [name, false])) as Record<string, boolean>;
  const scores = Object.fromEntries(MODERATION_CATEGORIES.map((name) => [name, 0.0001])) as Record<string, number>;
  const applied = Object.fromEntries(MODERATION_CATEGORIES.map((name) => [name, [] as string[]]));
  for (const text of texts) {
    for (const [word, category] of Object.entries(FLAGGED_WORDS)) {
      if (new RegExp(`\\b${word}`, 'i').test(text)) {
        categories[category] = true;
        scores[category] = 0.93;
        applied[category] = ['text'];
      }
    }
  }
  for (const url of images) {
    const share = redShareOf(Buffer.from(url.slice(url.indexOf(',') + 1), 'base64'));
    if (share > 0.5) {
      categories['violence/graphic'] = true;
      scores['violence/graphic'] = Math.max(scores['violence/graphic']!, Math.min(0.99, share));
      applied['violence/graphic'] = [...applied['violence/graphic']!, 'image'];
    }
  }
  return { flagged: Object.values(categories).some(Boolean), categories, category_scores: scores, category_applied_input_types: applied };
}

/** The share of a PNG's pixels that are pure red (R high, G and B low); 0 for anything it cannot read. */
export function redShareOf(png: Buffer): number {
  if (png.length < 33 || png.readUInt32BE(0) !== 0x89504e47) return 0;
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  for (let at = 8; at + 8 <= png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      // 8-bit RGB or RGBA, not interlaced: what the simulated vendors and most tools write
      channels = body[8] === 8 && body[12] === 0 ? (body[9] === 2 ? 3 : body[9] === 6 ? 4 : 0) : 0;
    } else if (type === 'IDAT') data.push(body);
    else if (type === 'IEND') break;
    at += 12 + length;
  }
  if (channels === 0 || width === 0 || height === 0 || width * height > 16_000_000) return 0;
  let pixels: Buffer;
  try {
    pixels = inflateSync(Buffer.concat(data), { maxOutputLength: height * (width * channels + 1) });
  } catch {
    return 0;
  }
  const stride = width * channels;
  let previous: Buffer = Buffer.alloc(stride);
  let red = 0;
  for (let y = 0; y < height; y += 1) {
    const start = y * (stride + 1);
    if (start + stride + 1 > pixels.length) return 0;
    const row = unfilter(pixels[start]!, pixels.subarray(start + 1, start + 1 + stride), previous, channels);
    for (let x = 0; x < stride; x += channels) if (row[x]! >= 200 && row[x + 1]! <= 60 && row[x + 2]! <= 60) red += 1;
    previous = row;
  }
  return red / (width * height);
}

/** One scanline with its PNG filter undone (filters 0 to 4, PNG spec §9). */
function unfilter(filter: number, line: Buffer, previous: Buffer, channels: number): Buffer {
  const row = Buffer.from(line);
  for (let i = 0; i < row.length; i += 1) {
    const left = i >= channels ? row[i - channels]! : 0;
    const up = previous[i]!;
    const corner = i >= channels ? previous[i - channels]! : 0;
    let add = 0;
    if (filter === 1) add = left;
    else if (filter === 2) add = up;
    else if (filter === 3) add = (left + up) >> 1;
    else if (filter === 4) {
      const p = left + up - corner;
      const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - corner)];
      add = pa <= pb && pa <= pc ? left : pb <= pc ? up : corner;
    }
    row[i] = (row[i]! + add) & 0xff;
  }
  return row;
}
