// OpenAI's published OpenAPI document as validators, for the contract check (spec/contract/openai-openapi.spec.ts,
// docs/contributing.md "The test suite"): the pinned copy in spec/fixtures/openai-openapi.json, made by
// scripts/openai-openapi-fixture.ts, read from disk (the suite never fetches). OpenAPI 3.1 schemas are
// JSON Schema 2020-12, so ajv's 2020 dialect compiles them, configured for the document's quirks:
// - `strict: false`: the schemas carry OpenAPI's and OpenAI's own keywords (`x-oaiMeta`, `x-stainless-const`,
//   `x-oaiTypeLabel`, `example`, `discriminator`), annotations that ajv's strict mode refuses as unknown.
// - `nullable: true`, OpenAPI 3.0's spelling left in the 3.1 document, is rewritten to 3.1's own
//   `anyOf: [schema, { type: 'null' }]` before compiling: ajv reads `nullable` only beside `type` (and
//   throws on `anyOf` with `nullable`), and a nullable `enum` would still refuse `null`.
// - `discriminator` is left to the `anyOf` it sits on: OpenAI puts it on `anyOf` without `mapping`,
//   ajv's discriminator takes only `oneOf`; the branches themselves are checked either way.
// - `validateFormats: false`: the formats (`unixtime`, `binary`, `uri`) describe a value, and ajv ships
//   none of them; the types they sit on are checked.
// - `$recursiveRef` (JSON Schema 2019-09, in one nested filter of the Responses tools) is not 2020-12 and
//   is ignored: only that nested filter goes unchecked.
// A multipart form is checked with `coerceTypes`: every form value is text, and the document's types are
// what the text means (`n` "2" is the integer 2, `stream` "true" the boolean).
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

const FIXTURE = new URL('../fixtures/openai-openapi.json', import.meta.url);
const DOCUMENT_ID = 'openai-openapi.json';

/** Where the pinned copy came from (written by scripts/openai-openapi-fixture.ts). */
export interface PinnedSource {
  repository: string;
  path: string;
  commit: string;
  openapi: string;
  version: string;
}

interface Fixture {
  source: PinnedSource;
  roots: string[];
  components: { schemas: Record<string, unknown> };
}

// the keywords whose values are maps of schemas by name, not schemas: their keys are never keywords
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/** A schema with every OpenAPI 3.0 `nullable: true` spelled as 3.1 does: `anyOf` with `{ type: 'null' }`. */
function withNullAsType(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withNullAsType);
  if (typeof schema !== 'object' || schema === null) return schema;
  const { nullable, ...rest } = schema as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    copy[key] =
      SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null ? Object.fromEntries(Object.entries(value).map(([name, item]) => [name, withNullAsType(item)])) : withNullAsType(value);
  }
  return nullable === true ? { anyOf: [copy, { type: 'null' }] } : copy;
}

function errorText(error: ErrorObject): string {
  const where = error.instancePath === '' ? '(body)' : error.instancePath;
  const allowed = error.keyword === 'enum' ? ` ${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)}` : '';
  return `${where} ${error.message ?? error.keyword}${allowed}`;
}

export interface OpenAIDocument {
  source: PinnedSource;
  /** The problems of `value` against the document's schema `name` (components.schemas), `[]` when it conforms. */
  problems(name: string, value: unknown): string[];
  /** The same for the fields of a multipart form, each value's text read as the schema's type. */
  formProblems(name: string, fields: Record<string, unknown>): string[];
  /** ajv's own errors, for a spec that asserts exactly which rule a body breaks. */
  errors(name: string, value: unknown): ErrorObject[];
  /** The document's own example of schema `name` (its `x-oaiMeta.example`), parsed: what OpenAI answers. */
  example(name: string): Record<string, unknown>;
}

/** Loads the pinned copy once per call; each schema is compiled on first use. */
export function openAIDocument(): OpenAIDocument {
  const fixture = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Fixture;
  const document = withNullAsType({ components: fixture.components }) as Record<string, unknown>;
  const validators = (coerceTypes: boolean) => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, coerceTypes });
    ajv.addSchema(document, DOCUMENT_ID);
    const compiled = new Map<string, ValidateFunction>();
    return (name: string): ValidateFunction => {
      if (!(name in fixture.components.schemas)) throw new Error(`the pinned document has no schema ${name}: add it to ROOTS in scripts/openai-openapi-fixture.ts`);
      let validate = compiled.get(name);
      if (!validate) {
        validate = ajv.getSchema(`${DOCUMENT_ID}#/components/schemas/${name}`)!;
        compiled.set(name, validate);
      }
      return validate;
    };
  };
  const json = validators(false);
  const form = validators(true);
  const errors = (name: string, value: unknown): ErrorObject[] => {
    const validate = json(name);
    return validate(value) ? [] : [...(validate.errors ?? [])];
  };
  return {
    source: fixture.source,
    errors,
    example: (name) => {
      const meta = (fixture.components.schemas[name] as { 'x-oaiMeta'?: { example?: string } } | undefined)?.['x-oaiMeta'];
      if (typeof meta?.example !== 'string') throw new Error(`the pinned document has no example of ${name}`);
      return JSON.parse(meta.example) as Record<string, unknown>;
    },
    problems: (name, value) => errors(name, value).map(errorText),
    formProblems: (name, fields) => {
      const validate = form(name);
      // coerceTypes writes the read values into the object it checks: a copy, so the caller's stays text
      return validate(structuredClone(fields)) ? [] : (validate.errors ?? []).map(errorText);
    },
  };
}
