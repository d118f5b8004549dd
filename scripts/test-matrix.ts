// The suite on every Node.js line the package supports (package.json `engines`), with the two Express
// majors spread over them rather than multiplied by them: each leg is the whole suite on one Node line
// and one Express major, so three legs prove three Node lines and both Express majors
// (docs/contributing.md "The commands").
//
// A Node line other than the one running this script comes from the npm registry's official Node.js
// binary package (`node-<platform>-<arch>`, the binary itself, nothing downloaded beyond the registry),
// installed once into node_modules/.cache and pinned here so every run tests the same binaries.
// `GATEWAY_TEST_NODES=current` runs the legs of the running Node line only (an offline machine).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface Leg {
  readonly node: string;
  readonly express: 4 | 5;
}

// the newest release of each line when pinned; raise them together with `engines`
const LEGS: readonly Leg[] = [
  { node: '24.21.0', express: 5 },
  { node: '22.23.3', express: 4 },
  { node: '20.20.2', express: 5 },
];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = path.join(root, 'node_modules', '.cache', 'test-nodes');
const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');
const major = (version: string): string => version.split('.')[0] ?? version;

/** The node binary of a leg: this process's own when the line matches, else the registry's package. */
function nodeFor(version: string): string | undefined {
  if (major(process.versions.node) === major(version)) return process.execPath;
  if (process.env.GATEWAY_TEST_NODES === 'current') return undefined;
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
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` };
  if (leg.express === 4) env.GATEWAY_EXPRESS = '4';
  else delete env.GATEWAY_EXPRESS;
  return new Promise((resolve) => {
    const child = spawn(node, [vitest, 'run', ...args], { cwd: root, env, stdio: 'inherit' });
    child.on('error', () => resolve(1));
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const args = process.argv.slice(2);
const results: string[] = [];
let failed = false;
for (const leg of LEGS) {
  const label = `Node.js ${leg.node} · Express ${leg.express}`;
  const node = nodeFor(leg.node);
  if (!node) {
    // CI must prove every line; a developer offline may run the legs of their own Node line only
    const must = process.env.CI === 'true' || process.env.GATEWAY_TEST_NODES !== 'current';
    results.push(`${must ? 'FAILED ' : 'skipped'}  ${label}: no Node.js ${major(leg.node)} binary`);
    failed ||= must;
    continue;
  }
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`\n── the suite on Node.js ${version} with Express ${leg.express} ──\n`);
  const started = Date.now();
  const code = await runLeg(leg, node, args);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  results.push(`${code === 0 ? 'passed ' : 'FAILED '}  ${label} (${version}, ${minutes} min)`);
  failed ||= code !== 0;
}
console.log(`\n${results.join('\n')}`);
process.exit(failed ? 1 : 0);
