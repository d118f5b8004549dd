// Small helpers for reading untyped JSON: parse without throwing, test for a plain object, read a
// non-empty string, and what an upstream's answer says it used, for the usage events a host bills
// from (docs/tenancy-and-billing.md "Billing contract"): copied as the upstream gave it, never
// computed from the request. Every layer reads upstream and caller JSON with these.

/**
 * JSON.parse that answers undefined for a body that is not JSON (the caller decides what that means).
 * A UTF-8 byte order mark is not JSON, but some upstreams send one: it is skipped.
 */
export function parseJsonBody(body: Buffer): unknown {
  const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  if (body.length === start) return undefined;
  try {
    return JSON.parse(body.toString('utf8', start)) as unknown;
  } catch {
    return undefined;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The upstream's own usage counters (tokens, generated_images), numbers only, as it gave them. */
export function usageOf(parsed: unknown): { usage?: Record<string, number> } {
  const usage = typeof parsed === 'object' && parsed !== null ? (parsed as { usage?: unknown }).usage : undefined;
  if (typeof usage !== 'object' || usage === null) return {};
  const numbers = Object.entries(usage).filter((entry): entry is [string, number] => typeof entry[1] === 'number' && Number.isFinite(entry[1]));
  return numbers.length > 0 ? { usage: Object.fromEntries(numbers) } : {};
}
