// `n`, the number of images a request asks for, read as one whole number wherever it arrives (a JSON
// value, a form field): what is charged is what is sent upstream (docs/tenancy-and-billing.md "What is
// charged"). An array, a repeated form field, `n[0]`, a fraction or a number in a string inside JSON is a
// 400 that names the field, never a guess; more than the route allows is a 400, never forwarded as sent.
import { GatewayError } from '../errors/gateway-error.js';

/** Where the value came from: a JSON body keeps numbers as numbers; a form field is always text. */
export type CountSource = 'json' | 'form';

/** The count, or undefined when the field is absent. */
export function readImageCount(value: unknown, name: string, most: number, source: CountSource): number | undefined {
  if (value === undefined) return undefined;
  const count = source === 'form' && typeof value === 'string' && /^\s*\d{1,9}\s*$/.test(value) ? Number(value) : value;
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1) {
    const seen = Array.isArray(value) || (typeof value === 'object' && value !== null) ? 'several values' : JSON.stringify(value).slice(0, 40);
    throw GatewayError.invalidRequest(`${name} must be one whole number from 1 to ${most}, got ${seen}`, name);
  }
  if (count > most) throw GatewayError.invalidRequest(`${name} must be at most ${most}, got ${count}`, name);
  return count;
}
