// docs/configuration.md lists every option of `GatewayOptions`, read from the type itself with the
// TypeScript compiler API (not from a list kept by hand): each option has a `## \`name\`` section that
// states its declared type, its default and an example, and each nested options object (a property
// whose type is named `...Options` or `...Limits`: limits, callbacks, storage, tenancy, ...) has every
// one of its fields named in that section, down to the fields of a group's own objects (`tenancy.quotas.limits`). The `Upstream` fields a resolver returns are named in the
// `resolveUpstream` section, the `limits` table states each default of `DEFAULT_LIMITS`, and the
// "At a glance" table lists exactly the top-level options, each with its declared type. Each
// top-level name of the "Old names" table is refused by createGatewayRouter with the place it gives.
// docs/contributing.md "Documentation"
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, GatewayConfigError, createGatewayRouter } from '../../lib/index.js';
import { ROOT, sections, tables } from '../helpers/markdown-docs.js';

interface OptionField {
  /** `limits.jsonBodyBytes`, `tenancy.quotas.limits.requestsPerMinute` */
  path: string;
  name: string;
  /** The declared type as written in the source (`Partial<GatewayLimits>`). */
  declaredType: string;
  fields: OptionField[];
}

const WRAPPERS = new Set(['Partial', 'Readonly', 'Required']);

function typeName(type: ts.Type): string | undefined {
  if (type.aliasSymbol && WRAPPERS.has(type.aliasSymbol.name) && type.aliasTypeArguments?.[0]) return typeName(type.aliasTypeArguments[0]);
  return type.aliasSymbol?.name ?? type.getSymbol()?.name;
}

/** The options objects a property's type is made of (unions taken apart, functions and other interfaces left out). */
function nestedOptionTypes(checker: ts.TypeChecker, type: ts.Type): ts.Type[] {
  const parts = type.isUnion() ? type.types : [type];
  return parts.flatMap((part) => {
    if (part.isUnion()) return nestedOptionTypes(checker, part);
    if (!(part.flags & ts.TypeFlags.Object) || part.getCallSignatures().length > 0) return [];
    return /(Options|Limits)$/.test(typeName(part) ?? '') ? [part] : [];
  });
}

function fieldsOf(checker: ts.TypeChecker, type: ts.Type, prefix: string, depth: number): OptionField[] {
  return checker.getPropertiesOfType(type).map((property) => {
    const declaration = property.valueDeclaration ?? property.declarations?.[0];
    const typeNode = declaration && (ts.isPropertySignature(declaration) || ts.isPropertyDeclaration(declaration)) ? declaration.type : undefined;
    const propertyType = checker.getNonNullableType(checker.getTypeOfSymbol(property));
    const fullPath = prefix ? `${prefix}.${property.name}` : property.name;
    return {
      path: fullPath,
      name: property.name,
      declaredType: typeNode ? typeNode.getText() : checker.typeToString(propertyType),
      fields: depth < 3 ? nestedOptionTypes(checker, propertyType).flatMap((nested) => fieldsOf(checker, nested, fullPath, depth + 1)) : [],
    };
  });
}

/** The public type `name` as the root entry exports it. */
function exportedType(program: ts.Program, name: string): ts.Type {
  const checker = program.getTypeChecker();
  const entry = program.getSourceFile(path.join(ROOT, 'lib/index.ts'));
  const moduleSymbol = entry && checker.getSymbolAtLocation(entry);
  const exported = moduleSymbol && checker.getExportsOfModule(moduleSymbol).find((symbol) => symbol.name === name);
  if (!exported) throw new Error(`lib/index.ts does not export ${name}`);
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  return checker.getDeclaredTypeOfSymbol(symbol);
}

/** `48 MiB`, `60 s`, `100,000`, `5 min` -> the number in the option's unit (bytes, ms or a count). */
function parseDefault(cell: string, name: string): number | undefined {
  const match = /`?(\d[\d,_]*(?:\.\d+)?)\s*(GiB|MiB|KiB|ms|s|min|h)?`?/.exec(cell);
  if (!match) return undefined;
  const value = Number(match[1]!.replace(/[,_]/g, ''));
  const unit = match[2];
  const scale: Record<string, number> = { GiB: 1024 ** 3, MiB: 1024 ** 2, KiB: 1024, ms: 1, s: 1000, min: 60_000, h: 3_600_000 };
  if (unit && /Ms$/.test(name) !== ['ms', 's', 'min', 'h'].includes(unit)) return undefined;
  return value * (unit ? scale[unit]! : 1);
}

// the docs do not depend on the Express major: checked once, in the Express 5 run
describe.skipIf(process.env.GATEWAY_EXPRESS === '4')('docs/configuration.md against the GatewayOptions type', () => {
  let options: OptionField[];
  let upstreamFields: string[];
  let page: string;
  let optionSections: Map<string, string>;

  beforeAll(() => {
    const config = ts.getParsedCommandLineOfConfigFile(path.join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
    const program = ts.createProgram([path.join(ROOT, 'lib/index.ts')], config!.options);
    const checker = program.getTypeChecker();
    options = fieldsOf(checker, exportedType(program, 'GatewayOptions'), '', 0);
    upstreamFields = checker.getPropertiesOfType(exportedType(program, 'Upstream')).map((property) => property.name);
    page = readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
    optionSections = new Map([...sections(page, 2)].map(([heading, body]) => [heading.replace(/^`(.*)`$/, '$1'), body]));
  }, 60_000);

  it('reads the options and their nested fields from the type', () => {
    expect(options.map((option) => option.name)).toEqual(expect.arrayContaining(['verifyKey', 'resolveUpstream', 'limits', 'callbacks', 'storage', 'tenancy', 'allow']));
    expect(options.find((option) => option.name === 'limits')!.fields.map((field) => field.name)).toEqual(expect.arrayContaining(['jsonBodyBytes', 'compressedBodies', 'imageTasks']));
    expect(
      options
        .find((option) => option.name === 'tenancy')!
        .fields.find((field) => field.name === 'quotas')!
        .fields.find((field) => field.name === 'limits')!
        .fields.map((field) => field.name),
    ).toContain('imagesPerMinute');
    expect(upstreamFields).toContain('baseURL');
  });

  it('has a section per option stating its declared type, its default and an example', () => {
    const problems: string[] = [];
    for (const option of options) {
      const body = optionSections.get(option.name);
      if (body === undefined) {
        problems.push(`${option.name}: no "## \`${option.name}\`" section`);
        continue;
      }
      if (!body.includes(`\`${option.declaredType}\``)) problems.push(`${option.name}: the section does not state its type \`${option.declaredType}\``);
      if (!/\*\*Default\*\*/.test(body)) problems.push(`${option.name}: no **Default**`);
      if (!/```ts\n/.test(body)) problems.push(`${option.name}: no \`\`\`ts example`);
    }
    expect(problems).toEqual([]);
  });

  it('names every field of each nested options object in its option section', () => {
    const problems: string[] = [];
    const walk = (fields: OptionField[], body: string): void => {
      for (const field of fields) {
        if (!body.includes(`\`${field.name}\``)) problems.push(`${field.path}: not named in its section`);
        walk(field.fields, body);
      }
    };
    for (const option of options) walk(option.fields, optionSections.get(option.name) ?? '');
    for (const field of upstreamFields) if (!(optionSections.get('resolveUpstream') ?? '').includes(`\`${field}\``)) problems.push(`Upstream.${field}: not named under resolveUpstream`);
    expect(problems).toEqual([]);
  });

  it('"At a glance" lists exactly the top-level options, once each, with their declared types', () => {
    const [header, ...rows] = tables(sections(page, 2).get('At a glance') ?? '')[0] ?? [];
    expect(header?.slice(0, 2)).toEqual(['option', 'type']);
    const listed = rows.map(([option = '', type = '']) => ({ name: /`(\w+)`/.exec(option)?.[1] ?? option, type }));
    expect(listed.map((row) => row.name).sort()).toEqual(options.map((option) => option.name).sort());
    expect(listed.filter((row) => row.type !== `\`${options.find((option) => option.name === row.name)?.declaredType}\``)).toEqual([]);
  });

  it('keeps to the shape of at most 24 top-level options, as the page says', () => {
    expect(page).toContain('at most 24 top-level options');
    expect(options.length).toBeLessThanOrEqual(24);
  });

  it('documents no option the type does not have', () => {
    const known = new Set(options.map((option) => option.name));
    const extra = [...optionSections.keys()].filter((heading) => /^[a-zA-Z]+$/.test(heading) && !known.has(heading));
    expect(extra).toEqual([]);
  });

  it('names, for each old top-level option in "Old names", the new place createGatewayRouter refuses it with', () => {
    const rows = [...(sections(page, 2).get('Old names') ?? '').matchAll(/^\|\s*`([A-Za-z]+)`\s*\|\s*\[`([\w.]+)`\]/gm)].map((row) => [row[1]!, row[2]!] as const);
    expect(rows.map(([old]) => old)).toEqual(expect.arrayContaining(['compressedBodies', 'scheduler', 'afterAuthentication']));
    const problems: string[] = [];
    for (const [old, now] of rows) {
      try {
        createGatewayRouter({ verifyKey: () => null, resolveUpstream: () => null, logger: false, ...{ [old]: {} } });
        problems.push(`${old}: accepted`);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (!(error instanceof GatewayConfigError) || error.code !== 'option_moved' || !message.startsWith(`Option '${old}' is now ${now}.`)) problems.push(`${old}: ${message}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('states each default of DEFAULT_LIMITS in the limits table', () => {
    const body = optionSections.get('limits') ?? '';
    const stated = Object.fromEntries([...body.matchAll(/^\|\s*`(\w+)`\s*\|[^|]*\|([^|]*)\|/gm)].map((row) => [row[1]!, parseDefault(row[2]!, row[1]!)] as const));
    expect(stated).toEqual({ ...DEFAULT_LIMITS });
  });
});
