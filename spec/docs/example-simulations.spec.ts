// What the docs say `npm start` simulates agrees with the example's code (examples/server.ts): the
// vendors it simulates are read from a created example app with no vendor key set, as `npm start`
// runs on a fresh clone. Each docs/providers/*.md page of a simulated vendor says `npm start`
// simulates it and never that it does not, and docs/getting-started.md's table of the simulations
// has one row per vendor of the example. docs/contributing.md "Documentation"
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExampleApp, type ExampleApp, type Vendor } from '../../examples/server.js';
import { ROOT, sections, tables } from '../helpers/markdown-docs.js';

/** The sentences of a page's prose that speak of `npm start`. */
function npmStartSentences(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.replace(/\s*\n\s*/g, ' '))
    .flatMap((paragraph) => paragraph.split(/(?<=[.;])\s+(?=[A-Z(`])/))
    .filter((sentence) => sentence.includes('`npm start`'));
}

const SAYS_NOT_SIMULATED = /\b(?:does not|doesn't|do not|never|not|no)\b[^.;]*\bsimulat/i;

// the docs do not depend on the Express major: checked once, in the Express 5 run
describe.skipIf(process.env.GATEWAY_EXPRESS === '4')("the docs on what `npm start` simulates, against the example's code", () => {
  let example: ExampleApp;
  let simulated: Vendor[];

  beforeAll(async () => {
    // no vendor key, as on a fresh clone; no request is made, so the results folder is never created
    example = await createExampleApp({ env: { RESULTS_DIR: path.join(tmpdir(), `example-simulations-unwritten-${randomUUID()}`) }, host: '127.0.0.1' });
    simulated = (Object.keys(example.upstreams) as Vendor[]).filter((vendor) => example.upstreams[vendor].simulated);
  });
  afterAll(() => example?.close());

  it('each provider page of a simulated vendor says `npm start` simulates it, and never that it does not', () => {
    const pages = readdirSync(path.join(ROOT, 'docs/providers')).filter((name) => name.endsWith('.md'));
    const vendorPages = pages.filter((name) => simulated.includes(name.replace(/\.md$/, '') as Vendor));
    expect(vendorPages.length).toBeGreaterThanOrEqual(4);
    const wrong: string[] = [];
    for (const name of vendorPages) {
      const said = npmStartSentences(readFileSync(path.join(ROOT, 'docs/providers', name), 'utf8'));
      if (!said.some((sentence) => /\bsimulates\b/.test(sentence))) wrong.push(`${name}: no sentence says \`npm start\` simulates it`);
      for (const sentence of said.filter((one) => SAYS_NOT_SIMULATED.test(one))) wrong.push(`${name}: ${sentence}`);
    }
    expect(wrong).toEqual([]);
  });

  it("docs/getting-started.md's table of the simulations has one row per vendor of the example", () => {
    const tryIt = sections(readFileSync(path.join(ROOT, 'docs/getting-started.md'), 'utf8'), 2).get('Try it with no account');
    expect(tryIt).toBeDefined();
    const table = tables(tryIt!).find((rows) => rows[0]?.[0] === 'vendor' && rows[0]?.[1] === 'simulated');
    expect(table, 'a table headed "vendor | simulated"').toBeDefined();
    // a row's vendor is its first word: `Azure OpenAI` is Azure's row, `OpenAI-compatible` OpenAI's
    const rowVendors = table!.slice(1).map(([vendor = '']) => vendor.split(/[\s.-]/)[0]!.toLowerCase());
    expect(rowVendors.sort()).toEqual(Object.keys(example.upstreams).sort());
  });

  it('"every upstream simulated", as README.md and docs/getting-started.md say, is every vendor of the example', () => {
    for (const name of ['README.md', 'docs/getting-started.md']) expect(readFileSync(path.join(ROOT, name), 'utf8'), name).toMatch(/npm start\s+#.*every upstream simulated/);
    expect(simulated.sort()).toEqual(Object.keys(example.upstreams).sort());
  });
});
