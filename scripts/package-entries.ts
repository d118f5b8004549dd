// The package's entries (package.json "exports") and their rolled-up declarations, shared by the build
// (scripts/build.ts) and the spec that type-checks the declarations as a host sees them
// (spec/e2e/published-types.spec.ts), so both roll up the same files the same way.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateDtsBundle } from 'dts-bundle-generator';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

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
