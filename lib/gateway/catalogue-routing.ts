// Which provider's catalogue rows a routed upstream answers for (docs/models.md): the inbound side's
// view of the registry's rule, so `GET /v1/models` never reaches into the providers itself
// (docs/architecture.md: the inbound side calls the use cases, not the adapters).
import { servesRowsOf as registryServesRowsOf } from '../providers/registry.js';
import type { ProviderName } from '../types.js';

/** True when an upstream of provider `routed` serves the catalogue rows written for `rowProvider`. */
export function servesRowsOf(routed: unknown, rowProvider: ProviderName): boolean {
  return registryServesRowsOf(routed, rowProvider);
}
