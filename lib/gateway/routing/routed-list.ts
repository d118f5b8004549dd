// A resolver's list with the strategy it asked for (`{ upstreams, strategy }`): the strategy rides on
// the gateway's own copy of the list as a symbol-keyed field, so every use case that passes the list
// on (image, forward, video, asset) carries it to the fallback rule unchanged.
import type { RoutingStrategy } from '../../options/routing-options.js';
import type { Upstream } from '../../types.js';

const STRATEGY = Symbol('express-image-gateway.strategy');

export type UpstreamList = readonly Upstream[] & { readonly [STRATEGY]?: RoutingStrategy };

/** The gateway's own copy of the list, with the list's strategy when it named one. */
export function routedList(upstreams: readonly Upstream[], strategy: RoutingStrategy | undefined): UpstreamList {
  const list: Upstream[] & { [STRATEGY]?: RoutingStrategy } = [...upstreams];
  if (strategy !== undefined) list[STRATEGY] = strategy;
  return list;
}

/** The strategy the resolver named for this list, if it did. */
export function listStrategy(upstreams: readonly Upstream[]): RoutingStrategy | undefined {
  return (upstreams as UpstreamList)[STRATEGY];
}
