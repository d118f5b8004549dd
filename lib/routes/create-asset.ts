// POST /api/v3/open/CreateAsset (spec §2.7, §4.2): the Volcengine CreateAsset body, signed upstream
// with the operator's AK/SK; the upstream envelope is answered as is and `Result.Id` recorded as the
// caller's asset, so only the caller can reference `asset://<id>` in its tasks.
import type { RequestHandler } from 'express';
import { callerOf } from '../auth/authenticate.js';
import { GatewayError } from '../errors/gateway-error.js';
import { asyncHandler } from '../http/async-handler.js';
import { jsonObjectBody } from '../http/json-body.js';
import { sendJson } from '../http/send-body.js';
import type { Validator } from '../schemas/validator.js';
import { isNonPublicHost } from '../security/public-host.js';
import { createVolcengineAsset } from '../upstreams/volcengine-assets.js';
import { requireProvider, resolveUpstreams, withFallback } from '../upstreams/resolve-upstreams.js';
import type { RouteDeps } from './route-deps.js';
import { routeStateOf } from './route-state.js';

export function createAssetHandler(deps: RouteDeps, validate: Validator): RequestHandler {
  return asyncHandler(async (req, res) => {
    const state = routeStateOf(res);
    const body = jsonObjectBody(req.body);
    validate(body);
    // Volcengine fetches the file from the public internet, as upstreams fetch reference images
    let url: URL;
    try {
      url = new URL(String(body.URL));
    } catch {
      throw GatewayError.invalidRequest('URL must be an http(s) URL of the media file', 'URL');
    }
    if (!deps.options.allowPrivateImageUrls && isNonPublicHost(url.hostname)) {
      throw GatewayError.invalidRequest('URL names a loopback, private or link-local host; the media file must be publicly reachable', 'URL');
    }
    const caller = callerOf(res);
    // assets have no model; the resolver is asked for route 'assets' with the asset type as the model
    state.model = String(body.AssetType);
    const upstreams = await resolveUpstreams(deps.options, { model: state.model, route: 'assets', caller, req });
    const created = await withFallback(upstreams, deps.options, async (upstream) => {
      requireProvider(upstream, 'ark', 'assets', deps.options);
      state.provider = upstream.provider;
      return createVolcengineAsset({ http: deps.http, signal: state.signal, limits: deps.options.limits }, body, upstream);
    });
    state.upstreamRequestId = created.requestId;
    await deps.options.store.putAsset({ id: created.assetId, owner: caller.id, createdAt: Date.now() });
    sendJson(res, 200, created.envelope);
  });
}
