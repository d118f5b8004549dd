// Asks the host's resolveUpstream where a model goes and checks the answer: a list of one or more
// upstreams (or `{ upstreams, strategy }`), each naming a provider of the registry and an http(s) base
// URL. fallback.ts tries them, in the order routing chooses (docs/routing-and-health.md). A list's own
// strategy rides on the gateway's copy of the list as a symbol-keyed field, so every use case that
// passes the list on (image, forward, video, asset) carries it to the fallback rule unchanged.
import { GatewayError } from '../../errors/gateway-error.js';
import { bearerKeyOfHeader } from '../../security/bearer-key.js';
import { redactSecrets } from '../../errors/redact.js';
import { requestIdOf } from '../../errors/request-id.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { PROVIDER_NAMES, isProviderName, upstreamProblem } from '../../providers/registry.js';
import type { Upstream } from '../../types.js';
import type { ResolveUpstreamInput } from '../../options/host-hooks.js';
import type { RoutedUpstreams, RoutingStrategy } from '../../options/routing-options.js';
import { ROUTING_STRATEGIES } from './resolve-routing.js';

export async function resolveUpstreams(options: ResolvedOptions, input: ResolveUpstreamInput): Promise<UpstreamList> {
  let answer: Awaited<ReturnType<ResolvedOptions['resolveUpstream']>>;
  try {
    answer = await options.resolveUpstream(input);
  } catch (error) {
    // the host's answer as it chose it; made perhaps by the other build of the package (ESM beside CommonJS)
    if (GatewayError.is(error)) throw error;
    // a host's error may quote the key it routed by (the caller's, or its own operator key)
    const message = redactSecrets(error instanceof Error ? error.message : String(error), [bearerKeyOfHeader(input.req?.headers.authorization)]);
    options.logger.error({ ...(input.req ? { requestId: requestIdOf(input.req) } : {}), route: input.route, error: message }, 'resolveUpstream threw; answering 500');
    throw GatewayError.internal();
  }
  const routed = routedAnswer(answer);
  const upstreams = answer == null ? [] : routed ? routed.upstreams : Array.isArray(answer) ? (answer as readonly Upstream[]) : [answer as Upstream];
  if (upstreams.length === 0) throw GatewayError.modelNotFound(input.model);
  if (routed?.strategy !== undefined && !ROUTING_STRATEGIES.includes(routed.strategy)) {
    options.logger.error(
      { ...(input.req ? { requestId: requestIdOf(input.req) } : {}), route: input.route, model: input.model },
      `resolveUpstream returned an invalid strategy: must be one of ${ROUTING_STRATEGIES.join(', ')}`,
    );
    throw GatewayError.internal();
  }
  for (const upstream of upstreams) {
    const problem = describeProblem(upstream);
    if (problem) {
      // the operator's mistake, told to the operator (log) and not to the caller
      options.logger.error({ ...(input.req ? { requestId: requestIdOf(input.req) } : {}), route: input.route, model: input.model }, `resolveUpstream returned an invalid upstream: ${problem}`);
      throw GatewayError.internal();
    }
  }
  return routedList(upstreams, routed?.strategy);
}

/** The `{ upstreams, strategy }` form of an answer, when it is that form. */
export function routedAnswer(answer: unknown): RoutedUpstreams | undefined {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer) || !Array.isArray((answer as { upstreams?: unknown }).upstreams)) return undefined;
  return answer as RoutedUpstreams;
}

function describeProblem(upstream: Upstream): string | undefined {
  if (upstream === null || typeof upstream !== 'object') return 'not an object';
  if (!isProviderName(upstream.provider)) return `provider must be one of ${PROVIDER_NAMES.join(', ')}`;
  if (typeof upstream.baseURL !== 'string' || !/^https?:\/\/[^/]/i.test(upstream.baseURL)) return 'baseURL must be an http(s) URL';
  // the optional fields' types (docs/configuration.md "resolveUpstream"): a wrong type would otherwise fail inside the call
  if (upstream.token !== undefined && typeof upstream.token !== 'function') return 'token must be a function';
  if (upstream.weight !== undefined && !(typeof upstream.weight === 'number' && Number.isFinite(upstream.weight) && upstream.weight >= 0)) return 'weight must be a number of 0 or more';
  for (const field of ['apiVersion', 'deployment'] as const) {
    const value = upstream[field];
    if (value !== undefined && (typeof value !== 'string' || value === '')) return `${field} must be a non-empty string`;
  }
  // what a provider needs of its own fields, it says itself (docs/architecture.md "Providers and the registry")
  return upstreamProblem(upstream);
}

const STRATEGY = Symbol('express-image-gateway.strategy');

export type UpstreamList = readonly Upstream[] & { readonly [STRATEGY]?: RoutingStrategy };

/** The gateway's own copy of the list, with the list's strategy when it named one. */
function routedList(upstreams: readonly Upstream[], strategy: RoutingStrategy | undefined): UpstreamList {
  const list: Upstream[] & { [STRATEGY]?: RoutingStrategy } = [...upstreams];
  if (strategy !== undefined) list[STRATEGY] = strategy;
  return list;
}

/** The strategy the resolver named for this list, if it did. */
export function listStrategy(upstreams: readonly Upstream[]): RoutingStrategy | undefined {
  return (upstreams as UpstreamList)[STRATEGY];
}
