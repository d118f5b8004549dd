// Volcengine asset library adapter (upstreams §2.6) behind POST /api/v3/open/CreateAsset: the
// control-plane OpenAPI `?Action=CreateAsset&Version=2024-01-01`, AK/SK-signed (not Bearer), with the
// `{ ResponseMetadata, Result }` envelope. Pure translation functions first, then the one transport.
import { GatewayError } from '../../errors/gateway-error.js';
import type { Upstream } from '../../types.js';
import { isObject, parseJsonBody, stringOr } from '../../json/json-values.js';
import { type CallContext, requestUpstream } from '../call-context.js';
import { classifyUpstreamCode } from '../../errors/status-policy.js';
import { signVolcengineRequest, volcengineQueryString } from '../../transport/volcengine-signer.js';
import type { AssetCapability, CreatedAsset } from '../provider.js';

const PROVIDER = 'volcengine';
const VOLCENGINE_ASSETS_VERSION = '2024-01-01';
/** upstreams §2.6: the OpenAPI service name and the default region of the asset library. */
const VOLCENGINE_ASSETS_SERVICE = 'ark';
const VOLCENGINE_DEFAULT_REGION = 'cn-beijing';

/** Headers the signer or the HTTP client own; an operator's `upstream.headers` may not set them. */
const RESERVED_HEADERS = new Set(['host', 'content-type', 'content-length', 'authorization', 'x-date', 'x-content-sha256']);

/** `assetId` is `Result.Id`, e.g. `asset-20260320120147-pqwhc`. */
export type CreateAssetResult = CreatedAsset;

/** The asset id of a CreateAsset answer; throws the normalized error of a failed one. */
export function readCreateAssetResponse(status: number, body: unknown, headerRequestId?: string): CreateAssetResult {
  const metadata = isObject(body) && isObject(body.ResponseMetadata) ? body.ResponseMetadata : undefined;
  const requestId = stringOr(metadata?.RequestId) ?? headerRequestId;
  // the OpenAPI reports errors in ResponseMetadata.Error; a 2xx carrying one is still a failure
  if (status < 200 || status >= 300 || isObject(metadata?.Error)) throw normalizeVolcengineError(status, body, headerRequestId);
  if (!isObject(body)) throw GatewayError.badUpstreamResponse(PROVIDER, 'the body is not a JSON object', requestId);
  const assetId = isObject(body.Result) ? stringOr(body.Result.Id) : undefined;
  if (!assetId) throw GatewayError.badUpstreamResponse(PROVIDER, 'the CreateAsset answer has no Result.Id', requestId);
  return { assetId, envelope: body, requestId };
}

/** §2.6 envelope `ResponseMetadata.Error {Code, Message}`, or only a status when the body is not one. */
function normalizeVolcengineError(status: number, body: unknown, headerRequestId?: string): GatewayError {
  const metadata = isObject(body) && isObject(body.ResponseMetadata) ? body.ResponseMetadata : undefined;
  const error = isObject(metadata?.Error) ? metadata.Error : undefined;
  const code = stringOr(error?.Code);
  return GatewayError.fromUpstream({
    provider: PROVIDER,
    status,
    upstreamCode: code,
    upstreamMessage: stringOr(error?.Message),
    requestId: stringOr(metadata?.RequestId) ?? headerRequestId,
    kind: classifyUpstreamCode(code) ?? (status >= 200 && status < 300 ? 'server' : undefined),
  });
}

/** Creates one asset in the Volcengine asset library; `upstream` carries the OpenAPI host and AK/SK. */
export async function createVolcengineAsset(call: CallContext, body: Record<string, unknown>, upstream: Upstream): Promise<CreateAssetResult> {
  const { accessKeyId, secretAccessKey } = upstream;
  // the operator's configuration, not the caller's request: a plain 500, nothing sent upstream
  if (!accessKeyId || !secretAccessKey) throw GatewayError.internal();

  const base = new URL(upstream.baseURL);
  // `${baseURL}/?Action=…`: a path on the base (a proxy prefix) is kept
  const pathname = `${base.pathname.replace(/\/+$/, '')}/`;
  const query = { Action: 'CreateAsset', Version: VOLCENGINE_ASSETS_VERSION };
  // §2.6 `CreateAsset {GroupId, URL, AssetType, Name?, ProjectName?}`: the caller's body as given
  // (validation is the route's); other keys pass, as the OpenAPI adds fields
  const payload = JSON.stringify(body);
  const headers = signVolcengineRequest({
    method: 'POST',
    host: base.host,
    // the server decodes the path before it canonicalizes it; the signer encodes it again
    path: decodePath(pathname),
    query,
    headers: operatorHeaders(upstream),
    body: payload,
    accessKeyId,
    secretAccessKey,
    region: upstream.region ?? VOLCENGINE_DEFAULT_REGION,
    service: VOLCENGINE_ASSETS_SERVICE,
    date: new Date(),
  });

  const response = await requestUpstream(call, upstream, { provider: PROVIDER, method: 'POST', url: `${base.origin}${pathname}?${volcengineQueryString(query)}`, headers, body: payload });
  // ResponseMetadata.RequestId is the documented id; these headers are a fallback for non-envelope bodies
  const headerRequestId = response.headers['x-request-id'] ?? response.headers['x-tt-logid'];
  return readCreateAssetResponse(response.status, parseJsonBody(response.body), headerRequestId);
}

function operatorHeaders(upstream: Upstream): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(upstream.headers ?? {})) {
    if (!RESERVED_HEADERS.has(name.toLowerCase())) headers[name] = value;
  }
  return headers;
}

function decodePath(pathname: string): string {
  try {
    return pathname.split('/').map(decodeURIComponent).join('/');
  } catch {
    // a malformed escape in the operator's baseURL: a configuration problem
    throw GatewayError.internal();
  }
}

/** The asset capability the Ark provider declares (the library is Volcengine's control plane). */
export const volcengineAssets: AssetCapability = { serviceName: PROVIDER, create: createVolcengineAsset };
