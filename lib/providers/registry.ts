// The one list of providers, and the only way the rest of the gateway reaches one: by the name the
// resolver returned and the capability a route needs, never by naming it. Adding a provider is one
// module and one line here (its name joins the ProviderName union, in lib/types.ts, which this list is
// held to). The default model catalogue is assembled here from each provider's own rows.
import { GatewayError } from '../errors/gateway-error.js';
import { DEFAULT_IMAGE_MODELS } from '../images/model-families.js';
import { type ModelCatalogue, compileCatalogue } from '../models/model-catalogue.js';
import type { ProviderName, RouteName, Upstream } from '../types.js';
import type { Logger } from '../options/host-hooks.js';
import type { ModelEntry } from '../options/model-catalogue.js';
import type { ImageModelFamily } from '../options/request-limits.js';
import { arkProvider } from './ark/ark.js';
import { azureProvider } from './openai/azure.js';
import { dashscopeProvider } from './dashscope/dashscope.js';
import { falProvider } from './fal/fal.js';
import { geminiProvider } from './google/gemini.js';
import { openaiProvider } from './openai/openai.js';
import { replicateProvider } from './replicate/replicate.js';
import { vertexProvider } from './google/vertex.js';
import type { Capability, Provider, UpstreamTaskKind, UpstreamTasks } from './provider.js';

// waiting on an upstream's own task, for the gateway's use cases (submitted-work.ts)
export { asStartedWork, awaitUpstreamImage } from './submitted-work.js';

const PROVIDERS: Readonly<Record<ProviderName, Provider>> = {
  dashscope: dashscopeProvider,
  ark: arkProvider,
  openai: openaiProvider,
  azure: azureProvider,
  gemini: geminiProvider,
  vertex: vertexProvider,
  fal: falProvider,
  replicate: replicateProvider,
};

/** Every provider name the resolver may return, in the order error messages list them. */
export const PROVIDER_NAMES: readonly ProviderName[] = Object.freeze(Object.keys(PROVIDERS) as ProviderName[]);

/** Each provider's `gen_ai.provider.name`, for the telemetry (which imports no provider). */
export const GENAI_PROVIDER_NAMES: Readonly<Record<ProviderName, string>> = Object.freeze(
  Object.fromEntries(PROVIDER_NAMES.map((name) => [name, PROVIDERS[name].genAiName])) as Record<ProviderName, string>,
);

/**
 * The default catalogue's rows (docs/models.md): the contract's families (`families`, else the default
 * ones) as the provider of the contract's native call makes them, then every provider's own rows, in
 * registry order.
 */
export function defaultModelRows(families: readonly ImageModelFamily[] = DEFAULT_IMAGE_MODELS): readonly ModelEntry[] {
  const familyRow = PROVIDER_NAMES.map((name) => PROVIDERS[name].familyRow).find((row) => row !== undefined);
  const familyRows = familyRow ? families.map((family) => familyRow(family)) : [];
  return Object.freeze([...familyRows, ...PROVIDER_NAMES.flatMap((name) => PROVIDERS[name].models ?? [])]);
}

/** The default catalogue: the contract's families, then each provider's rows under the vendors' names. */
export const DEFAULT_MODEL_CATALOGUE: readonly ModelEntry[] = defaultModelRows();

/** The providers' own rows, by identity: the catalogue tells them from the caller-facing entries (docs/models.md "Which row a request follows"). */
const VENDOR_ROWS: ReadonlySet<ModelEntry> = new Set(PROVIDER_NAMES.flatMap((name) => PROVIDERS[name].models ?? []));

/** Whether an entry is a provider's own row under the vendor's model name (not a family, not the host's). */
export function isVendorRow(entry: ModelEntry): boolean {
  return VENDOR_ROWS.has(entry);
}

const DEFAULT_CATALOGUE: ModelCatalogue = compileCatalogue(DEFAULT_MODEL_CATALOGUE, isVendorRow);

/** The entry that covers a vendor model name in the default catalogue, to give it a name of the host's. */
export function modelEntry(model: string): ModelEntry | undefined {
  return DEFAULT_CATALOGUE.find(model);
}

export function isProviderName(name: unknown): name is ProviderName {
  return typeof name === 'string' && Object.hasOwn(PROVIDERS, name);
}

/** What is wrong with an upstream in its provider's own fields (Provider.checkUpstream), or undefined. */
export function upstreamProblem(upstream: Upstream): string | undefined {
  return isProviderName(upstream.provider) ? PROVIDERS[upstream.provider].checkUpstream?.(upstream) : undefined;
}

/** The capability of this upstream's provider, or undefined when it has none. */
export function capabilityOf<C extends Capability>(upstream: Upstream, capability: C): Provider[C] | undefined {
  return isProviderName(upstream.provider) ? PROVIDERS[upstream.provider][capability] : undefined;
}

/** The capability of a provider named in a stored record (a task's), or undefined. */
export function capabilityOfProvider<C extends Capability>(name: string, capability: C): Provider[C] | undefined {
  return isProviderName(name) ? PROVIDERS[name][capability] : undefined;
}

/**
 * The capability a route needs from the upstream the resolver chose. A provider without it is the
 * operator's mistake: told to the operator (log), and to the caller only as a 500.
 */
export function requireCapability<C extends Capability>(upstream: Upstream, capability: C, route: RouteName, logger: Logger): NonNullable<Provider[C]> {
  const found = capabilityOf(upstream, capability);
  if (found) return found;
  const serving = providersWith(capability)
    .map((name) => `'${name}'`)
    .join(', ');
  logger.error({ route, provider: String(upstream.provider) }, `resolveUpstream returned provider '${String(upstream.provider)}' for route ${route}; only ${serving} serves it`);
  throw GatewayError.internal();
}

/** The task API of one kind of work of this upstream's provider (its `tasks` capability), or undefined. */
export function upstreamTasksOf<K extends UpstreamTaskKind>(upstream: Pick<Upstream, 'provider'>, kind: K): UpstreamTasks[K] | undefined {
  return isProviderName(upstream.provider) ? PROVIDERS[upstream.provider].tasks?.[kind] : undefined;
}

/** The task API of one kind of work that a route needs from the upstream the resolver chose; a provider without it is the operator's mistake, as requireCapability says. */
export function requireUpstreamTasks<K extends UpstreamTaskKind>(upstream: Upstream, kind: K, route: RouteName, logger: Logger): NonNullable<UpstreamTasks[K]> {
  const found = upstreamTasksOf(upstream, kind);
  if (found) return found;
  const serving = providersWithTasks(kind)
    .map((name) => `'${name}'`)
    .join(', ');
  logger.error({ route, provider: String(upstream.provider) }, `resolveUpstream returned provider '${String(upstream.provider)}' for route ${route}; only ${serving} serves it`);
  throw GatewayError.internal();
}

/** The providers whose task API runs one kind of work, in registry order. */
export function providersWithTasks(kind: UpstreamTaskKind): ProviderName[] {
  return PROVIDER_NAMES.filter((name) => PROVIDERS[name].tasks?.[kind] !== undefined);
}

/** The providers that have a capability, in registry order. */
export function providersWith(capability: Capability): ProviderName[] {
  return PROVIDER_NAMES.filter((name) => PROVIDERS[name][capability] !== undefined);
}

/** The version prefix of a provider's OpenAI-compatible API for bare-origin base URLs (`/v1` for others). */
export function openAICompatiblePrefix(name: string): string {
  return (isProviderName(name) ? PROVIDERS[name].passthrough?.prefix : undefined) ?? '/v1';
}

/**
 * The image-group rules of the native image route (`/api/v3/images/generations` is Ark's wire format,
 * whichever upstream answers it): the first provider that declares them.
 */
export function nativeImageGroups(): NonNullable<Provider['imageGroups']> | undefined {
  const name = providersWith('imageGroups')[0];
  return name ? PROVIDERS[name].imageGroups : undefined;
}

/** Whether a catalogue row of `rowProvider` describes a model the resolver routed to `routed` (the same provider, or one serving its rows). */
export function servesRowsOf(routed: unknown, rowProvider: ProviderName): boolean {
  return routed === rowProvider || (isProviderName(routed) && PROVIDERS[routed].catalogueRowsOf === rowProvider);
}

// the built-in content checker (docs/content-safety.md), reached from the public surface through here
export { openAIModeration, type OpenAIModerationOptions } from './openai/openai-moderation.js';
