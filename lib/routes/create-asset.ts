// POST /api/v3/open/CreateAsset (spec §2.7, §4.2): the Volcengine CreateAsset body, signed upstream
// with the operator's AK/SK; the upstream envelope is answered as is and `Result.Id` recorded as the
// caller's asset, so only the caller can reference `asset://<id>` in its tasks. A store at an asset cap
// refuses (records are never forgotten, task-store.ts): 429 for the caller's own cap, 503 for the
// store's, asked before the upstream call when the store can tell (checkAssetCapacity).
import type { RequestHandler } from 'express';
import { callerOf } from '../auth/authenticate.js';
import { ERROR_CODES } from '../errors/error-codes.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Logger } from '../types.js';
import { asyncHandler } from '../http/async-handler.js';
import { jsonObjectBody } from '../http/json-body.js';
import { sendJson } from '../http/send-body.js';
import type { Validator } from '../schemas/validator.js';
import { requirePublicUrl } from '../security/public-url.js';
import { createVolcengineAsset } from '../upstreams/volcengine-assets.js';
import { requireProvider, resolveUpstreams, withFallback } from '../upstreams/resolve-upstreams.js';
import { AssetCapacityError, type AssetRecord } from '../tasks/task-store.js';
import type { RouteDeps } from './route-deps.js';
import { routeStateOf } from './route-state.js';

const ASSET_URL_WORDING = {
  notHttp: () => 'must be an http(s) URL of the media file',
  notPublic: 'names a loopback, private or link-local host; the media file must be publicly reachable',
};

export function createAssetHandler(deps: RouteDeps, validate: Validator): RequestHandler {
  return asyncHandler(async (req, res) => {
    const state = routeStateOf(res);
    const body = jsonObjectBody(req.body);
    validate(body);
    // Volcengine fetches the file from the public internet, as upstreams fetch reference images:
    // the one URL check, and the normalized URL is what is signed and sent
    const url = requirePublicUrl(body.URL, 'URL', { allowPrivate: deps.options.allowPrivateImageUrls }, ASSET_URL_WORDING);
    const checked = url === body.URL ? body : { ...body, URL: url };
    const caller = callerOf(res);
    const { store, logger } = deps.options;
    // before the upstream call: an asset created upstream but refused by the store would exist
    // recorded for nobody (its id is handed to no caller, so no one can use it)
    await refusingAtCapacity(logger, caller.id, async () => store.checkAssetCapacity?.(caller.id));
    // assets have no model; the resolver is asked for route 'assets' with the asset type as the model
    state.model = String(body.AssetType);
    const upstreams = await resolveUpstreams(deps.options, { model: state.model, route: 'assets', caller, req });
    const created = await withFallback(upstreams, deps.options, async (upstream) => {
      requireProvider(upstream, 'ark', 'assets', deps.options);
      state.provider = upstream.provider;
      return createVolcengineAsset({ http: deps.http, signal: state.signal, limits: deps.options.limits }, checked, upstream);
    });
    state.upstreamRequestId = created.requestId;
    const record: AssetRecord = { id: created.assetId, owner: caller.id, createdAt: Date.now() };
    // a store without checkAssetCapacity, or a concurrent CreateAsset that took the last room, lands
    // here: the upstream asset then exists unrecorded and unusable by anyone, since no caller gets its id
    await refusingAtCapacity(logger, caller.id, () => store.putAsset(record), created.requestId);
    // the store never moves an asset to another owner, so read back whose it is. An id already
    // another tenant's (the upstream repeating an id) is a 502: the caller did nothing wrong, the
    // upstream's answer cannot be handed over, and the envelope (that tenant's id) is not echoed.
    const recorded = await store.getAsset(created.assetId);
    if (recorded?.owner !== caller.id) {
      logger.warn('CreateAsset returned an asset id recorded for another caller; not handed over', { requestId: created.requestId });
      throw GatewayError.badUpstreamResponse('volcengine', 'the asset id it created is already recorded for another caller', created.requestId);
    }
    sendJson(res, 200, created.envelope);
  });
}

/** Runs a store call, turning an AssetCapacityError into the caller's answer (logged: the operator may raise a cap). */
async function refusingAtCapacity(logger: Logger, owner: string, storeCall: () => Promise<void>, upstreamRequestId?: string): Promise<void> {
  try {
    await storeCall();
  } catch (error) {
    if (!isAssetCapacityError(error)) throw error;
    const created = upstreamRequestId === undefined ? 'before the upstream call' : 'after the upstream created the asset (left unrecorded)';
    logger.warn(`CreateAsset refused: the ${error.scope === 'owner' ? "caller's" : "store's"} asset cap of ${error.limit} is reached, ${created}`, { owner, upstreamRequestId });
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
