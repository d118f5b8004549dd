// Build: ESM and CommonJS bundles (esbuild) with type declarations for both (tsc). Not tsup: tsup
// pulls in rollup, whose per-platform optional packages this project's registry does not all carry,
// which leaves a lock file that `npm ci` rejects.
import { execFileSync } from 'node:child_process';
import { cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');

await rm(dist, { recursive: true, force: true });
// one bundle per package.json "exports" entry: `.` (the gateway) and `./testing` (contract suites for hosts,
// kept apart so the gateway's bundle never carries them)
const ENTRIES = { index: 'lib/index.ts', testing: 'lib/testing/index.ts' } as const;
const common: BuildOptions = { bundle: true, platform: 'node', target: 'node20', packages: 'external', sourcemap: true };
for (const [name, entry] of Object.entries(ENTRIES)) {
  await build({ ...common, entryPoints: [path.join(root, entry)], format: 'esm', outfile: path.join(dist, `${name}.js`) });
  await build({ ...common, entryPoints: [path.join(root, entry)], format: 'cjs', outfile: path.join(dist, `${name}.cjs`) });
}

// declarations: one tree for `import` (.d.ts), one for `require` (.d.cts importing .cjs), as Node16
// resolution wants each module format to see declarations of its own kind
const esmTypes = path.join(dist, 'types');
execFileSync(path.join(root, 'node_modules/.bin/tsc'), ['-p', path.join(root, 'tsconfig.build.json'), '--outDir', esmTypes], { stdio: 'inherit' });
const cjsTypes = path.join(dist, 'types-cjs');
await cp(esmTypes, cjsTypes, { recursive: true });
for (const entry of await readdir(cjsTypes, { recursive: true })) {
  if (!entry.endsWith('.d.ts')) continue;
  const file = path.join(cjsTypes, entry);
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace(/(from\s+['"]\.{1,2}\/[^'"]+)\.js(['"])/g, '$1.cjs$2').replace(/(import\(['"]\.{1,2}\/[^'"]+)\.js(['"]\))/g, '$1.cjs$2'));
  await rename(file, file.replace(/\.d\.ts$/, '.d.cts'));
}
await mkdir(dist, { recursive: true });
for (const [name, entry] of Object.entries(ENTRIES)) {
  const declared = entry.replace(/^lib\//, '').replace(/\.ts$/, '');
  await writeFile(path.join(dist, `${name}.d.ts`), `export * from './types/${declared}.js';\n`);
  await writeFile(path.join(dist, `${name}.d.cts`), `export * from './types-cjs/${declared}.cjs';\n`);
}
console.log('built dist/: index and testing, each as .js (ESM), .cjs (CommonJS), .d.ts, .d.cts');
