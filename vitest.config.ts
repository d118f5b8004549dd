// Test runner config. GATEWAY_EXPRESS=4 re-runs the whole suite with `express` resolved to Express 4
// (the `express4` alias), so the router is proven on both supported majors with one set of specs.
import { createRequire } from 'node:module';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);
const express4 = process.env.GATEWAY_EXPRESS === '4';

export default defineConfig({
  resolve: {
    alias: express4 ? { express: path.dirname(require.resolve('express4/package.json')) } : {},
  },
  test: {
    include: ['spec/**/*.spec.ts'],
    setupFiles: ['spec/helpers/remove-temp-dirs.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    server: { deps: { inline: express4 ? [/lib\//] : [] } },
  },
});
