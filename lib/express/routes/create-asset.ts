// POST /api/v3/open/CreateAsset (contract §2.7, §4.2): the CreateAsset body validated and its media URL
// checked here; the asset service (gateway/asset-service.ts) creates and records it, and the upstream
// envelope is answered as is.
import type { RequestHandler } from 'express';
import { routeHandler } from '../route-handler.js';
import { jsonObjectBody } from '../body/json-body.js';
import { sendJson } from '../answers/send-body.js';
import type { CreateAssetBody } from '../../schemas/forward-schemas.js';
import type { Validator } from '../../schemas/validator.js';
import { requirePublicUrl } from '../../security/public-url.js';
import { createAsset } from '../../gateway/asset-service.js';
import type { GatewayDeps } from '../../gateway/gateway-deps.js';
import { UseCaseView } from '../request-base.js';

const ASSET_URL_WORDING = {
  notHttp: () => 'must be an http(s) URL of the media file',
  notPublic: 'names a loopback, private or link-local host; the media file must be publicly reachable',
};

export function createAssetHandler(deps: GatewayDeps, validate: Validator<CreateAssetBody>): RequestHandler {
  return routeHandler('createAsset', async (context) => {
    const body = jsonObjectBody(context.req.body);
    validate(body);
    // the asset library fetches the file from the public internet, as upstreams fetch reference images:
    // the one URL check, and the normalized URL is what is signed and sent
    const url = requirePublicUrl(body.URL, 'URL', { allowPrivate: deps.options.allowPrivateImageUrls }, ASSET_URL_WORDING);
    const checked = url === body.URL ? body : { ...body, URL: url };
    const outcome = await createAsset(deps, new UseCaseView(context), checked);
    context.recordUsage(outcome.usage);
    if (!outcome.ok) throw outcome.error;
    sendJson(context, 200, outcome.answer);
  });
}
