// No table of README.md or docs/ says a thing twice: a row repeated in the same table (a vendor, an
// option, a route listed again) is an edit that went wrong. docs/contributing.md "Documentation"
import { describe, expect, it } from 'vitest';
import { documentationFiles, tables } from '../helpers/markdown-docs.js';

// the docs do not depend on the Express major: checked once, in the Express 5 run
describe.skipIf(process.env.GATEWAY_EXPRESS === '4')('the tables of README.md and docs/', () => {
  it('repeat no row within a table', () => {
    const files = documentationFiles();
    const all = files.flatMap((file) => tables(file.text).map((table) => ({ file: file.name, table })));
    expect(all.length).toBeGreaterThan(30);
    const repeated: string[] = [];
    for (const { file, table } of all) {
      const seen = new Set<string>();
      for (const row of table) {
        const key = row.join(' | ');
        if (seen.has(key)) repeated.push(`${file}: | ${key} |`);
        seen.add(key);
      }
    }
    expect(repeated).toEqual([]);
  });
});
