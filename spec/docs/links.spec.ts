// Every relative link of README.md and docs/ names a file or folder of the repository, and every
// `#anchor` (on the same page or another Markdown page) names one of that page's headings, as GitHub
// spells heading anchors. docs/contributing.md "Documentation"
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, documentationFiles, headingAnchors, links } from '../helpers/markdown-docs.js';

const files = documentationFiles();

function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

describe('links of README.md and docs/', () => {
  it('finds the pages and their links', () => {
    expect(files.map((file) => file.name)).toContain('README.md');
    expect(files.length).toBeGreaterThan(10);
    expect(files.flatMap(links).length).toBeGreaterThan(50);
  });

  it.each(files.map((file) => [file.name, file] as const))('%s: every relative link resolves', (_name, file) => {
    const broken: string[] = [];
    for (const link of links(file)) {
      if (isExternal(link.target)) continue;
      const [target = '', anchor] = link.target.split('#', 2);
      const resolved = target === '' ? path.join(ROOT, file.name) : path.resolve(path.dirname(path.join(ROOT, file.name)), decodeURIComponent(target));
      const where = `${file.name}:${link.line} -> ${link.target}`;
      if (!resolved.startsWith(ROOT + path.sep) || !existsSync(resolved)) {
        broken.push(`${where}: no such file`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!statSync(resolved).isFile() || !resolved.endsWith('.md')) {
        broken.push(`${where}: an anchor on something that is not a Markdown page`);
        continue;
      }
      if (!headingAnchors(readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${where}: no heading with that anchor`);
    }
    expect(broken).toEqual([]);
  });
});
