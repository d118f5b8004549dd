// docs/errors.md has a row for every code of ERROR_CODES, with its status and `error.type`, and names
// no code the gateway does not emit. docs/contributing.md "Documentation"
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../lib/index.js';
import { ROOT } from '../helpers/markdown-docs.js';

const page = readFileSync(path.join(ROOT, 'docs/errors.md'), 'utf8');
/** Rows of the code table: | status | `code` | `type` | ... */
const rows = [...page.matchAll(/^\|\s*(\d{3}(?:\s*\/\s*\d{3})?)\s*\|\s*`([a-z_]+)`\s*\|\s*`([a-z_]+)`(?:\s*\/\s*`([a-z_]+)`)?\s*\|/gm)].map((match) => ({
  status: match[1]!,
  code: match[2]!,
  types: [match[3]!, match[4]].filter(Boolean),
}));

describe('docs/errors.md', () => {
  it('has a row with status and type for every error code', () => {
    const documented = new Set(rows.map((row) => row.code));
    expect(Object.values(ERROR_CODES).filter((code) => !documented.has(code))).toEqual([]);
  });

  it('documents only codes the gateway emits', () => {
    const known = new Set<string>(Object.values(ERROR_CODES));
    expect(rows.map((row) => row.code).filter((code) => !known.has(code))).toEqual([]);
  });
});
