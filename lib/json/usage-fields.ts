// What an upstream's answer says it used, for the usage events a host bills from
// (docs/tenancy-and-billing.md "Billing contract"): copied as the upstream gave it, never computed from the request.

/** The upstream's own usage counters (tokens, generated_images), numbers only, as it gave them. */
export function usageOf(parsed: unknown): { usage?: Record<string, number> } {
  const usage = typeof parsed === 'object' && parsed !== null ? (parsed as { usage?: unknown }).usage : undefined;
  if (typeof usage !== 'object' || usage === null) return {};
  const numbers = Object.entries(usage).filter((entry): entry is [string, number] => typeof entry[1] === 'number' && Number.isFinite(entry[1]));
  return numbers.length > 0 ? { usage: Object.fromEntries(numbers) } : {};
}
