// Creating an asset (spec §2.7, §4.2): the upstream asset library of the provider the resolver names
// creates it, and the gateway records it as the caller's, so only the caller can reference
// `asset://<id>` in its tasks. The body has been validated and its URL checked by the route.
import type { Request } from 'express';
import { GatewayError } from '../errors/gateway-error.js';
import { requireCapability } from '../providers/registry.js';
import type { Caller } from '../types.js';
import type { CallRecord } from './call-record.js';
import { withFallback } from './fallback.js';
import type { GatewayDeps } from './gateway-deps.js';
import { resolveUpstreams } from './resolve-upstreams.js';

export interface CreateAssetInput {
  caller: Caller;
  body: Record<string, unknown>;
  req: Request;
}

/** Creates the asset upstream and answers the upstream envelope, once the asset is recorded as the caller's. */
export async function createAsset(deps: GatewayDeps, record: CallRecord, input: CreateAssetInput): Promise<unknown> {
  const { caller, body } = input;
  // assets have no model; the resolver is asked for route 'assets' with the asset type as the model
  record.model = String(body.AssetType);
  const upstreams = await resolveUpstreams(deps.options, { model: record.model, route: 'assets', caller, req: input.req });
  const created = await withFallback(upstreams, deps.options, async (upstream) => {
    const assets = requireCapability(upstream, 'assets', 'assets', deps.options.logger);
    record.provider = upstream.provider;
    const call = { http: deps.http, signal: record.signal, limits: deps.options.limits };
    return { ...(await assets.create(call, body, upstream)), serviceName: assets.serviceName };
  });
  record.upstreamRequestId = created.requestId;
  await deps.options.store.putAsset({ id: created.assetId, owner: caller.id, createdAt: Date.now() });
  // the store never moves an asset to another owner, so read back whose it is. An id already
  // another tenant's (the upstream repeating an id) is a 502: the caller did nothing wrong, the
  // upstream's answer cannot be handed over, and the envelope (that tenant's id) is not echoed.
  const recorded = await deps.options.store.getAsset(created.assetId);
  if (recorded?.owner !== caller.id) {
    deps.options.logger.warn('CreateAsset returned an asset id recorded for another caller; not handed over', { requestId: created.requestId });
    throw GatewayError.badUpstreamResponse(created.serviceName, 'the asset id it created is already recorded for another caller', created.requestId);
  }
  return created.envelope;
}
