// No provider is named outside lib/providers/ (docs/architecture.md "Providers and the registry"): what a
// provider can do is asked of the registry, so a new provider is one module and one registry line. Read
// with the TypeScript compiler, so comments (which may name a vendor to explain a rule) are not code.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PROVIDER_NAMES } from '../../lib/providers/registry.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Every `.ts` file under lib/ but lib/providers/, as a path relative to the repository. */
function sourcesOutsideProviders(): string[] {
  return readdirSync(path.join(ROOT, 'lib'), { recursive: true, encoding: 'utf8' })
    .map((file) => path.posix.join('lib', file.split(path.sep).join('/')))
    .filter((file) => file.endsWith('.ts') && !file.startsWith('lib/providers/'))
    .sort();
}

/**
 * Where a source names a provider in code: a string (or template) literal that is a provider's name, or
 * holds one quoted (`provider: 'x'` in a message). Comments are not read; prose such as "OpenAI-compatible"
 * names an API shape, not a provider value.
 */
function providerNamesIn(fileName: string, text: string, names: readonly string[]): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const quoted = names.flatMap((name) => [`'${name}'`, `"${name}"`, `\`${name}\``]);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    // the public union of the names (lib/types.ts) is the one place outside the providers that lists them
    if (ts.isTypeAliasDeclaration(node) && node.name.text === 'ProviderName') return;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      const value = node.text;
      if (names.includes(value) || quoted.some((name) => value.includes(name))) {
        found.push(`${fileName}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1} ${JSON.stringify(value.slice(0, 80))}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('provider names', () => {
  it('the check finds a name in code and ignores one in a comment', () => {
    const text = [
      "// a comment may say 'vertex' to explain a rule",
      '/** and so may TSDoc: @example provider: "ark" */',
      "if (upstream.provider === 'vertex') throw new Error(\"use provider: 'ark'\");",
      'const hint = `provider: ${name}`;',
    ].join('\n');
    expect(providerNamesIn('sample.ts', text, ['vertex', 'ark'])).toEqual(['sample.ts:3 "vertex"', 'sample.ts:3 "use provider: \'ark\'"']);
  });

  it('the public union of the names is the one list it passes over', () => {
    const text = ["export type ProviderName = 'vertex' | 'ark';", "type Other = 'vertex';"].join('\n');
    expect(providerNamesIn('sample.ts', text, ['vertex', 'ark'])).toEqual(['sample.ts:2 "vertex"']);
  });

  it('no file outside lib/providers/ names a provider in code', () => {
    const files = sourcesOutsideProviders();
    expect(files).toContain('lib/types.ts');
    const found = files.flatMap((file) => providerNamesIn(file, readFileSync(path.join(ROOT, file), 'utf8'), PROVIDER_NAMES));
    expect(found).toEqual([]);
  });
});
