// POST /api/v3/open/CreateAsset (spec §2.7, §4.2): the Volcengine CreateAsset body, signed upstream
// with the operator's AK/SK; the upstream envelope is answered as is and `Result.Id` recorded as the
// caller's asset, so only the caller can reference `asset://<id>` in its tasks.
import type { RequestHandler } from 'express';
import { callerOf } from '../authenticate.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { asyncHandler } from '../async-handler.js';
import { jsonObjectBody } from '../body/json-body.js';
import { sendJson } from '../send-body.js';
import type { Validator } from '../../schemas/validator.js';
import { requirePublicUrl } from '../../security/public-url.js';
import { createVolcengineAsset } from '../../providers/volcengine-assets.js';
import { requireProvider, resolveUpstreams, withFallback } from '../../gateway/resolve-upstreams.js';
import type { RouteDeps } from '../../gateway/gateway-deps.js';
import { routeStateOf } from '../route-state.js';

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
    // assets have no model; the resolver is asked for route 'assets' with the asset type as the model
    state.model = String(body.AssetType);
    const upstreams = await resolveUpstreams(deps.options, { model: state.model, route: 'assets', caller, req });
    const created = await withFallback(upstreams, deps.options, async (upstream) => {
      requireProvider(upstream, 'ark', 'assets', deps.options);
      state.provider = upstream.provider;
      return createVolcengineAsset({ http: deps.http, signal: state.signal, limits: deps.options.limits }, checked, upstream);
    });
    state.upstreamRequestId = created.requestId;
    await deps.options.store.putAsset({ id: created.assetId, owner: caller.id, createdAt: Date.now() });
    // the store never moves an asset to another owner, so read back whose it is. An id already
    // another tenant's (the upstream repeating an id) is a 502: the caller did nothing wrong, the
    // upstream's answer cannot be handed over, and the envelope (that tenant's id) is not echoed.
    const recorded = await deps.options.store.getAsset(created.assetId);
    if (recorded?.owner !== caller.id) {
      deps.options.logger.warn('CreateAsset returned an asset id recorded for another caller; not handed over', { requestId: created.requestId });
      throw GatewayError.badUpstreamResponse('volcengine', 'the asset id it created is already recorded for another caller', created.requestId);
    }
    sendJson(res, 200, created.envelope);
  });
}
