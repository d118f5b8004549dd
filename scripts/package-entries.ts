// The package's public entries, read from package.json "exports": the API reference (scripts/docs.ts)
// documents each one, and the docs' `ts` blocks are type-checked against each one
// (spec/docs/code-blocks.spec.ts), so a new entry is picked up by both without a second list.
// docs/contributing.md "Documentation"
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface PackageEntry {
  /** What a host imports: `express-image-gateway` or `express-image-gateway/<subpath>`. */
  specifier: string;
  /** The source file of that entry, relative to the repository root. */
  source: string;
}

/** Every entry of package.json "exports", with its source: `.` is lib/index.ts, `./x` is lib/x.ts or lib/x/index.ts. */
export function packageEntries(root = ROOT): PackageEntry[] {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };
  return Object.keys(manifest.exports).map((key) => {
    if (key === '.') return { specifier: manifest.name, source: 'lib/index.ts' };
    const subpath = key.replace(/^\.\//, '');
    const candidates = [`lib/${subpath}.ts`, `lib/${subpath}/index.ts`];
    const source = candidates.find((candidate) => existsSync(path.join(root, candidate)));
    if (!source) throw new Error(`package.json exports '${key}', but neither ${candidates.join(' nor ')} exists`);
    return { specifier: `${manifest.name}/${subpath}`, source };
  });
}
