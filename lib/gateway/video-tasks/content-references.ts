// What a video task's content items point at (contract §2.7, upstreams §2.2, §2.6): every string of an
// item, at any depth, is looked at, because Ark reads fields the item's `type` does not name and adds
// new ones (video_url, audio_url came with Seedance 2.0). Pure functions; the task service decides
// what is allowed (ownership lives in the store).

/**
 * An asset id as Volcengine's CreateAsset makes it (upstreams §2.6, `Result.Id`, e.g.
 * `asset-20260320120147-pqwhc`): `asset-`, the creation time as 14 digits (yyyymmddhhmmss), `-`, and
 * five lower-case letters or digits. Ark's ids use no other characters, so an id in any other shape
 * (other case, spaces, `?`, `#`, `/`, `%`-escapes, extra segments) is not a library asset of the
 * operator: it can only be a variant that Ark, a proxy or a URL parser might fold into someone else's id.
 */
export const WELL_FORMED_ASSET_ID = /^asset-[0-9]{14}-[a-z0-9]{5}$/;

/** The one spelling of a reference Ark documents: `asset://<id>`, nothing around it. */
const ASSET_SCHEME = 'asset://';

export interface ContentString {
  /** Where the string sits, as in error params: `content[1].image_url.url`. */
  path: string;
  /** The property name holding it (for an array element, its array's property name). */
  key: string;
  value: string;
  /** Puts another string in its place (the normalized form of a URL that is forwarded). */
  replace(value: string): void;
}

/** Every string inside `value`, depth first in key order. Iterative: deep JSON cannot overflow the stack. */
export function stringsOf(value: unknown, path: string): ContentString[] {
  const found: ContentString[] = [];
  type Slot = { value: unknown; path: string; key: string; parent?: Record<string | number, unknown>; slot?: string | number };
  const pending: Slot[] = [{ value, path, key: '' }];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if (typeof next.value === 'string') {
      const { parent, slot } = next;
      found.push({
        path: next.path,
        key: next.key,
        value: next.value,
        replace: (replacement) => {
          if (parent && slot !== undefined) parent[slot] = replacement;
        },
      });
    } else if (Array.isArray(next.value)) {
      const array = next.value as unknown[];
      for (let i = array.length - 1; i >= 0; i -= 1) pending.push({ value: array[i], path: `${next.path}[${i}]`, key: next.key, parent: array as unknown as Record<number, unknown>, slot: i });
    } else if (next.value !== null && typeof next.value === 'object') {
      const record = next.value as Record<string, unknown>;
      const entries = Object.entries(record);
      for (let i = entries.length - 1; i >= 0; i -= 1) {
        const [key, child] = entries[i]!;
        pending.push({ value: child, path: `${next.path}${propertyPath(key)}`, key, parent: record, slot: key });
      }
    }
  }
  return found;
}

/**
 * The asset references a string makes. A string that starts with `asset:` (in any case, after any
 * spaces) is one reference, taken whole, so ` asset://x` or `asset://x?y` is never read as `x`.
 * Inside other strings, every `asset:` followed by `/`, `\` or `%` starts a reference that runs to
 * the next white space; a bare `asset:` in prose ("this asset: a red car") is not one.
 */
export function assetReferencesIn(value: string): string[] {
  if (isAssetReference(value)) return [value];
  return value.match(/asset:[/\\%]\S*/gi) ?? [];
}

/** A string that is, as a whole, meant as an asset reference: it starts with `asset:` in any case, after any spaces. */
export function isAssetReference(value: string): boolean {
  return /^\s*asset:/i.test(value);
}

/** The id of an exact `asset://<id>` reference, or undefined for any other spelling. */
export function assetIdOf(reference: string): string | undefined {
  return reference.startsWith(ASSET_SCHEME) && reference.length > ASSET_SCHEME.length ? reference.slice(ASSET_SCHEME.length) : undefined;
}

/**
 * Strings the upstream may fetch: every `url` field (Ark's media field name), and any other string
 * that is itself a URL with an authority (`scheme://…`) or a Data URL.
 */
export function isMediaUrlCandidate(entry: Pick<ContentString, 'key' | 'value'>): boolean {
  return entry.key === 'url' || /^\s*(?:[a-z][a-z0-9+.-]*:\/\/|data:)/i.test(entry.value);
}

function propertyPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}…` : key)}]`;
}
