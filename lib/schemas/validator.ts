// One ajv instance per router, schemas compiled once at creation (fastify's rule), allErrors off (a
// DoS guard: the first error ends validation). Errors become one sentence that names the field.
// A compiled validator is an assertion: after it returns, the body has its schema's type.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { GatewayError } from '../errors/gateway-error.js';
import type { ObjectSchema, OtherFields } from './object-schema.js';

/** Throws the contract §7 400 for the first failure; when it returns, `data` is a T (no casts after it). */
export type Validator<T> = (data: unknown) => asserts data is T;

/** Compiles a schema once; its validator narrows to the schema's hand-written type (object-schema.ts). */
export type SchemaCompiler = <T extends object>(schema: ObjectSchema<T>) => Validator<T & OtherFields>;

export function createSchemaCompiler(): SchemaCompiler {
  // unicode: false: minLength/maxLength count UTF-16 units (String.length, O(1)). ajv's default
  // counts code points in a JS loop over the whole string: ~180 ms for three 14 MB Data URLs, with
  // the event loop held. The effect on the two maxLength limits (negative_prompt, safety_identifier):
  // a character outside the BMP (an emoji) counts as two.
  // ajv lists `unicode` among its deprecated options and warns through its logger on every
  // instance; the option still works (limitLength reads it), so only that one notice is dropped.
  const logger = {
    log: (): void => {},
    warn: (...args: unknown[]): void => {
      if (!String(args[0]).includes('option unicode')) console.warn(...args);
    },
    error: (...args: unknown[]): void => console.error(...args),
  };
  const ajv = new Ajv({
    logger,
    allErrors: false,
    verbose: true,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    coerceTypes: false,
    useDefaults: false,
    unicode: false,
  });
  // `message` is an annotation only: the text used when the node it sits on fails
  ajv.addKeyword({ keyword: 'message', schemaType: 'string' });
  return <T extends object>(schema: ObjectSchema<T>): Validator<T & OtherFields> => {
    const validate: ValidateFunction = ajv.compile(schema);
    return (data: unknown): asserts data is T & OtherFields => {
      if (!validate(data)) {
        const error = validate.errors?.[0];
        throw error ? toGatewayError(error) : GatewayError.invalidRequest('The request body is invalid.');
      }
    };
  };
}

/** `/input/messages/0/content/1` -> `input.messages[0].content[1]`. */
export function fieldPath(instancePath: string, child?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  let path = '';
  for (const part of parts) path += /^\d+$/.test(part) ? `[${part}]` : path === '' ? part : `.${part}`;
  return path;
}

function toGatewayError(error: ErrorObject): GatewayError {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') {
    const missing = String(params.missingProperty);
    const path = fieldPath(error.instancePath, missing);
    // contract §7: exactly this text for a missing model
    if (path === 'model') return GatewayError.modelRequired();
    return GatewayError.invalidRequest(`${path} is required`, path);
  }
  const path = fieldPath(error.instancePath) || 'body';
  if (path === 'model') return GatewayError.modelRequired();
  const custom = typeof error.parentSchema?.message === 'string' ? error.parentSchema.message : undefined;
  if (error.keyword === 'additionalProperties') {
    const field = String(params.additionalProperty);
    const legacy = field === 'images' ? " (the legacy 'images' field is not supported)" : '';
    return GatewayError.invalidRequest(`${path} has an unknown field '${field.slice(0, 100)}'${legacy}${custom ? `; it ${custom}` : ''}`, path);
  }
  return GatewayError.invalidRequest(`${path} ${custom && error.keyword !== 'type' ? custom : describe(error, params)}`, path);
}

function describe(error: ErrorObject, params: Record<string, unknown>): string {
  switch (error.keyword) {
    case 'type':
      return `must be ${article(String(params.type))}, got ${typeName(error.data)}`;
    case 'const':
      return `must be '${String(params.allowedValue)}'`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map((v) => `'${String(v)}'`).join(', ')}`;
    case 'minItems':
      return `must have at least ${String(params.limit)} item(s)`;
    case 'maxItems':
      return `must have at most ${String(params.limit)} item(s)`;
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(params.limit)} characters`;
    case 'minimum':
      return `must be >= ${String(params.limit)}`;
    case 'maximum':
      return `must be <= ${String(params.limit)}`;
    case 'additionalProperties':
      return `has an unknown field '${String(params.additionalProperty)}'`;
    default:
      return `is invalid (${error.message ?? error.keyword})`;
  }
}

function article(type: string): string {
  if (type.includes(',')) return type.split(',').map(article).join(' or ');
  if (type === 'null') return 'null';
  return type === 'integer' || type === 'object' || type === 'array' ? `an ${type}` : `a ${type}`;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value}`;
}
