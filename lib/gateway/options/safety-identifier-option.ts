// Resolves the `tenancy.safetyIdentifier` option (docs/security.md "Tenant identifier sent to vendors"):
// checked once at creation, then one SafetyIdentifiers per gateway, which every call context of a
// caller reads its tag from.
import { GatewayConfigError } from '../../errors/config-error.js';
import type { SafetyIdentifierOptions } from '../../options/safety-identifier-options.js';
import { SafetyIdentifiers } from '../../security/safety-identifier.js';

const MIN_SECRET = 32;
const EXAMPLE = 'tenancy: { safetyIdentifier: { secret: process.env.SAFETY_IDENTIFIER_SECRET } } // openssl rand -hex 32';

/** The gateway's identifiers, or undefined when the option is absent or `false`. */
export function resolveSafetyIdentifier(option: SafetyIdentifierOptions | false | undefined): SafetyIdentifiers | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === null || typeof option !== 'object') throw new GatewayConfigError('safety_identifier_type', 'options.tenancy.safetyIdentifier must be an object { secret } or false.', EXAMPLE);
  for (const key of Object.keys(option)) {
    if (key !== 'secret') throw new GatewayConfigError('safety_identifier_unknown', `Unknown tenancy.safetyIdentifier option '${key}'.`, 'use only: secret.');
  }
  if (typeof option.secret !== 'string' || option.secret.length < MIN_SECRET) {
    throw new GatewayConfigError('safety_identifier_secret', `tenancy.safetyIdentifier.secret must be a string of at least ${MIN_SECRET} characters.`, EXAMPLE);
  }
  return new SafetyIdentifiers(option.secret);
}
