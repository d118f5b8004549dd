// What an opted-in span may say about a forwarded JSON exchange (docs/observability.md): the text a
// caller sent (never an image: image parts and URLs are skipped) and the model and token usage an
// OpenAI-style answer reports. Read only when a span records.
import { parseJsonBody } from '../json/json-values.js';
import type { AttemptResponse } from './attempt-spans.js';

// the whole text: the attempt span (attempt-spans.ts) cuts every route's prompt to one length

/** The text of `messages` (chat) or `input` (responses): strings and `text` parts, in order. */
export function promptTextOf(body: Record<string, unknown>): string | undefined {
  const texts: string[] = [];
  collectText(body.messages ?? body.input ?? body.prompt, texts, 0);
  const joined = texts.join('\n');
  return joined || undefined;
}

function collectText(value: unknown, into: string[], depth: number): void {
  if (depth > 4) return;
  if (typeof value === 'string') {
    // a Data URL or a URL is an image reference, not prompt text
    if (!/^(data:|https?:\/\/)/i.test(value)) into.push(value);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) collectText(item, into, depth + 1);
    return;
  }
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    if (typeof record.text === 'string') into.push(record.text);
    else if (record.content !== undefined) collectText(record.content, into, depth + 1);
  }
}

/** `model` and `usage` of an OpenAI-style JSON answer (chat: prompt/completion tokens; responses: input/output). */
export function responseOfJson(body: Buffer): AttemptResponse | undefined {
  const parsed = parseJsonBody(body) as { model?: unknown; usage?: Record<string, unknown> } | undefined;
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const usage = typeof parsed.usage === 'object' && parsed.usage !== null ? parsed.usage : {};
  const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
  return {
    ...(typeof parsed.model === 'string' ? { model: parsed.model } : {}),
    ...(count(usage.prompt_tokens ?? usage.input_tokens) !== undefined ? { inputTokens: count(usage.prompt_tokens ?? usage.input_tokens) } : {}),
    ...(count(usage.completion_tokens ?? usage.output_tokens) !== undefined ? { outputTokens: count(usage.completion_tokens ?? usage.output_tokens) } : {}),
  };
}
