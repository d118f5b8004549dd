// Every ```ts block of README.md and docs/ type-checks against the package, as a host would compile
// it: the project's strict compiler options plus `exactOptionalPropertyTypes`, which strict hosts turn
// on (a sample must not need it off), `express-image-gateway` and its subpaths resolved to their
// sources in lib/. Each block is its own module; the few names the pages use without declaring
// them (the host's `app`, `gateway`, `verifyKey`, `resolveUpstream`) come from PRELUDE.
// docs/contributing.md "Documentation"
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { packageEntries } from '../../scripts/package-entries.js';
import { ROOT, type CodeBlock, codeBlocks, documentationFiles } from '../helpers/markdown-docs.js';

const PRELUDE = `
declare const app: import('express').Express;
declare const gateway: import('express-image-gateway').GatewayRouter;
declare const verifyKey: import('express-image-gateway').VerifyKey;
declare const resolveUpstream: import('express-image-gateway').ResolveUpstream;
`;

function entryPaths(): Record<string, string[]> {
  const paths: Record<string, string[]> = {};
  for (const entry of packageEntries()) paths[entry.specifier] = [path.join(ROOT, entry.source)];
  return paths;
}

interface Checked {
  block: CodeBlock;
  fileName: string;
}

function typeCheck(blocks: CodeBlock[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  // the project itself compiles without exactOptionalPropertyTypes; the samples are held to what a strict host compiles
  const options: ts.CompilerOptions = { ...config!.options, exactOptionalPropertyTypes: true, noEmit: true, paths: entryPaths() };
  // virtual files beside the pages, so imports resolve from the repository's node_modules
  const checked: Checked[] = blocks.map((block, index) => ({ block, fileName: path.join(ROOT, 'docs', `.block-${index}.ts`) }));
  const prelude = path.join(ROOT, 'docs', '.prelude.d.ts');
  const virtual = new Map<string, string>([[prelude, PRELUDE]]);
  for (const { block, fileName } of checked) virtual.set(fileName, /^\s*(import|export)\s/m.test(block.code) ? block.code : `${block.code}\nexport {};\n`);
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const text = virtual.get(path.resolve(fileName));
    return text !== undefined ? ts.createSourceFile(fileName, text, languageVersion, true) : getSourceFile(fileName, languageVersion, onError, shouldCreate);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => virtual.has(path.resolve(fileName)) || fileExists(fileName);
  const readFile = host.readFile.bind(host);
  host.readFile = (fileName) => virtual.get(path.resolve(fileName)) ?? readFile(fileName);
  const program = ts.createProgram([prelude, ...checked.map((item) => item.fileName)], options, host);
  const problems: string[] = [];
  for (const item of [{ fileName: prelude, block: undefined }, ...checked]) {
    const sourceFile = program.getSourceFile(item.fileName)!;
    for (const diagnostic of [...program.getSyntacticDiagnostics(sourceFile), ...program.getSemanticDiagnostics(sourceFile)]) {
      const line = diagnostic.start === undefined ? 0 : sourceFile.getLineAndCharacterOfPosition(diagnostic.start).line;
      const where = item.block ? `${item.block.file}:${item.block.line + line}` : `prelude:${line + 1}`;
      problems.push(`${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
    }
  }
  return problems;
}

// the docs do not depend on the Express major: checked once, in the Express 5 run
describe.skipIf(process.env.GATEWAY_EXPRESS === '4')('```ts blocks of README.md and docs/', () => {
  const blocks = documentationFiles()
    .flatMap(codeBlocks)
    .filter((block) => block.lang === 'ts' || block.lang === 'typescript');

  it('finds the blocks, among them imports of every entry the docs name', () => {
    expect(blocks.length).toBeGreaterThan(20);
    const imported = new Set(blocks.flatMap((block) => [...block.code.matchAll(/from '(express-image-gateway[^']*)'/g)].map((match) => match[1]!)));
    expect([...imported].sort()).toEqual(expect.arrayContaining(['express-image-gateway', 'express-image-gateway/testing']));
    for (const specifier of imported) expect(Object.keys(entryPaths())).toContain(specifier);
  });

  it('type-checks every block against the package', () => {
    expect(typeCheck(blocks)).toEqual([]);
  }, 120_000);
});
