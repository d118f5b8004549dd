// Writes spec/fixtures/openai-openapi.json, the pinned copy of OpenAI's published OpenAPI document that
// the contract check reads (spec/contract/openai-openapi.spec.ts, docs/contributing.md "The test
// suite"). The whole document is over 3 MB; the check needs a few dozen of its schemas, so the copy
// holds the schemas named in ROOTS and every schema they reference, each as published, with the
// document's source (repository, commit, version) beside them. The suite never fetches: moving the pin
// is running this by hand on a newer openapi.json of openai/openai-openapi, then the check.
//
//   npx tsx scripts/openai-openapi-fixture.ts <path of openapi.json> <commit of that file>
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The schemas the check validates against; what they reference comes along. */
const ROOTS = [
  'Error',
  'ErrorResponse',
  'ImagesResponse',
  'ImageGenStreamEvent',
  'ImageEditStreamEvent',
  'CreateImageRequest',
  'CreateImageEditRequest',
  'CreateChatCompletionRequest',
  'CreateChatCompletionResponse',
  'CreateChatCompletionStreamResponse',
  'CreateResponse',
  'Response',
  'ResponseErrorEvent',
] as const;

const REPOSITORY = 'openai/openai-openapi';
const SCHEMA_REF = '#/components/schemas/';
const OUTPUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'spec', 'fixtures', 'openai-openapi.json');

interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  components: { schemas: Record<string, unknown> };
}

/** Every `$ref` inside a value, in the order met. */
function refsOf(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsOf(item, found);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') found.push(item);
      else refsOf(item, found);
    }
  }
  return found;
}

/** The names of ROOTS and of every schema reachable from them. */
function reachable(schemas: Record<string, unknown>): Set<string> {
  const seen = new Set<string>();
  const pending: string[] = [...ROOTS];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (seen.has(name)) continue;
    if (!(name in schemas)) throw new Error(`the document has no schema ${name}`);
    seen.add(name);
    for (const ref of refsOf(schemas[name])) {
      // a schema refers to itself or its siblings only; anything else would be lost in the copy
      if (!ref.startsWith(SCHEMA_REF)) throw new Error(`${name} refers to ${ref}, outside ${SCHEMA_REF}`);
      pending.push(ref.slice(SCHEMA_REF.length));
    }
  }
  return seen;
}

function main(): void {
  const [source, commit] = process.argv.slice(2);
  if (!source || !commit || !/^[0-9a-f]{40}$/.test(commit)) {
    console.error('usage: npx tsx scripts/openai-openapi-fixture.ts <path of openapi.json> <40-hex commit of that file>');
    process.exit(2);
  }
  const document = JSON.parse(readFileSync(source, 'utf8')) as OpenApiDocument;
  const kept = reachable(document.components.schemas);
  // the document's own order, so a newer pin diffs schema by schema
  const schemas = Object.fromEntries(Object.entries(document.components.schemas).filter(([name]) => kept.has(name)));
  const fixture = {
    $comment: `Part of OpenAI's OpenAPI document (${REPOSITORY}, openapi.json), made by scripts/openai-openapi-fixture.ts; do not edit by hand.`,
    source: { repository: REPOSITORY, path: 'openapi.json', commit, openapi: document.openapi, version: document.info.version },
    roots: ROOTS,
    components: { schemas },
  };
  writeFileSync(OUTPUT, `${JSON.stringify(fixture, null, 1)}\n`);
  console.log(`${path.relative(process.cwd(), OUTPUT)}: ${kept.size} schemas of ${Object.keys(document.components.schemas).length}, OpenAPI ${document.openapi}, version ${document.info.version}`);
}

main();
