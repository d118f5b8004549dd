// The checks `npm test` runs before the suite (docs/contributing.md "The commands"): the type check,
// ESLint, Prettier, ts-unused-exports and dependency-cruiser, each the package.json script of its name.
// They read the same files and none writes, so they run side by side, as many at once as the machine has
// cores, the longest first: the phase takes about as long as ESLint alone instead of the sum of the five.
// Each check's output is printed whole once it ends, under its name, so two failures never interleave;
// the last lines say which passed and which failed, and the exit code is 1 if any failed.
//
// `npx tsx scripts/checks.ts lint:eslint typecheck` runs only the scripts named.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package.json scripts the phase runs, the longest first (ESLint's type-checked rules, then tsc). */
const CHECKS = ['lint:eslint', 'typecheck', 'lint:format', 'lint:deps', 'lint:exports'];

interface Outcome {
  readonly name: string;
  readonly code: number;
  readonly seconds: number;
  readonly output: string;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const scripts = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const bin = path.join(root, 'node_modules', '.bin');

/** Runs one package.json script as `npm run` would (its command in a shell, node_modules/.bin first on PATH), without npm's own start-up. */
function run(name: string): Promise<Outcome> {
  const command = scripts[name];
  if (command === undefined) return Promise.resolve({ name, code: 1, seconds: 0, output: `package.json has no script "${name}"\n` });
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, { cwd: root, shell: true, env: { ...process.env, ...(process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}), PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` } });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    const end = (code: number): void => resolve({ name, code, seconds: (Date.now() - started) / 1000, output: Buffer.concat(chunks).toString('utf8') });
    child.on('error', (error) => {
      chunks.push(Buffer.from(`${error.message}\n`));
      end(1);
    });
    child.on('close', (code, signal) => end(code ?? (signal ? 1 : 0)));
  });
}

function report(outcome: Outcome): void {
  const verdict = outcome.code === 0 ? 'passed' : `FAILED (exit ${outcome.code})`;
  const output = outcome.output.trimEnd();
  console.log(`── ${outcome.name} (${scripts[outcome.name] ?? '?'}) ${verdict} in ${outcome.seconds.toFixed(1)} s ──${output ? `\n${output}\n` : ''}`);
}

const names = process.argv.length > 2 ? process.argv.slice(2) : CHECKS;
const queue = [...names];
const outcomes: Outcome[] = [];
const started = Date.now();

async function worker(): Promise<void> {
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    const outcome = await run(name);
    outcomes.push(outcome);
    report(outcome);
  }
}

await Promise.all(Array.from({ length: Math.min(names.length, Math.max(1, availableParallelism())) }, () => worker()));
const failed = outcomes.filter((outcome) => outcome.code !== 0);
const summary = names.map((name) => `${outcomes.find((outcome) => outcome.name === name)?.code === 0 ? 'passed ' : 'FAILED '}  ${name}`);
console.log(`\n${summary.join('\n')}\n${names.length} checks in ${((Date.now() - started) / 1000).toFixed(1)} s${failed.length > 0 ? `, ${failed.length} failed` : ''}`);
process.exit(failed.length > 0 ? 1 : 0);
