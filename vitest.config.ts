// Test runner config (docs/contributing.md "The commands"). GATEWAY_EXPRESS=4 runs the specs with
// `express` resolved to Express 4 (the `express4` alias), so the router is proven on both supported
// majors with one set of specs. GATEWAY_SPECS names the sets a run takes (scripts/test-suite.ts sets it
// per leg); without it every spec runs, so `npx vitest run <file>` runs any one file.
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { WaitsFirstSequencer } from './spec/helpers/waits-first-sequencer.js';

const require = createRequire(import.meta.url);
const express4 = process.env.GATEWAY_EXPRESS === '4';

// the specs that prove the package itself rather than the router: its build, its API reference and the
// playground in a real browser run once per CI run; its install and its published declarations once per
// Node.js line and Express major. Every other spec is 'core', the developer's suite.
const ONCE = ['spec/e2e/package-build.spec.ts', 'spec/docs/api-reference.spec.ts', 'spec/e2e/playground-browser.spec.ts', 'spec/e2e/playground-host-browser.spec.ts'];
const LINES = ['spec/e2e/package-install.spec.ts', 'spec/e2e/published-types.spec.ts'];
const SPEC_SETS = { once: ONCE, lines: LINES } as const;

const sets = (process.env.GATEWAY_SPECS ?? 'core,once,lines').split(',');
const include = [...(sets.includes('core') ? ['spec/**/*.spec.ts'] : []), ...(sets.includes('once') ? ONCE : []), ...(sets.includes('lines') ? LINES : [])];
const exclude = (Object.keys(SPEC_SETS) as (keyof typeof SPEC_SETS)[]).filter((set) => !sets.includes(set)).flatMap((set) => SPEC_SETS[set]);

export default defineConfig({
  resolve: {
    alias: express4 ? { express: path.dirname(require.resolve('express4/package.json')) } : {},
  },
  test: {
    include,
    exclude: ['**/node_modules/**', ...exclude],
    setupFiles: ['spec/helpers/remove-temp-dirs.ts', 'spec/helpers/reset-process-globals.ts'],
    // the specs wait on sockets and child processes far more than on the CPU: two workers per core
    maxWorkers: Number(process.env.GATEWAY_TEST_WORKERS ?? Math.max(2, availableParallelism() * 2)),
    // a worker runs one file after another in one process and imports lib/ and the fakes once, not once
    // per file (half the suite's CPU time): each file tears down what it starts (spec/helpers/gateway-with.ts),
    // and the setup file above takes away what a file installed for the whole process
    isolate: false,
    // with no timings of an earlier run (a fresh clone), the specs that wait on leases start first
    sequence: { sequencer: WaitsFirstSequencer },
    testTimeout: 20_000,
    hookTimeout: 20_000,
    server: { deps: { inline: express4 ? [/lib\//] : [] } },
  },
});
