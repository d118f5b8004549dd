// Small helpers for reading untyped JSON: parse without throwing, test for a plain object, read a
// non-empty string. Every layer reads upstream and caller JSON with these.

/** JSON.parse that answers undefined for a body that is not JSON (the caller decides what that means). */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
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
