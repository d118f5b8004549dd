// The values the spans and metrics share (telemetry.ts): bounded model names, attribute objects
// without absent values, the outcome of a status and the `error.type` of an error.
import { GatewayError } from '../errors/gateway-error.js';
import type { OtelAttributes, OtelSpan } from './otel-api.js';

/** The trace id of a span that belongs to no trace (the API's non-recording, non-propagating span). */
export const INVALID_TRACE_ID = '00000000000000000000000000000000';
/** Longest model name put on a span or a metric: the caller's body sets it, with no limit of its own. */
const MAX_MODEL_CHARS = 256;

/** The attributes without the absent ones: an exporter would write an absent value as an empty label. */
export function defined(attributes: OtelAttributes): OtelAttributes {
  for (const key of Object.keys(attributes)) if (attributes[key] === undefined) delete attributes[key];
  return attributes;
}

export function setAttributes(span: OtelSpan, attributes: OtelAttributes): void {
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) span.setAttribute(key, value);
}

/** A model name cut to MAX_MODEL_CHARS (a span attribute, a span name, a metric label). */
export function clip<T extends string | undefined>(model: T): T {
  return (model !== undefined && model.length > MAX_MODEL_CHARS ? model.slice(0, MAX_MODEL_CHARS) : model) as T;
}

export function outcomeOf(status: number, errorCode: string | undefined): string {
  if (status === 499) return 'client_closed';
  // a 2xx with an error code: the response had begun (a stream) when it failed; it was cut, not a success
  if (status >= 500 || (status < 400 && errorCode !== undefined)) return 'server_error';
  if (status >= 400) return 'client_error';
  return 'success';
}

/** `error.type`: the gateway's error code (low cardinality, never a message: messages may quote an answer). */
export function errorTypeOf(error: unknown): string {
  if (error instanceof GatewayError) return error.code;
  if (error instanceof Error && error.name !== 'Error') return error.name;
  return '_OTHER';
}
