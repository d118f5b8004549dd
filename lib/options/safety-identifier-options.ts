// The `tenancy.safetyIdentifier` option's type (docs/security.md "Tenant identifier sent to vendors"): the
// secret under which each caller's id becomes the opaque identifier sent to vendors that take one.
// Types only; gateway/safety-identifier-option.ts checks and resolves it.

/**
 * The tenant identifier sent on every upstream call to a vendor that documents a field for it
 * (`safety_identifier`, or `user` where that is the vendor's field): an HMAC-SHA256 of the caller's
 * id under `secret`, never the id itself. Default: off (nothing is sent, callers' fields pass as today).
 * @example safetyIdentifier: { secret: process.env.SAFETY_IDENTIFIER_SECRET! }
 */
export interface SafetyIdentifierOptions {
  /**
   * The HMAC key: at least 32 characters, kept secret and the same on every instance and restart
   * (a new secret gives every tenant a new identifier; keep the old one to read older reports).
   * @example secret: process.env.SAFETY_IDENTIFIER_SECRET
   */
  secret: string;
}
