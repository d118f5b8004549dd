// GET /v1/models: the OpenAI list shape (`{ object: 'list', data: [{ id, object: 'model', created,
// owned_by }] }`), which `client.models.list()` and most OpenAI-compatible UIs call first, each entry
// described by the model catalogue (docs/models.md): the endpoints this caller may use it on, how each
// is served, its parameters, limits and whether it streams. An endpoint is listed only where
// `resolveUpstream` routes the model for this caller (to the entry's provider, when it names one), so
// the list never offers a 404, nor an endpoint whose every upstream is open. The host's
// `models.list` hook, when given, names the models instead (its own names for vendor models,
// typically); each is described by the row of the upstream model the resolver sends it to
// (docs/models.md "Which row a request follows"), and a name no row describes still gets its
// endpoints, so clients that filter on them do not hide it. Listing calls only the host's resolver
// (once per route of each name, a bounded number at a time), never an upstream.
import type { RequestHandler } from 'express';
import { callerOf } from '../authenticate.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { routeHandler } from '../route-handler.js';
import { sendJson } from '../answers/send-body.js';
import type { ResolvedOptions } from '../../gateway/resolve-options.js';
import type { Caller, RouteName, Upstream } from '../../types.js';
import type { ListedModel } from '../../options/host-hooks.js';
import type { ModelEndpoint, ModelEntry, ModelLimits, ModelServing } from '../../options/model-catalogue.js';
import { ENDPOINT_ROUTES } from '../../models/model-catalogue.js';
import { rowFor, servesRowsOf } from '../../gateway/routing/catalogue-routing.js';
import { routedAnswer } from '../../gateway/routing/resolve-upstreams.js';
import { servesRoute } from '../../gateway/routing/route-capability.js';

/** One entry of the `GET /v1/models` answer: openai-node's `Model`, plus the catalogue's description. */
export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /** The request paths this caller can use the model on. */
  endpoints?: ModelEndpoint[];
  /** How each of those endpoints is served. */
  serving?: Partial<Record<ModelEndpoint, ModelServing>>;
  supported_parameters?: readonly string[];
  refused_parameters?: readonly string[];
  limits?: ModelLimits;
  streams?: boolean;
}

const DEFAULT_OWNER = 'gateway';
const ALL_ENDPOINTS = Object.keys(ENDPOINT_ROUTES) as ModelEndpoint[];
const IMAGE_ENDPOINTS: ReadonlySet<ModelEndpoint> = new Set(['/v1/images/generations', '/v1/images/edits', '/api/v3/images/generations']);
/**
 * Resolver calls in flight for one listing: a hook may name hundreds of models, each asked on six
 * routes, and the host's resolver may read a database; a few at a time keep one listing from crowding it.
 */
const RESOLVES_AT_ONCE = 16;

export function listModelsHandler(options: ResolvedOptions): RequestHandler {
  return routeHandler('listModels', async (context) => {
    const caller = callerOf(context);
    let data: ModelObject[];
    try {
      data = options.listModels ? await describeListed(options, caller, await options.listModels(caller)) : await describeCatalogue(options, caller);
    } catch (error) {
      options.logger.error({ requestId: context.requestId, error: error instanceof Error ? error.message : String(error) }, 'listModels threw; answering 500');
      throw GatewayError.internal();
    }
    sendJson(context, 200, { object: 'list', data });
  });
}

/** Strings and `{ id, owned_by?, created? }` to model objects; duplicates and blank names dropped. */
export function toModelObjects(listed: readonly (string | ListedModel)[] | null | undefined): ModelObject[] {
  const seen = new Set<string>();
  const models: ModelObject[] = [];
  for (const entry of Array.isArray(listed) ? listed : []) {
    const item: Partial<ListedModel> = typeof entry === 'string' ? { id: entry } : ((entry as ListedModel | null) ?? {});
    if (typeof item.id !== 'string' || item.id === '' || seen.has(item.id)) continue;
    seen.add(item.id);
    models.push({
      id: item.id,
      object: 'model',
      created: Number.isSafeInteger(item.created) ? (item.created as number) : 0,
      owned_by: typeof item.owned_by === 'string' && item.owned_by !== '' ? item.owned_by : DEFAULT_OWNER,
    });
  }
  return models;
}

/**
 * The hook's names, each described by the row the resolver's answer makes it follow (docs/models.md
 * "Which row a request follows"): every endpoint is asked, since a host's own name has no row of its
 * own to say which. A name no row describes is listed on each endpoint whose route the resolver
 * answers a usable upstream for, one that can serve it; a name routed nowhere, as the hook gave it.
 */
async function describeListed(options: ResolvedOptions, caller: Caller, listed: readonly (string | ListedModel)[]): Promise<ModelObject[]> {
  const ask = boundedCalls(RESOLVES_AT_ONCE);
  return Promise.all(
    toModelObjects(listed).map(async (model) => {
      const routed = await routesOf(options, caller, model.id, ALL_ENDPOINTS, ask);
      const described = describe(options, model.id, ALL_ENDPOINTS, routed);
      if (described) return { ...described, created: model.created, owned_by: model.owned_by };
      const endpoints = ALL_ENDPOINTS.filter((endpoint) => {
        const route = ENDPOINT_ROUTES[endpoint];
        const upstream = routed.get(route);
        return upstream !== undefined && servesRoute(upstream, route);
      });
      return endpoints.length > 0 ? { ...model, endpoints } : model;
    }),
  );
}

/**
 * The default list: each catalogue entry (a prefix `x-image-2.0*` lists `x-image-2.0`) with the
 * endpoints the resolver routes for this caller; an entry with none is left out. A resolver that
 * throws or returns null for a name leaves that endpoint out: listing must not fail because one model
 * is unavailable.
 */
async function describeCatalogue(options: ResolvedOptions, caller: Caller): Promise<ModelObject[]> {
  const seen = new Set<string>();
  const named = options.models.entries.flatMap((entry) => {
    const id = entry.id.replace(/\*$/, '');
    if (seen.has(id)) return [];
    seen.add(id);
    return [{ id, endpoints: Object.keys(entry.endpoints) as ModelEndpoint[] }];
  });
  const ask = boundedCalls(RESOLVES_AT_ONCE);
  const described = await Promise.all(named.map(async ({ id, endpoints }) => describe(options, id, endpoints, await routesOf(options, caller, id, endpoints, ask))));
  return described.filter((model): model is ModelObject => model !== undefined);
}

/**
 * A name for this caller, described by the row of the first endpoint the resolver routes (the row
 * rowFor picks for its upstream), with every asked endpoint that goes to that same row and that the
 * row lists; undefined when there is none.
 */
function describe(options: ResolvedOptions, id: string, asked: readonly ModelEndpoint[], routed: RoutedUpstreams): ModelObject | undefined {
  const rows = asked.map((endpoint) => routedRow(options, id, endpoint, routed.get(ENDPOINT_ROUTES[endpoint])));
  const entry = rows.find((row) => row !== undefined);
  if (!entry) return undefined;
  const usable = asked.filter((_endpoint, index) => rows[index] === entry);
  const model: ModelObject = {
    id,
    object: 'model',
    created: Number.isSafeInteger(entry.created) ? (entry.created as number) : 0,
    owned_by: entry.owned_by || DEFAULT_OWNER,
    endpoints: usable,
    serving: Object.fromEntries(usable.map((endpoint) => [endpoint, entry.endpoints[endpoint]])),
    supported_parameters: entry.supported_parameters,
  };
  if (entry.refused_parameters && entry.refused_parameters.length > 0) model.refused_parameters = entry.refused_parameters;
  const limits = effectiveLimits(options, entry, usable);
  if (limits) model.limits = limits;
  model.streams = entry.streams;
  return model;
}

/** The entry's limits as this router applies them: reference images never above `limits.imagesPerRequest`. */
function effectiveLimits(options: ResolvedOptions, entry: ModelEntry, endpoints: readonly ModelEndpoint[]): ModelLimits | undefined {
  const limits = entry.limits;
  if (!limits) return undefined;
  const images = limits.reference_images;
  if (!images || !endpoints.some((endpoint) => IMAGE_ENDPOINTS.has(endpoint))) return limits;
  const cap = options.limits.imagesPerRequest;
  return images.max <= cap ? limits : { ...limits, reference_images: { min: Math.min(images.min, cap), max: cap } };
}

/** The first upstream the resolver answered for each route of the asked endpoints, where one of its upstreams is usable. */
type RoutedUpstreams = ReadonlyMap<RouteName, Upstream>;

/**
 * The resolver asked once per route of the asked endpoints (the two video shapes share one), each
 * call through `ask`, which bounds the calls in flight for the whole list.
 */
async function routesOf(options: ResolvedOptions, caller: Caller, model: string, asked: readonly ModelEndpoint[], ask: BoundedCalls): Promise<RoutedUpstreams> {
  const routes = [...new Set(asked.map((endpoint) => ENDPOINT_ROUTES[endpoint]))];
  const upstreams = await Promise.all(routes.map((route) => ask(() => routedUpstream(options, caller, model, route))));
  const routed = new Map<RouteName, Upstream>();
  routes.forEach((route, index) => {
    const upstream = upstreams[index];
    if (upstream) routed.set(route, upstream);
  });
  return routed;
}

/**
 * The first upstream of the resolver's answer for `model` on `route`, when the answer names one and
 * one of its upstreams is usable for this caller; undefined for null, a throw or an answer whose
 * every upstream is open (not offered until one is usable again, docs/routing-and-health.md). Only
 * the host's function is called: never an upstream.
 */
async function routedUpstream(options: ResolvedOptions, caller: Caller, model: string, route: RouteName): Promise<Upstream | undefined> {
  try {
    const answer = await options.resolveUpstream({ model, route, caller });
    const list: readonly unknown[] = answer == null ? [] : (routedAnswer(answer)?.upstreams ?? (Array.isArray(answer) ? (answer as readonly unknown[]) : [answer]));
    const first = list[0];
    if (first === null || typeof first !== 'object') return undefined;
    if (!list.some((upstream) => upstream !== null && typeof upstream === 'object' && options.routing.usable(upstream as Upstream, route, model, caller.id))) return undefined;
    return first as Upstream;
  } catch {
    return undefined;
  }
}

/** The row a request for `model` on `endpoint` follows for this caller, when it lists the endpoint and its rules are the routed provider's. */
function routedRow(options: ResolvedOptions, model: string, endpoint: ModelEndpoint, upstream: Upstream | undefined): ModelEntry | undefined {
  if (!upstream) return undefined;
  const entry = rowFor(options.models, model, upstream);
  if (!entry?.endpoints[endpoint]) return undefined;
  // the entry's rules are its provider's: routed to another, the description would be wrong
  // (or to one that serves its provider's rows: Azure OpenAI serves the `openai` rows)
  return entry.provider === undefined || servesRowsOf(upstream.provider, entry.provider) ? entry : undefined;
}

/** Runs a call when fewer than the bound are running, else once one of them ends. */
type BoundedCalls = <T>(call: () => Promise<T>) => Promise<T>;

function boundedCalls(bound: number): BoundedCalls {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (call) => {
    // a call that ends hands its slot straight to the next waiting one, so the bound holds throughout
    if (running < bound) running += 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await call();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  };
}
