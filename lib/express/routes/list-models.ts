// GET /v1/models: the OpenAI list shape (`{ object: 'list', data: [{ id, object: 'model', created,
// owned_by }] }`), which `client.models.list()` and most OpenAI-compatible UIs call first, each entry
// described by the model catalogue (docs/models.md): the endpoints this caller may use it on, how each
// is served, its parameters, limits and whether it streams. An endpoint is listed only where
// `resolveUpstream` routes the model for this caller (to the entry's provider, when it names one), so
// the list never offers a 404, nor an endpoint whose every upstream is open. The host's
// `listModels(caller)` hook, when given, names the models instead (its own names for vendor models,
// typically); each is described by the row of the upstream model the resolver sends it to
// (docs/models.md "Which row a request follows").
import type { RequestHandler } from 'express';
import { callerOf } from '../authenticate.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { routeHandler } from '../route-handler.js';
import { sendJson } from '../answers/send-body.js';
import type { ResolvedOptions } from '../../gateway/resolve-options.js';
import type { Caller, Upstream } from '../../types.js';
import type { ListedModel } from '../../options/host-hooks.js';
import type { ModelEndpoint, ModelEntry, ModelLimits, ModelServing } from '../../options/model-catalogue.js';
import { ENDPOINT_ROUTES } from '../../models/model-catalogue.js';
import { rowFor, servesRowsOf } from '../../gateway/routing/catalogue-routing.js';
import { routedAnswer } from '../../gateway/routing/resolve-upstreams.js';

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
 * own to say which. A name no row describes is listed as the hook gave it.
 */
async function describeListed(options: ResolvedOptions, caller: Caller, listed: readonly (string | ListedModel)[]): Promise<ModelObject[]> {
  return Promise.all(
    toModelObjects(listed).map(async (model) => {
      const described = await describe(options, caller, model.id, ALL_ENDPOINTS);
      return described ? { ...described, created: model.created, owned_by: model.owned_by } : model;
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
    return [{ id, entry }];
  });
  const described = await Promise.all(named.map(({ id, entry }) => describe(options, caller, id, Object.keys(entry.endpoints) as ModelEndpoint[])));
  return described.filter((model): model is ModelObject => model !== undefined);
}

/**
 * A name for this caller, described by the row of the first endpoint the resolver routes (the row
 * rowFor picks for its upstream), with every asked endpoint that goes to that same row and that the
 * row lists; undefined when there is none.
 */
async function describe(options: ResolvedOptions, caller: Caller, id: string, asked: readonly ModelEndpoint[]): Promise<ModelObject | undefined> {
  const rows = await Promise.all(asked.map((endpoint) => routedRow(options, caller, id, endpoint)));
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

/** The row a request for `model` on `endpoint` follows for this caller, when it lists the endpoint and its rules are the routed provider's. */
async function routedRow(options: ResolvedOptions, caller: Caller, model: string, endpoint: ModelEndpoint): Promise<ModelEntry | undefined> {
  try {
    const route = ENDPOINT_ROUTES[endpoint];
    const answer = await options.resolveUpstream({ model, route, caller });
    const list: readonly unknown[] = answer == null ? [] : (routedAnswer(answer)?.upstreams ?? (Array.isArray(answer) ? (answer as readonly unknown[]) : [answer]));
    const first = list[0];
    if (first === null || typeof first !== 'object') return undefined;
    // every upstream open for this caller: not offered until one is usable again (docs/routing-and-health.md)
    if (!list.some((upstream) => upstream !== null && typeof upstream === 'object' && options.routing.usable(upstream as Upstream, route, model, caller.id))) return undefined;
    const upstream = first as Upstream;
    const entry = rowFor(options.models, model, upstream);
    if (!entry?.endpoints[endpoint]) return undefined;
    // the entry's rules are its provider's: routed to another, the description would be wrong
    // (or to one that serves its provider's rows: Azure OpenAI serves the `openai` rows)
    return entry.provider === undefined || servesRowsOf(upstream.provider, entry.provider) ? entry : undefined;
  } catch {
    return undefined;
  }
}
