// What the product says of itself: the README stays short and leads into docs/ (what it is, install,
// the two commands, the embedding sample, the SDK call, features and the docs' table of contents),
// docs/README.md indexes every page, and no text of the product (README, docs, examples, specs,
// benchmarks, scripts) narrates how it was made: history goes to CHANGELOG.md.
// docs/contributing.md "Documentation"
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, codeBlocks, documentationFiles, links } from '../helpers/markdown-docs.js';

const files = documentationFiles();
const readme = files.find((file) => file.name === 'README.md')!;
const pages = files.filter((file) => file.name.startsWith('docs/') && file.name !== 'docs/README.md').map((file) => file.name);

/** Where each Markdown page links to, as repository paths. */
function linkedPages(from: string): Set<string> {
  const file = files.find((candidate) => candidate.name === from)!;
  return new Set(links(file).map((link) => path.posix.normalize(path.posix.join(path.posix.dirname(from), link.target.split('#')[0]!))));
}

/** Development narration: issue numbers, "levers", "the third round", a reviewer's or an issue's text. */
const NARRATION: readonly RegExp[] = [
  /\bissues?[\s-]*#?\d+/i,
  /\b(?:the|this|that|an?) issue(?:'s)?\b/i,
  /\blevers?\b/i,
  /\b(?:first|second|third|fourth|fifth|previous|earlier|this|that|next|last) round\b/i,
  /\bround's\b/i,
  /\breviewer/i,
  /\bmerged code\b/i,
];

function productFiles(): string[] {
  const roots = ['lib', 'examples', 'spec', 'bench', 'scripts'];
  const sources = roots.flatMap((root) =>
    readdirSync(path.join(ROOT, root), { recursive: true, encoding: 'utf8' })
      .filter((name) => /\.(ts|js|mjs|cjs|py|html)$/.test(name))
      // bench/.tmp holds builds copied for bench/ab.ts: ignored by git, not the product's text
      .filter((name) => !name.split(path.sep).includes('.tmp'))
      .map((name) => `${root}/${name.split(path.sep).join('/')}`),
  );
  return [...files.map((file) => file.name), ...sources].filter((name) => name !== 'spec/docs/product-text.spec.ts');
}

describe('README.md', () => {
  it('is at most 300 lines', () => {
    expect(readme.text.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('links into docs/ at least three times, and to every page of docs/ (its table of contents)', () => {
    const linked = linkedPages('README.md');
    expect([...linked].filter((target) => target.startsWith('docs/')).length).toBeGreaterThanOrEqual(3);
    expect(pages.filter((page) => !linked.has(page))).toEqual([]);
  });

  it('shows the install, the two commands, the embedding sample and the OpenAI SDK call', () => {
    const blocks = codeBlocks(readme);
    expect(blocks.some((block) => block.lang === 'sh' && /npm install/.test(block.code))).toBe(true);
    expect(blocks.some((block) => block.lang === 'sh' && /npm start/.test(block.code) && /npm test/.test(block.code))).toBe(true);
    expect(blocks.find((block) => block.lang === 'ts')?.code).toMatch(/createGatewayRouter\([\s\S]*app\.use\(gateway\)/);
    expect(blocks.some((block) => block.lang === 'ts' && /new OpenAI\(/.test(block.code) && /images\.generate\(/.test(block.code))).toBe(true);
  });
});

describe('docs/README.md', () => {
  it('lists every page of docs/', () => {
    const linked = linkedPages('docs/README.md');
    expect(pages.filter((page) => !linked.has(page))).toEqual([]);
  });
});

describe('product text', () => {
  it('never narrates how the product was made (issues, rounds, levers, reviews)', () => {
    const found: string[] = [];
    for (const name of productFiles()) {
      readFileSync(path.join(ROOT, name), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          const pattern = NARRATION.find((candidate) => candidate.test(line));
          if (pattern) found.push(`${name}:${index + 1}: ${line.trim().slice(0, 140)}`);
        });
    }
    expect(found).toEqual([]);
  });
});
