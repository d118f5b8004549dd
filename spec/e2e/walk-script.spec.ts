// `npm run walk -- --files` as a process (docs/architecture.md "The walk of one image request"): for
// the OpenAI-compatible and the DashScope upstream it prints a table by lib/ folder whose rows add up
// to its total, and a list of exactly that many files, each a source file of lib/; the DashScope
// walk passes through a DashScope provider file and the OpenAI-compatible one does not. With
// `--functions` each counted file is followed by the functions that ran in it.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/package-entries.js';

interface Walk {
  title: string;
  rows: Map<string, number>;
  total: number;
  files: string[];
}

/** The sections of the script's output, one per upstream, each starting at its title line. */
function parse(stdout: string): Walk[] {
  const walks: Walk[] = [];
  for (const line of stdout.split('\n')) {
    if (/ upstream \(provider: /.test(line)) {
      walks.push({ title: line, rows: new Map(), total: -1, files: [] });
      continue;
    }
    const walk = walks.at(-1);
    if (!walk) continue;
    const row = /^(\S+\/)\s+(\d+)$/.exec(line);
    const total = /^total\s+(\d+)$/.exec(line);
    const file = /^ {2}(\S+)$/.exec(line);
    if (row) walk.rows.set(row[1]!, Number(row[2]));
    else if (total) walk.total = Number(total[1]);
    else if (file) walk.files.push(file[1]!);
  }
  return walks;
}

const libSources = new Set(
  readdirSync(path.join(ROOT, 'lib'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => name.split(path.sep).join('/')),
);

// the script builds and runs lib/ with the repository's own Express: checked once, in the Express 5 run
describe.skipIf(process.env.GATEWAY_EXPRESS === '4')('npm run walk -- --files', () => {
  let walks: Walk[] = [];

  beforeAll(async () => {
    // node with tsx's loader, as `npm run walk` runs it; a failure or a non-zero exit rejects
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/walk.ts', '--files'], { cwd: ROOT });
    walks = parse(stdout);
  }, 60_000);

  it('walks both upstreams, each over more than 20 files, in a table whose rows add up to the total', () => {
    expect(walks.map((walk) => walk.title)).toEqual([expect.stringMatching(/^OpenAI-compatible upstream/), expect.stringMatching(/^DashScope upstream/)]);
    for (const walk of walks) {
      expect(walk.total).toBeGreaterThan(20);
      expect([...walk.rows.values()].reduce((sum, count) => sum + count, 0)).toBe(walk.total);
      expect(walk.rows.get('express/')).toBeGreaterThan(0);
      expect([...walk.rows.keys()].some((folder) => folder.startsWith('providers/'))).toBe(true);
    }
  });

  it('lists exactly the files it counts, sorted, each a source file of lib/ in the folder of its row', () => {
    for (const walk of walks) {
      expect(walk.files).toHaveLength(walk.total);
      expect(walk.files).toEqual([...walk.files].sort());
      expect(walk.files.filter((file) => !libSources.has(file))).toEqual([]);
      const byFolder = new Map<string, number>();
      for (const file of walk.files) {
        const folder = `${path.posix.dirname(file)}/`.replace(/^\.\/$/, './');
        byFolder.set(folder, (byFolder.get(folder) ?? 0) + 1);
      }
      expect(byFolder).toEqual(walk.rows);
    }
  });

  it('passes through a DashScope provider file for DashScope only', () => {
    const [openai, dashscope] = walks;
    expect(dashscope!.files.filter((file) => file.startsWith('providers/') && /dashscope/.test(file)).length).toBeGreaterThan(0);
    expect(openai!.files.filter((file) => /dashscope/.test(file))).toEqual([]);
  });
});

describe.skipIf(process.env.GATEWAY_EXPRESS === '4')('npm run walk -- --functions', () => {
  let stdout = '';

  beforeAll(async () => {
    ({ stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/walk.ts', '--functions'], { cwd: ROOT }));
  }, 60_000);

  it('follows every counted file with the functions that ran in it: source line, calls, name', () => {
    const [openai] = parse(stdout);
    const section = stdout.slice(0, stdout.indexOf('DashScope upstream'));
    for (const file of openai!.files) {
      const listed = new RegExp(`^ {2}${file.replace(/[.]/g, '[.]')}\\n(?: {6}L\\d+ +×\\d+ +.+\\n)+`, 'm').exec(section);
      expect(listed, file).not.toBeNull();
    }
    // the key check ran, by its own name, at a line of its TypeScript source
    expect(section).toMatch(/^ {2}express\/authenticate[.]ts\n(?: {6}.+\n)* {6}L\d+ +×1 +accept$/m);
  });
});
