// Azure OpenAI adapter (docs/providers/azure.md): OpenAI's Images wire format (upstreams §4) at Azure's
// URLs, with Azure's credentials. The passthrough machinery is openai.ts's; only the URL rule, the
// credential headers and the error reading are Azure's, as openai-node's AzureOpenAI client builds them:
// the v1 form `{endpoint}/openai/v1{path}`, or with `apiVersion` the deployment form
// `{endpoint}/openai/deployments/{deployment}{path}?api-version=…` (edits included), and the key in the
// `api-key` header or a host's Entra ID token as `Authorization: Bearer`.
import { GatewayError } from '../../errors/gateway-error.js';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { classifyUpstreamCode } from '../../errors/status-policy.js';
import { isObject, stringOr } from '../../json/json-values.js';
import type { Upstream } from '../../types.js';
import { normalizeOpenAIError, openAICompatibleApi, openAITenantField } from './openai.js';
import type { Provider } from '../provider.js';
import { hostToken } from '../host-token.js';
import { upstreamUrl } from '../call-context.js';

// The paths Azure serves under a deployment on the deployment form (openai-node's `_deployments_endpoints`,
// of those the gateway relays); the others (`/responses`) are `{endpoint}/openai{path}?api-version=…`.
const DEPLOYMENT_PATHS: ReadonlySet<string> = new Set(['/images/generations', '/images/edits', '/chat/completions']);

// openai-node's AzureOpenAI client takes `{endpoint}/openai` as its baseURL (src/azure.ts), and the v1
// client `{endpoint}/openai/v1`: a base ending so names the resource endpoint, whichever form is used
const OPENAI_ROOT = /\/openai(?:\/v1)?$/i;

/**
 * The URL of an endpoint. A base ending in `/openai` or `/openai/v1` is read as its endpoint; another
 * base that already names a path (`…/openai/deployments/{name}`, a proxy's own path) is kept as it
 * is; a bare endpoint gets `/openai/v1`, or `/openai/deployments/{deployment}` when the upstream
 * names an `apiVersion`.
 */
export function azureUrl(upstream: Upstream, path: string, model: string | undefined): string {
  const given = upstream.baseURL.replace(/\/+$/, '');
  const endpoint = OPENAI_ROOT.test(given) && !hasDeploymentSegment(given) ? given.replace(OPENAI_ROOT, '') : undefined;
  const under = (prefix: string, rest: string): string => (endpoint !== undefined ? `${endpoint}${prefix}${rest}` : upstreamUrl(given, prefix, rest));
  if (upstream.apiVersion === undefined) return under('/openai/v1', path);
  const named = !DEPLOYMENT_PATHS.has(path) || hasDeploymentSegment(given);
  const deployment = upstream.deployment ?? upstream.model ?? model;
  if (!named && !deployment) throw noDeployment();
  // a dot segment would be resolved away by the URL parser: `/deployments/../images/…` leaves the deployment
  // path (openai-node refuses the same values in its path tag: src/internal/utils/path.ts)
  if (!named && (deployment === '.' || deployment === '..')) {
    if (upstream.deployment === undefined && upstream.model === undefined) throw GatewayError.invalidRequest(`model '${deployment}' cannot name an Azure deployment`, 'model');
    throw noDeployment();
  }
  const url = under('/openai', named ? path : `/deployments/${encodeURIComponent(deployment as string)}${path}`);
  return `${url}?api-version=${encodeURIComponent(upstream.apiVersion)}`;
}

function hasDeploymentSegment(baseURL: string): boolean {
  try {
    return new URL(baseURL).pathname.split('/').includes('deployments');
  } catch {
    return false;
  }
}

/** A deployment-form upstream with neither `deployment` nor `model` on a multipart edit: the operator's mapping. */
function noDeployment(): GatewayError {
  return new GatewayError({
    status: 500,
    code: ERROR_CODES.internalError,
    message: 'The gateway is misconfigured for this model: its Azure OpenAI upstream names no deployment (an operator configuration problem).',
    notStarted: true,
  });
}

/**
 * The credentials: the host's token function first (as openai-node's `azureADTokenProvider`), else
 * the key in `api-key`. A token function that fails, or answers nothing within the upstream's
 * deadline, is the operator's problem, never the caller's 401; the next upstream may be tried, as
 * nothing was sent.
 */
export async function azureAuth(upstream: Upstream, timeoutMs: number): Promise<Record<string, string>> {
  if (upstream.token) {
    const token = await hostToken(upstream.token, timeoutMs);
    if (token === undefined) throw noToken();
    return { authorization: `Bearer ${token}` };
  }
  return upstream.apiKey ? { 'api-key': upstream.apiKey } : {};
}

function noToken(): GatewayError {
  return new GatewayError({
    status: 502,
    code: ERROR_CODES.upstreamAuthFailed,
    message: 'The gateway could not obtain its own credentials for the upstream (azure token function failed: an operator configuration problem, not your key).',
    retryable: true,
    notStarted: true,
  });
}

/**
 * OpenAI's envelope, plus Azure's content filter: its image refusals carry the reason in
 * `error.inner_error.code` (`ResponsibleAIPolicyViolation`) beside a code that may say less.
 */
export function normalizeAzureError(status: number, body: unknown, headerRequestId?: string, provider = 'azure', retryAfterSeconds?: number | 'unreadable'): GatewayError {
  const error = isObject(body) && isObject(body.error) ? body.error : undefined;
  const inner = error && isObject(error.inner_error) ? stringOr(error.inner_error.code) : undefined;
  // an account block ("Your resource has been temporarily blocked because we detected behavior that may
  // violate our content policy"): the operator's account, not this caller's content (docs/routing-and-health.md)
  if (error && typeof error.message === 'string' && /resource has been temporarily blocked/i.test(error.message)) {
    return GatewayError.fromUpstream({ provider, status, upstreamCode: stringOr(error.code), upstreamMessage: error.message, requestId: headerRequestId, kind: 'quota' });
  }
  if (error && inner && classifyUpstreamCode(inner) === 'content_policy') {
    return GatewayError.fromUpstream({ provider, status, upstreamCode: inner, upstreamMessage: stringOr(error.message), requestId: headerRequestId, kind: 'content_policy' });
  }
  return normalizeOpenAIError(status, body, headerRequestId, provider, retryAfterSeconds);
}

export const azureProvider: Provider = {
  name: 'azure',
  // the OpenTelemetry GenAI conventions' value for Azure OpenAI
  genAiName: 'azure.ai.openai',
  // OpenAI's fields; an API version that refuses `safety_identifier` (400) is sent `user` (openai.ts)
  passthrough: openAICompatibleApi({ prefix: '/openai/v1', url: azureUrl, auth: azureAuth, normalizeError: normalizeAzureError, tenantField: openAITenantField }),
  // Azure's image routes stream OpenAI's own events: relayed as they come
  imageStreams: { kind: 'relay' },
  // gpt-image deployments are OpenAI's models: the `openai` catalogue rows describe them
  catalogueRowsOf: 'openai',
};
