// Which catalogue row a routed request follows (docs/models.md "Which row a request follows"): the
// inbound side's view of the registry's rule, so `GET /v1/models` never reaches into the providers
// itself (docs/architecture.md: the inbound side calls the use cases, not the adapters). The
// catalogue is keyed by names, but what a model can do is the upstream model's: a host's own name for
// a vendor model follows that model's row, without a `models` entry that copies it.
import type { ModelCatalogue } from '../../models/model-catalogue.js';
import type { ModelEntry } from '../../options/model-catalogue.js';
import { servesRowsOf as registryServesRowsOf } from '../../providers/registry.js';
import type { ProviderName, Upstream } from '../../types.js';

/** True when an upstream of provider `routed` serves the catalogue rows written for `rowProvider`. */
export function servesRowsOf(routed: unknown, rowProvider: ProviderName): boolean {
  return registryServesRowsOf(routed, rowProvider);
}

/**
 * The row a request for `model` follows once the resolver chose `upstream`:
 * 1. the caller-facing entry of the caller's name (the host's `models` entry, a contract family);
 * 2. else the row of the upstream model (`upstream.model`) when it is written for the routed provider
 *    (or for none);
 * 3. else the row of the caller's name, if any (a name the catalogue does not know passes through).
 * Two cached map lookups: nothing on the hot path beyond them.
 */
export function rowFor(catalogue: ModelCatalogue, model: string, upstream: Pick<Upstream, 'provider' | 'model'> | undefined): ModelEntry | undefined {
  const named = catalogue.named(model);
  if (named) return named;
  const upstreamModel = upstream?.model;
  if (upstreamModel !== undefined && upstreamModel !== model) {
    const row = catalogue.find(upstreamModel);
    if (row && (row.provider === undefined || servesRowsOf(upstream!.provider, row.provider))) return row;
  }
  return catalogue.find(model);
}
