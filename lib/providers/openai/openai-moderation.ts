// The built-in content checker (docs/content-safety.md "The built-in checker"): OpenAI's moderation API,
// `POST {baseURL}/moderations` with `omni-moderation-latest` and its multimodal input (the openai SDK's
// ModerationCreateParams: `{ type: 'text', text }` and `{ type: 'image_url', image_url: { url } }` parts).
// Images go as Data URLs of the bytes the gateway holds, never as a caller's URL: the checker sees what
// the vendor would. One image per call (the omni model judges one image with its text), several calls in
// parallel for several images, merged: flagged if any is. Plain `fetch`, so nothing more is loaded.
import type { ModerationCheckInput, ModerationChecker, ModerationVerdict } from '../../options/moderation-options.js';

export interface OpenAIModerationOptions {
  /** Required. The moderation API key. */
  apiKey: string;
  /** Default `https://api.openai.com/v1`; any API with the same `/moderations` route (a local simulator) fits. */
  baseURL?: string;
  /** Default `omni-moderation-latest`. */
  model?: string;
}

/** The largest image sent, bytes: past it the call is not made (the checker fails; the policy's `onCheckerError` decides). */
const MODERATION_IMAGE_BYTES = 20 * 1024 * 1024;
/** The image types the omni moderation model reads. */
const READ_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

type InputPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

interface ModerationResult {
  flagged?: unknown;
  categories?: unknown;
  category_scores?: unknown;
}

/**
 * @example moderation: { check: openAIModeration({ apiKey: process.env.OPENAI_API_KEY! }), outputImages: true }
 */
export function openAIModeration(options: OpenAIModerationOptions): ModerationChecker {
  const baseURL = (options.baseURL ?? 'https://api.openai.com/v1').replace(/\/+$/, '');
  const model = options.model ?? 'omni-moderation-latest';
  const ask = async (input: InputPart[], signal: AbortSignal): Promise<ModerationVerdict> => {
    const response = await fetch(`${baseURL}/moderations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, input }),
      signal,
    });
    if (!response.ok) {
      // the body may quote the request; the status says enough
      await response.body?.cancel();
      throw new Error(`the moderation API answered HTTP ${response.status}`);
    }
    return verdictOf((await response.json()) as { results?: unknown });
  };
  const check: ModerationChecker = async (input: ModerationCheckInput) => {
    const text: InputPart[] = input.text ? [{ type: 'text', text: input.text }] : [];
    const images = input.images ?? [];
    if (images.length === 0) return ask(text, input.signal);
    const verdicts = await Promise.all(
      images.map((image) => {
        if (!READ_TYPES.has(image.mediaType)) throw new Error(`the moderation API does not read ${image.mediaType} images`);
        if (image.bytes.length > MODERATION_IMAGE_BYTES) throw new Error(`an image of ${image.bytes.length} bytes is larger than the ${MODERATION_IMAGE_BYTES} bytes the checker sends`);
        return ask([...text, { type: 'image_url', image_url: { url: image.dataUrl() } }], input.signal);
      }),
    );
    return mergeVerdicts(verdicts);
  };
  check.checkerName = 'openai-moderation';
  return check;
}

/** The API's answer as a verdict: every result's flagged categories and the highest score of each. */
export function verdictOf(body: { results?: unknown }): ModerationVerdict {
  if (!Array.isArray(body.results)) throw new Error('the moderation API answered without results');
  return mergeVerdicts(
    (body.results as ModerationResult[]).map((result) => {
      const categories =
        typeof result.categories === 'object' && result.categories !== null
          ? Object.entries(result.categories)
              .filter(([, flagged]) => flagged === true)
              .map(([name]) => name)
          : [];
      const scores: Record<string, number> = {};
      if (typeof result.category_scores === 'object' && result.category_scores !== null) {
        for (const [name, score] of Object.entries(result.category_scores)) if (typeof score === 'number') scores[name] = score;
      }
      return { flagged: result.flagged === true, categories, scores };
    }),
  );
}

function mergeVerdicts(verdicts: readonly ModerationVerdict[]): ModerationVerdict {
  const categories = new Set<string>();
  const scores: Record<string, number> = {};
  for (const verdict of verdicts) {
    for (const name of verdict.categories) categories.add(name);
    for (const [name, score] of Object.entries(verdict.scores ?? {})) scores[name] = Math.max(scores[name] ?? 0, score);
  }
  return { flagged: verdicts.some((verdict) => verdict.flagged), categories: [...categories], scores };
}
