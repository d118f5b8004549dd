// The project's Markdown, read the way the documentation checks need it (spec/docs/): which files are
// documentation, their fenced code blocks with line numbers, their links, and the anchors GitHub gives
// their headings. docs/contributing.md "Documentation"
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../scripts/package-entries.js';

export { ROOT };

export interface MarkdownFile {
  /** Relative to the repository root, with forward slashes: `README.md`, `docs/routes.md`. */
  name: string;
  text: string;
}

export interface CodeBlock {
  file: string;
  /** The info string's first word: `ts`, `sh`, `json`, ... */
  lang: string;
  /** 1-based line of the block's first code line in its file. */
  line: number;
  code: string;
}

export interface MarkdownLink {
  file: string;
  line: number;
  target: string;
}

/** README.md and every page of docs/ (the generated API reference in docs/api/ is not Markdown). */
export function documentationFiles(): MarkdownFile[] {
  const pages = readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md') && !name.startsWith(`api${path.sep}`))
    .map((name) => `docs/${name.split(path.sep).join('/')}`)
    .sort();
  return ['README.md', ...pages].map((name) => ({ name, text: readFileSync(path.join(ROOT, name), 'utf8') }));
}

export function codeBlocks(file: MarkdownFile): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = file.text.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[index]!);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence!)) body.push(lines[end++]!);
    blocks.push({ file: file.name, lang: lang ?? '', line: index + 2, code: body.map((line) => (line.startsWith(indent!) ? line.slice(indent!.length) : line)).join('\n') });
    index = end;
  }
  return blocks;
}

/**
 * The text outside fenced code blocks, line for line (so line numbers hold); inline code spans removed
 * too unless `keepCode` (headings may hold code spans).
 */
function proseLines(text: string, keepCode = false): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return '';
    }
    if (marker) {
      fence = marker;
      return '';
    }
    return keepCode ? line : line.replace(/(`+)[^`]*?\1/g, '');
  });
}

export interface InlineCode {
  file: string;
  /** 1-based line the span starts on. */
  line: number;
  /** The span's text, line breaks inside it read as spaces (as Markdown renders them). */
  code: string;
  /** The rest of the line the span ends on: what the prose says right after it. */
  after: string;
}

/** The inline code spans of the prose, a span running over a line break within its paragraph too. */
export function inlineCode(file: MarkdownFile): InlineCode[] {
  const prose = proseLines(file.text, true);
  const text = prose.join('\n');
  const found: InlineCode[] = [];
  // a run of backticks, then text up to the same run: no blank line inside (a span ends with its paragraph)
  for (const match of text.matchAll(/(?<!`)(`+)(?!`)((?:[^`\n]|\n(?![ \t]*\n)|`(?!\1))+?)(?<!`)\1(?!`)/g)) {
    const line = text.slice(0, match.index).split('\n').length;
    const end = match.index + match[0].length;
    const lineEnd = text.indexOf('\n', end);
    found.push({ file: file.name, line, code: match[2]!.replace(/\s*\n\s*/g, ' ').trim(), after: text.slice(end, lineEnd === -1 ? undefined : lineEnd) });
  }
  return found;
}

/** Inline links and images `[text](target)` of the prose, with their line. */
export function links(file: MarkdownFile): MarkdownLink[] {
  const found: MarkdownLink[] = [];
  proseLines(file.text).forEach((line, index) => {
    for (const match of line.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) found.push({ file: file.name, line: index + 1, target: match[1]! });
  });
  return found;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  proseLines(text, true).forEach((line) => {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) return;
    const plain = heading[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*]/g, '');
    const slug = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  });
  return anchors;
}

/**
 * The sections of a page under headings of one level: heading text (code spans kept) -> the text up
 * to the next heading of that level or above.
 */
export function sections(text: string, level: number): Map<string, string> {
  const result = new Map<string, string>();
  const lines = text.split('\n');
  const prose = proseLines(text, true);
  let current: string | undefined;
  let body: string[] = [];
  const close = (): void => {
    if (current !== undefined) result.set(current, body.join('\n'));
  };
  prose.forEach((line, index) => {
    const heading = /^(#{1,6})\s+(.*?)\s*$/.exec(line);
    if (heading && heading[1]!.length <= level) {
      close();
      current = heading[1]!.length === level ? heading[2]! : undefined;
      body = [];
      return;
    }
    if (current !== undefined) body.push(lines[index]!);
  });
  close();
  return result;
}

/**
 * The pipe tables of a text outside fenced code blocks, each as its rows of cells (the header row
 * first, the `|---|` row left out); a `\|` inside a cell is kept as `|`.
 */
export function tables(text: string): string[][][] {
  const found: string[][][] = [];
  let current: string[][] | undefined;
  for (const line of proseLines(text, true)) {
    if (!line.trimStart().startsWith('|')) {
      current = undefined;
      continue;
    }
    const cells = line
      .trim()
      .replace(/^\||\|$/g, '')
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim().replace(/\\\|/g, '|'));
    if (cells.every((cell) => /^:?-+:?$/.test(cell))) continue;
    if (!current) found.push((current = []));
    current.push(cells);
  }
  return found;
}
