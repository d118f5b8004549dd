// GatewayError.is: the registered brand that holds across copies of the package (undici's habit). The
// built ESM and CommonJS bundles side by side are package-build.spec.ts's; here the brand itself.
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../lib/errors/error-codes.js';
import { GatewayError } from '../../lib/errors/gateway-error.js';
import { QuotaExceededError } from '../../lib/errors/quota-exceeded-error.js';

/** What a GatewayError of another copy of the package looks like from here: another class, the same registered brand. */
function fromAnotherCopy(): Error {
  class OtherGatewayError extends Error {}
  Object.defineProperty(OtherGatewayError.prototype, Symbol.for('express-image-gateway.GatewayError'), { value: true });
  return new OtherGatewayError('made elsewhere');
}

describe('GatewayError.is', () => {
  it.each<{ name: string; value: unknown; expected: boolean }>([
    { name: 'a GatewayError', value: GatewayError.permissionDenied('not on your plan'), expected: true },
    { name: 'a GatewayError from its constructor', value: new GatewayError({ status: 418, code: ERROR_CODES.invalidRequest, message: 'm' }), expected: true },
    { name: 'a subclass (QuotaExceededError)', value: new QuotaExceededError('slow down', { name: 'images', quota: 1, remaining: 0, resetSeconds: 60 }), expected: true },
    { name: 'a GatewayError of another copy of the package', value: fromAnotherCopy(), expected: true },
    { name: 'a plain Error', value: new Error('boom'), expected: false },
    { name: 'a look-alike object', value: { status: 403, code: 'permission_denied', message: 'm', toJSON: () => ({}) }, expected: false },
    { name: 'a brand that is not true', value: { [Symbol.for('express-image-gateway.GatewayError')]: 'yes' }, expected: false },
    { name: 'a brand under an unregistered symbol', value: { [Symbol('express-image-gateway.GatewayError')]: true }, expected: false },
    { name: 'null', value: null, expected: false },
    { name: 'undefined', value: undefined, expected: false },
    { name: 'a string', value: 'GatewayError', expected: false },
  ])('$name: $expected', ({ value, expected }) => {
    expect(GatewayError.is(value)).toBe(expected);
  });

  it('the brand is on the prototype: an error has no own symbol key, and its JSON is the contract object', () => {
    const error = GatewayError.permissionDenied('not on your plan');
    expect(Object.getOwnPropertySymbols(error)).toEqual([]);
    expect(JSON.parse(JSON.stringify(error))).toEqual({ error: { message: 'not on your plan', type: 'permission_error', code: 'permission_denied', param: null } });
  });
});
