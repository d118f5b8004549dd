// The suite, in the two forms docs/contributing.md "The commands" describes.
//
// The developer's form (`npm test`): every spec but the few that build, pack or install the package or
// drive a browser, once, on the Node.js line running this script with Express 5, in parallel workers.
// The CI form (`CI=true npm test`, what .ci/run runs): the developer's form with those specs added, then
// the whole router again on Express 4, then the package's install and published declarations on each
// supported Node.js line (package.json `engines`) with each Express major, so every line and both majors
// are proved, and what needs to run only once (the build, TypeDoc, the browser) runs once.
//
// A Node line other than the one running this script comes from the npm registry's official Node.js
// binary package (`node-<platform>-<arch>`, the binary itself, nothing downloaded beyond the registry),
// installed once into node_modules/.cache and pinned here so every run tests the same binaries.
// Arguments after `--` go to vitest in every leg.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Which specs a leg runs (vitest.config.ts reads GATEWAY_SPECS): see SPEC_SETS there. */
type SpecSet = 'core' | 'once' | 'lines';

interface Leg {
  /** A pinned version, or 'current' for the Node.js running this script. */
  readonly node: string;
  readonly express: 4 | 5;
  readonly specs: readonly SpecSet[];
}

// the newest release of each line when pinned; raise them together with `engines`
const NODE_24 = '24.21.0';
const NODE_22 = '22.23.3';
const NODE_20 = '20.20.2';

const DEVELOPER: readonly Leg[] = [{ node: 'current', express: 5, specs: ['core'] }];
const CI: readonly Leg[] = [
  { node: 'current', express: 5, specs: ['core', 'once', 'lines'] },
  { node: NODE_22, express: 4, specs: ['core', 'lines'] },
  { node: NODE_24, express: 5, specs: ['lines'] },
  { node: NODE_24, express: 4, specs: ['lines'] },
  { node: NODE_22, express: 5, specs: ['lines'] },
  { node: NODE_20, express: 4, specs: ['lines'] },
];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = path.join(root, 'node_modules', '.cache', 'test-nodes');
const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');
const major = (version: string): string => version.split('.')[0] ?? version;

/** The node binary of a leg: this process's own when the line matches, else the registry's package. */
function nodeFor(version: string): string | undefined {
  if (version === 'current' || major(process.versions.node) === major(version)) return process.execPath;
  const prefix = path.join(cache, version);
  const binary = path.join(prefix, 'node_modules', `node-${process.platform}-${process.arch}`, 'bin', 'node');
  if (existsSync(binary)) return binary;
  mkdirSync(prefix, { recursive: true });
  console.log(`Installing Node.js ${version} from the npm registry (node-${process.platform}-${process.arch}) into ${path.relative(root, prefix)}`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const args = ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', prefix, `node-${process.platform}-${process.arch}@${version}`];
  const installed = spawnSync(npm, args, { stdio: 'inherit' });
  return installed.status === 0 && existsSync(binary) ? binary : undefined;
}

function runLeg(leg: Leg, node: string, args: readonly string[]): Promise<number> {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}`, GATEWAY_SPECS: leg.specs.join(',') };
  if (leg.express === 4) env.GATEWAY_EXPRESS = '4';
  else delete env.GATEWAY_EXPRESS;
  // a log a machine reads (CI's, a file) gets vitest's summaries as plain text, without colour codes
  if (!process.stdout.isTTY) {
    env.NO_COLOR = '1';
    delete env.FORCE_COLOR;
  }
  return new Promise((resolve) => {
    const child = spawn(node, [vitest, 'run', ...args], { cwd: root, env, stdio: 'inherit' });
    child.on('error', () => resolve(1));
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const ci = process.env.CI === 'true';
const args = process.argv.slice(2);
const results: string[] = [];
let failed = false;
for (const leg of ci ? CI : DEVELOPER) {
  const node = nodeFor(leg.node);
  const label = `Node.js ${leg.node === 'current' ? process.versions.node : leg.node} · Express ${leg.express} · ${leg.specs.join(' + ')}`;
  if (!node) {
    results.push(`FAILED   ${label}: no Node.js ${major(leg.node)} binary`);
    failed = true;
    continue;
  }
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`\n── ${leg.specs.join(' + ')} specs on Node.js ${version} with Express ${leg.express} ──\n`);
  const started = Date.now();
  const code = await runLeg(leg, node, args);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  results.push(`${code === 0 ? 'passed ' : 'FAILED '}  ${label} (${version}, ${minutes} min)`);
  failed ||= code !== 0;
}
console.log(`\n${results.join('\n')}`);
process.exit(failed ? 1 : 0);
