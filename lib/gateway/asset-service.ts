// Creating an asset (contract §2.7, §4.2): the upstream asset library of the provider the resolver names
// creates it, and the gateway records it as the caller's, so only the caller can reference
// `asset://<id>` in its tasks. The body has been validated and its URL checked by the route. A store
// at an asset cap refuses (records are never forgotten, tasks/task-store.ts): 429 for the caller's own
// cap, 503 for the store's, asked before the upstream call when the store can tell (checkAssetCapacity).
import { ERROR_CODES } from '../errors/error-codes.js';
import { GatewayError } from '../errors/gateway-error.js';
import { requireCapability } from '../providers/registry.js';
import type { CreateAssetBody } from '../schemas/forward-schemas.js';
import type { Logger } from '../options/host-hooks.js';
import { AssetCapacityError, type AssetRecord } from '../stores/tasks/task-store.js';
import { withFallback } from './routing/fallback.js';
import type { GatewayDeps } from './gateway-deps.js';
import { resolveUpstreams } from './routing/resolve-upstreams.js';
import { withCharge } from './tenancy/with-charge.js';
import { type Outcome, type Usage, type UseCaseRequest, attempting, usageFor } from './use-case.js';

/**
 * Creates the asset upstream and answers the upstream envelope, once the asset is recorded as the
 * caller's. `body` was validated by the route (createAssetSchema), its URL checked.
 */
export function createAsset(deps: GatewayDeps, request: UseCaseRequest, body: CreateAssetBody): Promise<Outcome<unknown>> {
  // assets have no model; the resolver is asked for route 'assets' with the asset type as the model
  const usage = usageFor(body.AssetType);
  // quotas after validation, before the upstream call
  return withCharge(deps.quotas, request.caller, { requests: 1 }, usage, () => createRecordedAsset(deps, usage, request, body));
}

async function createRecordedAsset(deps: GatewayDeps, usage: Usage, request: UseCaseRequest, body: CreateAssetBody): Promise<unknown> {
  const { caller } = request;
  const { store, logger } = deps.options;
  // before the upstream call: an asset created upstream but refused by the store would exist
  // recorded for nobody (its id is handed to no caller, so no one can use it)
  await refusingAtCapacity(logger, caller.id, async () => store.checkAssetCapacity?.(caller.id));
  const upstreams = await resolveUpstreams(deps.options, { model: usage.model, route: 'assets', caller, req: request.hostRequest });
  const info = { route: 'assets' as const, model: usage.model, tenant: caller.id, request: request.hostRequest };
  const created = await withFallback(upstreams, deps.options, info, { usage, idOf: (answer: { requestId?: string }) => answer.requestId }, async (upstream) => {
    const assets = requireCapability(upstream, 'assets', 'assets', deps.options.logger);
    attempting(usage, upstream.provider, upstream.model);
    const call = { http: deps.http, signal: request.cancel.clientGone, limits: deps.options.limits };
    return { ...(await assets.create(call, body, upstream)), serviceName: assets.serviceName };
  });
  usage.upstreamRequestId = created.requestId;
  const asset: AssetRecord = { id: created.assetId, owner: caller.id, createdAt: Date.now() };
  // a store without checkAssetCapacity, or a concurrent CreateAsset that took the last room, lands
  // here: the upstream asset then exists unrecorded and unusable by anyone, since no caller gets its id
  await refusingAtCapacity(logger, caller.id, () => store.putAsset(asset), created.requestId);
  // the store never moves an asset to another owner, so read back whose it is. An id already
  // another tenant's (the upstream repeating an id) is a 502: the caller did nothing wrong, the
  // upstream's answer cannot be handed over, and the envelope (that tenant's id) is not echoed.
  const recorded = await deps.options.store.getAsset(created.assetId);
  if (recorded?.owner !== caller.id) {
    deps.options.logger.warn({ requestId: created.requestId }, 'CreateAsset returned an asset id recorded for another caller; not handed over');
    throw GatewayError.badUpstreamResponse(created.serviceName, 'the asset id it created is already recorded for another caller', created.requestId);
  }
  return created.envelope;
}

/** Runs a store call, turning an AssetCapacityError into the caller's answer (logged: the operator may raise a cap). */
async function refusingAtCapacity(logger: Logger, owner: string, storeCall: () => Promise<void>, upstreamRequestId?: string): Promise<void> {
  try {
    await storeCall();
  } catch (error) {
    if (!isAssetCapacityError(error)) throw error;
    const created = upstreamRequestId === undefined ? 'before the upstream call' : 'after the upstream created the asset (left unrecorded)';
    logger.warn({ owner, upstreamRequestId }, `CreateAsset refused: the ${error.scope === 'owner' ? "caller's" : "store's"} asset cap of ${error.limit} is reached, ${created}`);
    if (error.scope === 'owner') {
      // no Retry-After: records are never forgotten, so waiting does not make room
      throw new GatewayError({ status: 429, code: ERROR_CODES.rateLimitExceeded, message: `this API key has recorded the most assets allowed: ${error.limit}` });
    }
    throw new GatewayError({
      status: 503,
      // the gateway's own store is full, not an upstream: server_error, not upstream_error
      type: 'server_error',
      code: ERROR_CODES.assetStoreFull,
      message: `The gateway's asset store is full (${error.limit} assets recorded); new assets cannot be recorded until the operator raises the limit.`,
    });
  }
}

// instanceof, or the same shape from another copy of the package (a host store built against the CJS
// build while the gateway runs the ESM one)
function isAssetCapacityError(error: unknown): error is AssetCapacityError {
  if (error instanceof AssetCapacityError) return true;
  if (!(error instanceof Error) || error.name !== 'AssetCapacityError') return false;
  const { scope, limit } = error as Partial<AssetCapacityError>;
  return (scope === 'owner' || scope === 'store') && typeof limit === 'number';
}
