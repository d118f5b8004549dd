// The model catalogue compiled once per router (docs/models.md): the `models.catalogue` option over the default
// rows, checked, frozen, and found by name: an exact id first, else the longest `*` prefix that
// covers the name, so an added `my-*` never shadows a longer default prefix, nor the reverse. The rows
// written under vendors' model names (vendor rows) are told apart from the caller-facing ones (the
// host's `models.catalogue` entries, the contract's families): which of them a request follows is
// lib/gateway/routing/catalogue-routing.ts's rule (docs/models.md "Which row a request follows").
import { GatewayConfigError } from '../errors/config-error.js';
import type { ModelEndpoint, ModelEntry, ModelRange, ModelCatalogueOption } from '../options/model-catalogue.js';
import type { RouteName } from '../types.js';

/** The route name of each endpoint a catalogue entry may list (docs/routes.md). */
export const ENDPOINT_ROUTES: Readonly<Record<ModelEndpoint, RouteName>> = Object.freeze({
  '/v1/images/generations': 'images.generations',
  '/v1/images/edits': 'images.edits',
  '/api/v3/images/generations': 'images.native',
  '/api/v3/contents/generations/tasks': 'video.tasks',
  // OpenAI's video shape, over the same task service (docs/openai-videos.md)
  '/v1/videos': 'video.tasks',
  '/v1/chat/completions': 'chat.completions',
  '/v1/responses': 'responses',
});

export interface ModelCatalogue {
  readonly entries: readonly ModelEntry[];
  /** The entry that covers a model name, or undefined. */
  find(model: string): ModelEntry | undefined;
  /**
   * The caller-facing entry that covers a name (the host's `models.catalogue` entry, a contract family), or
   * undefined when the name's entry is a vendor row (or there is none): a caller-facing entry is the
   * caller's name's own, whatever the resolver answers.
   */
  named(model: string): ModelEntry | undefined;
}

const EXAMPLE = "models: { catalogue: [{ id: 'x-seedream', endpoints: { '/v1/images/generations': 'translated' }, supported_parameters: ['prompt', 'size'], streams: false }] }";

/**
 * The catalogue for a router: `models.catalogue` adds to or overrides the default rows (a list) or returns the
 * whole catalogue (a function). The default rows are the providers' (the registry assembles them,
 * with the `imageModels` option's families in place of the contract's).
 */
export function resolveModelCatalogue(models: ModelCatalogueOption | undefined, defaults: readonly ModelEntry[], isVendorRow: (entry: ModelEntry) => boolean = () => false): ModelCatalogue {
  let entries: readonly ModelEntry[];
  if (models === undefined) entries = defaults;
  else if (typeof models === 'function') entries = models(defaults);
  else if (Array.isArray(models)) {
    const given = new Set((models as readonly ModelEntry[]).map((entry) => entry?.id));
    entries = [...(models as readonly ModelEntry[]), ...defaults.filter((entry) => !given.has(entry.id))];
  } else throw new GatewayConfigError('models_type', 'options.models.catalogue must be a list of model entries or a function (defaults) => entries.', EXAMPLE);
  if (!Array.isArray(entries))
    throw new GatewayConfigError('models_type', 'options.models.catalogue, as a function, must return a list of model entries.', 'models: { catalogue: (defaults) => [...defaults, mine] }');
  const checked = entries.map((entry: ModelEntry, index: number) => checkEntry(entry, index));
  return compileCatalogue(checked, isVendorRow);
}

/**
 * Entries found by exact id, else by the longest covering prefix; lookups cached (bounded).
 * `isVendorRow` tells a provider's own row (by identity: a `models.catalogue` function that keeps a default row
 * keeps it a vendor row; a copy under a name of the host's is the host's).
 */
export function compileCatalogue(entries: readonly ModelEntry[], isVendorRow: (entry: ModelEntry) => boolean = () => false): ModelCatalogue {
  const vendorRows = new WeakSet<ModelEntry>();
  const frozen = Object.freeze(
    entries.map((entry) => {
      const copy = freezeEntry(entry);
      if (isVendorRow(entry)) vendorRows.add(copy);
      return copy;
    }),
  );
  const exact = new Map<string, ModelEntry>();
  for (const entry of frozen) if (!entry.id.endsWith('*') && !exact.has(entry.id)) exact.set(entry.id, entry);
  const prefixes = frozen.filter((entry) => entry.id.endsWith('*')).sort((a, b) => b.id.length - a.id.length);
  const cache = new Map<string, ModelEntry | undefined>();
  const find = (model: string): ModelEntry | undefined => {
    if (cache.has(model)) return cache.get(model);
    const found = exact.get(model) ?? prefixes.find((entry) => model.startsWith(entry.id.slice(0, -1)));
    // arbitrary caller-chosen model names must not grow the cache without end
    if (cache.size < 1024) cache.set(model, found);
    return found;
  };
  return Object.freeze({
    entries: frozen,
    find,
    named(model: string): ModelEntry | undefined {
      const found = find(model);
      return found && !vendorRows.has(found) ? found : undefined;
    },
  });
}

function freezeEntry(entry: ModelEntry): ModelEntry {
  return Object.freeze({
    ...entry,
    endpoints: Object.freeze({ ...entry.endpoints }),
    supported_parameters: Object.freeze([...entry.supported_parameters]),
    ...(entry.refused_parameters ? { refused_parameters: Object.freeze([...entry.refused_parameters]) } : {}),
    ...(entry.limits ? { limits: Object.freeze({ ...entry.limits }) } : {}),
  });
}

function checkEntry(entry: ModelEntry, index: number): ModelEntry {
  const where = `options.models.catalogue[${index}]`;
  if (entry === null || typeof entry !== 'object') throw new GatewayConfigError('models_entry', `${where} must be a model entry object.`, EXAMPLE);
  if (typeof entry.id !== 'string' || entry.id.replace(/\*$/, '') === '') throw new GatewayConfigError('models_entry', `${where}.id must be a model name or a prefix ending in '*'.`, EXAMPLE);
  const at = `${where} ('${entry.id}')`;
  if (entry.endpoints === null || typeof entry.endpoints !== 'object' || Object.keys(entry.endpoints).length === 0) {
    throw new GatewayConfigError('models_entry', `${at}.endpoints must name at least one endpoint with how it is served.`, EXAMPLE);
  }
  for (const [endpoint, serving] of Object.entries(entry.endpoints)) {
    if (!Object.hasOwn(ENDPOINT_ROUTES, endpoint)) {
      throw new GatewayConfigError('models_entry', `${at}.endpoints has unknown endpoint '${endpoint}'.`, `use only: ${Object.keys(ENDPOINT_ROUTES).join(', ')}.`);
    }
    if (serving !== 'translated' && serving !== 'passthrough' && serving !== 'native') {
      throw new GatewayConfigError('models_entry', `${at}.endpoints['${endpoint}'] must be 'translated', 'passthrough' or 'native'.`, EXAMPLE);
    }
  }
  for (const key of ['supported_parameters', 'refused_parameters'] as const) {
    const list = entry[key];
    if (list === undefined && key === 'refused_parameters') continue;
    if (!Array.isArray(list) || list.some((name) => typeof name !== 'string' || name === '')) {
      throw new GatewayConfigError('models_entry', `${at}.${key} must be a list of field names.`, EXAMPLE);
    }
  }
  if (typeof entry.streams !== 'boolean') throw new GatewayConfigError('models_entry', `${at}.streams must be a boolean.`, EXAMPLE);
  const limits = entry.limits;
  if (limits !== undefined) {
    if (limits === null || typeof limits !== 'object') throw new GatewayConfigError('models_entry', `${at}.limits must be an object.`, EXAMPLE);
    for (const key of ['n', 'reference_images', 'pixels', 'durations'] as const) {
      const range = limits[key];
      if (range !== undefined && !isRange(range, key === 'reference_images' ? 0 : 1)) {
        throw new GatewayConfigError('models_entry', `${at}.limits.${key} must be { min, max }: whole numbers, min <= max.`, `limits: { ${key}: { min: 1, max: 4 } }`);
      }
    }
    for (const key of ['sizes', 'tiers'] as const) {
      const list = limits[key];
      if (list !== undefined && (!Array.isArray(list) || list.some((item) => typeof item !== 'string'))) {
        throw new GatewayConfigError('models_entry', `${at}.limits.${key} must be a list of strings.`, "limits: { sizes: ['1024x1024'] }");
      }
    }
  }
  return entry;
}

function isRange(range: ModelRange, least: number): boolean {
  return typeof range === 'object' && range !== null && Number.isSafeInteger(range.min) && Number.isSafeInteger(range.max) && range.min >= least && range.min <= range.max;
}
