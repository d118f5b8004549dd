// The docs name the source by its paths (docs/architecture.md: "This page names the folders and files of
// lib/"): every `lib/…` file and folder a page of docs/ or the README names exists, so a file moved or
// renamed without its docs fails the suite.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const pages = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => path.join('docs', file)),
];

/** The `lib/...` paths a page names in code spans: files (`.ts`) and folders (a trailing `/`). */
function sourcePathsOf(text: string): string[] {
  return [...text.matchAll(/`(lib\/[A-Za-z0-9_./-]+(?:\.ts|\/))`/g)].map((match) => match[1]!);
}

describe('source paths in the docs', () => {
  it('finds the paths a page names', () => {
    expect(sourcePathsOf('see `lib/types.ts` and `lib/gateway/ledger/`, not `lib/<vendor>/x.ts`')).toEqual(['lib/types.ts', 'lib/gateway/ledger/']);
  });

  it.each(pages)('every lib/ file and folder %s names exists', (page) => {
    const missing = sourcePathsOf(readFileSync(path.join(ROOT, page), 'utf8')).filter((source) => !existsSync(path.join(ROOT, source)));
    expect(missing).toEqual([]);
  });
});
