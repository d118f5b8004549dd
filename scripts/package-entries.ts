// The package's entries (package.json "exports"), shared by everything that must agree on them: the
// build and its rolled-up declarations (scripts/build.ts), the spec that type-checks those declarations
// as a host sees them (spec/e2e/published-types.spec.ts), the API reference (scripts/docs.ts) and the
// type check of the docs' `ts` blocks (spec/docs/code-blocks.spec.ts). docs/contributing.md "Documentation"
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateDtsBundle } from 'dts-bundle-generator';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const root = ROOT;

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

/**
 * Each entry's output name (dist/<name>.js, .cjs, .d.ts, .d.cts) and its source: `.` (mount, configure,
 * extend), `./redis`, `./storage`, `./playground`, and `./testing` (contract suites for hosts).
 */
export const ENTRIES = {
  index: 'lib/index.ts',
  redis: 'lib/redis.ts',
  storage: 'lib/storage.ts',
  playground: 'lib/playground.ts',
  testing: 'lib/testing/index.ts',
} as const;

export type EntryName = keyof typeof ENTRIES;

/**
 * One declaration text per entry: its public types in one file that imports only other packages
 * (express, node), never a file of this one, so the internal modules do not ship. dts-bundle-generator:
 * plain JavaScript over the project's own TypeScript (nothing downloaded, no rollup). With
 * exportReferencedTypes false an entry exports exactly what its lib/ file re-exports; a type that an
 * exported one needs is declared beside it, unexported. The same text serves `import` (.d.ts) and
 * `require` (.d.cts): it has no relative import whose extension would differ.
 */
export function rollUpDeclarations(): Record<EntryName, string> {
  const names = Object.keys(ENTRIES) as EntryName[];
  const texts = generateDtsBundle(
    names.map((name) => ({ filePath: path.join(root, ENTRIES[name]), output: { exportReferencedTypes: false, noBanner: true } })),
    { preferredConfigPath: path.join(root, 'tsconfig.build.json') },
  );
  const declarations = {} as Record<EntryName, string>;
  names.forEach((name, index) => {
    const text = texts[index]!;
    // an import whose name a global also has (express's Request, and Node's fetch Request) is renamed
    // `Request$1` on its import line, but its uses keep `Request`, which then names the global: refuse
    const renamed = /^import .*\b(\w+) as \1\$\d+\b/m.exec(text);
    if (renamed) {
      throw new Error(
        `${name}.d.ts: the import of ${renamed[1]} collides with a global of that name. Fix: import it under a name of its own in lib/ (import type { Request as ExpressRequest } from 'express').`,
      );
    }
    declarations[name] = text;
  });
  return declarations;
}
