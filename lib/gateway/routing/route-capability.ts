// Whether an upstream's provider can serve a route at all: the capability each route asks of the
// registry (docs/architecture.md "Providers and the registry"). `GET /v1/models` reads it to list a
// name no catalogue row describes only where a request would reach its upstream (docs/models.md
// "GET /v1/models"), never where the route would find no capability and answer 500.
import type { Capability } from '../../providers/provider.js';
import { capabilityOf, upstreamTasksOf } from '../../providers/registry.js';
import type { RouteName, Upstream } from '../../types.js';

/** The capabilities that serve each route, any one of them enough (the image routes translate, or forward to an OpenAI-compatible API). */
const ROUTE_CAPABILITIES: Readonly<Record<RouteName, readonly Capability[]>> = Object.freeze({
  'images.generations': ['images', 'passthrough'],
  'images.edits': ['images', 'passthrough'],
  'images.native': ['passthrough'],
  'chat.completions': ['passthrough'],
  responses: ['passthrough'],
  // video tasks need the video part of a provider's task API (below), not any task API
  'video.tasks': [],
  assets: ['assets'],
});

/** True when the upstream's provider has a capability that serves `route`. */
export function servesRoute(upstream: Upstream, route: RouteName): boolean {
  if (route === 'video.tasks') return upstreamTasksOf(upstream, 'video') !== undefined;
  return ROUTE_CAPABILITIES[route].some((capability) => capabilityOf(upstream, capability) !== undefined);
}
