// The samples of README.md and docs/ can be followed as written and say one thing: the install
// commands name no placeholder and the tarball `npm pack` really writes; every sample that mounts the
// gateway beside a host body parser puts the parser first, wrapped in skipGatewayRoutes (the layout
// docs/architecture.md's host hooks and README.md describe); and an image body that carries a
// top-level `prompt` beside `input.messages` says in it that the prompt is unused, as the gateway
// reads the body (lib/images/image-request.ts). docs/contributing.md "Documentation"
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../lib/default-limits.js';
import { type ImageRequestRules, readImageGenerationRequest } from '../../lib/images/image-request.js';
import { GENERIC_IMAGE_FAMILY } from '../../lib/images/model-families.js';
import { imageGenerationSchema } from '../../lib/schemas/image-generation-schema.js';
import { createSchemaCompiler } from '../../lib/schemas/validator.js';
import { ROOT, type CodeBlock, codeBlocks, documentationFiles } from '../helpers/markdown-docs.js';

const blocks = documentationFiles().flatMap(codeBlocks);
const where = (block: CodeBlock, offset = 0): string => `${block.file}:${block.line + offset}`;

/** The JSON bodies of a block's `curl -d '…'`, and the block itself when it is JSON. */
function jsonBodies(block: CodeBlock): Array<{ at: string; body: Record<string, unknown> }> {
  const texts = block.lang === 'json' ? [block.code] : [...block.code.matchAll(/-d '(\{[^']*\})'/g)].map((match) => match[1]!);
  return texts.flatMap((text) => {
    try {
      const body: unknown = JSON.parse(text);
      return body && typeof body === 'object' && !Array.isArray(body) ? [{ at: where(block), body: body as Record<string, unknown> }] : [];
    } catch {
      return [];
    }
  });
}

// the docs do not depend on the Express major: checked once, in the Express 5 run
describe.skipIf(process.env.GATEWAY_EXPRESS === '4')('the samples of README.md and docs/ as a reader follows them', () => {
  it("install commands name no placeholder, and the tarball is the one `npm pack` writes for package.json's version", () => {
    const { name, version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
    const installs = blocks.filter((block) => block.lang === 'sh' && /\bnpm (?:install|i|pack)\b/.test(block.code));
    expect(installs.map((block) => block.file)).toEqual(expect.arrayContaining(['README.md', 'docs/getting-started.md']));
    const wrong: string[] = [];
    for (const block of installs) {
      block.code.split('\n').forEach((line, index) => {
        if (/<[A-Za-z][\w-]*>/.test(line)) wrong.push(`${where(block, index)}: a placeholder: ${line.trim()}`);
        for (const tarball of line.match(/[\w.-]+\.tgz/g) ?? []) if (tarball !== `${name}-${version}.tgz`) wrong.push(`${where(block, index)}: ${tarball}, not ${name}-${version}.tgz`);
      });
    }
    expect(wrong).toEqual([]);
  });

  it('a sample that mounts the gateway puts each body parser first, wrapped in skipGatewayRoutes', () => {
    const mounting = blocks.filter((block) => /^(?:ts|typescript|js)$/.test(block.lang) && /app\.use\((?:'[^']*',\s*)?gateway\)/.test(block.code));
    expect(mounting.length).toBeGreaterThanOrEqual(2);
    const wrong: string[] = [];
    for (const block of mounting) {
      const lines = block.code.split('\n');
      const mount = lines.findIndex((line) => /app\.use\((?:'[^']*',\s*)?gateway\)/.test(line));
      lines.forEach((line, index) => {
        if (!/express\.(?:json|urlencoded|raw|text)\(/.test(line.replace(/\/\/.*$/, ''))) return;
        if (!/skipGatewayRoutes\(\s*express\./.test(line)) wrong.push(`${where(block, index)}: a parser not wrapped in skipGatewayRoutes`);
        if (index > mount) wrong.push(`${where(block, index)}: a parser after the gateway`);
      });
    }
    expect(wrong).toEqual([]);
  });

  it('an image body with a top-level prompt beside input.messages says that prompt is unused, as the gateway reads it', () => {
    const rules: ImageRequestRules = { validate: createSchemaCompiler()(imageGenerationSchema), limits: DEFAULT_LIMITS, allowPrivateImageUrls: true };
    const both = blocks.flatMap(jsonBodies).filter(({ body }) => typeof body.prompt === 'string' && typeof body.input === 'object');
    expect(both.length).toBeGreaterThanOrEqual(2);
    const wrong: string[] = [];
    for (const { at, body } of both) {
      // the gateway's reading: the prompt is the text item of input.messages, the top-level one is not read
      const read = readImageGenerationRequest(body, GENERIC_IMAGE_FAMILY, rules).content.flatMap((item) => ('text' in item ? [item.text] : []));
      expect(read, at).not.toContain(body.prompt);
      if (!/\bunused\b/.test(String(body.prompt))) wrong.push(`${at}: "prompt":${JSON.stringify(body.prompt)} beside input.messages, which is the prompt read`);
    }
    expect(wrong).toEqual([]);
  });
});
