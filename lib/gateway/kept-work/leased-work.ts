// What a running Idempotency-Key request's lease says of its work (docs/tenancy-and-billing.md
// "Retries"): the facts another instance books it from if this one stops (lapsed-keys.ts). It starts as
// what the body says, and is brought up to date from the use case's usage as it runs: what it charged,
// and whether its upstream call started. JSON only; never a key.
import type { LeasedWork } from '../../stores/idempotency/idempotency-store.js';
import type { Caller, RouteName } from '../../types.js';
import { snapshotCaller } from '../tasks/caller-snapshot.js';
import type { Usage } from '../use-case.js';

/** The work as the request begins: who asks (its caller's snapshot, without the key it sent), where, for which model. */
export function leasedWorkOf(caller: Caller, bearerKey: string, route: RouteName, model: string): LeasedWork {
  return { caller: snapshotCaller(caller, bearerKey).caller, route, model, startedAt: Date.now() };
}

/** The work as the use case has it so far: what it charged, and whether its upstream call started. */
export function trackedWork(work: LeasedWork, usage: Usage): LeasedWork {
  return {
    ...work,
    model: usage.model || work.model,
    ...(usage.provider !== undefined ? { provider: usage.provider } : {}),
    ...(usage.upstreamModel !== undefined ? { upstreamModel: usage.upstreamModel } : {}),
    ...(usage.imagesAsked !== undefined ? { imagesAsked: usage.imagesAsked } : {}),
    ...(usage.sizeAsked !== undefined ? { sizeAsked: usage.sizeAsked } : {}),
    ...(usage.imageQuality !== undefined ? { quality: usage.imageQuality } : {}),
    ...(usage.attempted ? { attempted: true } : {}),
    ...(usage.charged !== undefined ? { charged: usage.charged } : {}),
  };
}
