// Build: ESM and CommonJS bundles (esbuild) and one rolled-up declaration file per entry and module
// format (scripts/package-entries.ts). Not tsup, not a rollup plugin: both pull in rollup, whose
// per-platform optional packages this project's registry does not all carry, which leaves a lock
// file that `npm ci` rejects.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import { ENTRIES, rollUpDeclarations } from './package-entries.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');

await rm(dist, { recursive: true, force: true });
await mkdir(dist, { recursive: true });
// one bundle pair per entry: each carries only what its entry reaches, so a host that never imports
// the playground never loads its page, and the gateway's bundle never carries the contract suites
const common: BuildOptions = { bundle: true, platform: 'node', target: 'node20', packages: 'external', sourcemap: true };
for (const [name, entry] of Object.entries(ENTRIES)) {
  await build({ ...common, entryPoints: [path.join(root, entry)], format: 'esm', outfile: path.join(dist, `${name}.js`) });
  await build({ ...common, entryPoints: [path.join(root, entry)], format: 'cjs', outfile: path.join(dist, `${name}.cjs`) });
}

// Node16 resolution reads a .d.cts as CommonJS, matching the .cjs bundle beside it, and a .d.ts as ESM
for (const [name, text] of Object.entries(rollUpDeclarations())) {
  await writeFile(path.join(dist, `${name}.d.ts`), text);
  await writeFile(path.join(dist, `${name}.d.cts`), text);
}
console.log(`built dist/: ${Object.keys(ENTRIES).join(', ')}; each as .js (ESM), .cjs (CommonJS), .d.ts, .d.cts`);
