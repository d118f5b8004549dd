// The link between a route's JSON schema and the TypeScript type of the bodies it accepts. The types
// are written by hand next to their schema (a type computed from the schema reads worse, and ajv's
// JSONSchemaType cannot express the `message` annotation, `anyOf` of a string or a list, or if/then).
// Declaring the schema as an ObjectSchema<T> keeps the two from drifting apart: a field named on one
// side only, or required by the schema but optional in T, fails to compile. The compiled validator
// then narrows `unknown` to `T & OtherFields` (validator.ts).

/** The fields a schema does not name: they pass through to the upstream (vendors add fields), unknown. */
export type OtherFields = Record<string, unknown>;

/** The keys T declares without `?`. */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/**
 * A JSON schema of an object whose accepted values are `T & OtherFields`: `properties` names exactly
 * the fields of T, and `required` lists only fields T requires. What each field's own schema accepts
 * is not compared with its type: keep the two side by side.
 */
export interface ObjectSchema<T extends object> {
  readonly $id: string;
  readonly type: 'object';
  readonly required: readonly RequiredKeys<T>[];
  readonly properties: { readonly [K in keyof T]-?: object };
}
