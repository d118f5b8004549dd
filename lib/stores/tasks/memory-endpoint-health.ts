// Endpoint health in memoryTaskStore (docs/video-tasks-and-callbacks.md "Endpoints that heal"): one map
// by tenant and endpoint, copies in and out. An endpoint is forgotten `keepMs` after its last attempt (a
// forgotten one is healthy): a disabled one as its paused deliveries are, so none pile up.
import { clock } from '../../clock.js';
import { type EndpointHealth, type EndpointHealthStore, type EndpointRef, disableReason } from './endpoint-records.js';

type Kept = EndpointHealth & { expiresAt: number };

export function memoryEndpointHealth(): EndpointHealthStore {
  const endpoints = new Map<string, Kept>();
  const keyOf = (endpoint: EndpointRef): string => `${endpoint.tenant}\n${endpoint.url}`;
  const view = ({ expiresAt: _expiresAt, ...health }: Kept): EndpointHealth => structuredClone(health);
  const live = (endpoint: EndpointRef): Kept | undefined => {
    const kept = endpoints.get(keyOf(endpoint));
    if (kept && kept.expiresAt <= clock().now()) {
      endpoints.delete(keyOf(endpoint));
      return undefined;
    }
    return kept;
  };
  const prune = (): void => {
    const now = clock().now();
    for (const [key, kept] of endpoints) if (kept.expiresAt <= now) endpoints.delete(key);
  };
  let writes = 0;
  return {
    async recordEndpointAttempt(endpoint, outcome, rule) {
      // now and then, so endpoints nobody calls any more do not pile up
      if ((writes += 1) % 1000 === 0) prune();
      const kept: Kept = live(endpoint) ?? { tenant: endpoint.tenant, url: endpoint.url, disabled: false, failures: 0, expiresAt: 0 };
      let disabledNow = false;
      if (outcome.ok) {
        kept.failures = 0;
        kept.lastSuccessAt = outcome.at;
        delete kept.failingSince;
      } else {
        kept.failures += 1;
        kept.failingSince ??= outcome.at;
        const reason = kept.disabled ? undefined : disableReason(kept, outcome.at, rule);
        if (reason) {
          Object.assign(kept, { disabled: true, disabledAt: outcome.at, reason });
          disabledNow = true;
        }
      }
      kept.expiresAt = clock().now() + rule.keepMs;
      endpoints.set(keyOf(endpoint), kept);
      return { health: view(kept), disabledNow };
    },
    async getEndpoint(endpoint) {
      const kept = live(endpoint);
      return kept ? view(kept) : undefined;
    },
    async enableEndpoint(endpoint, rule) {
      const kept = live(endpoint);
      if (!kept?.disabled) return false;
      endpoints.set(keyOf(endpoint), {
        tenant: kept.tenant,
        url: kept.url,
        disabled: false,
        failures: 0,
        ...(kept.lastSuccessAt !== undefined ? { lastSuccessAt: kept.lastSuccessAt } : {}),
        expiresAt: clock().now() + rule.keepMs,
      });
      return true;
    },
    async listDisabledEndpoints(tenant) {
      prune();
      return [...endpoints.values()].filter((kept) => kept.disabled && (tenant === undefined || kept.tenant === tenant)).map(view);
    },
  };
}
