// The tenant identifier in a vendor's request body (docs/security.md "Tenant identifier sent to
// vendors"): each adapter names the field its vendor documents for the endpoint (`safety_identifier`,
// `user`, or none), and the body carries the gateway's identifier there and no caller-sent one. A
// caller's `user` or `safety_identifier` could name another tenant (or an end user's e-mail), so with
// the option on the gateway's value replaces it; with the option off bodies pass as they came.
import type { SafetyTag } from '../security/safety-identifier.js';

/** The body field a vendor documents for the identifier of the end user behind a request. */
export type TenantField = 'safety_identifier' | 'user';

/** The fields a caller could set to identify someone to the vendor: dropped when the gateway sets its own. */
export const TENANT_FIELDS: readonly TenantField[] = ['safety_identifier', 'user'];

/**
 * The JSON body with the gateway's identifier in `field` (none when the vendor documents no field)
 * and no caller-sent identifier field; the body itself when the option is off. Copies the top level only.
 */
export function withTenantField(body: Record<string, unknown>, safety: SafetyTag | undefined, field: TenantField | undefined): Record<string, unknown> {
  if (!safety) return body;
  const { safety_identifier: _identifier, user: _user, ...rest } = body;
  if (field) rest[field] = safety.identifier;
  return rest;
}
