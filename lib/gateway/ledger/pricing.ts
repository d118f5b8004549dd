// Cost in money (docs/tenancy-and-billing.md "Cost in money"): the `tenancy.pricing` option resolved once, the
// cost of a finished usage event (images by count, size and quality; tokens the upstream reported;
// video seconds by resolution; a price per request), and the most a request may cost before it runs,
// which a money budget reserves. Money budgets count whole millionths of the currency (the counters
// of rate-limiter-flexible are integers).
import { GatewayConfigError } from '../../errors/config-error.js';
import type { Cost, ModelPrice, PriceBy, PricingOptions } from '../../options/pricing.js';
import type { Upstream, UsageEvent } from '../../types.js';

/** Millionths of the currency unit: the budget counters' unit. */
export const MICROS = 1_000_000;

/** What a request asks for, as far as its price depends on it (known before it runs). */
export interface PriceAsk {
  model: string;
  /**
   * The upstream models the resolver chose, in order (those that name one): the price of a caller's
   * name the table lacks is the most of theirs (docs/tenancy-and-billing.md "Which price a request follows").
   */
  upstreamModels?: readonly string[];
  /** Images the request may return (its charge). */
  images?: number;
  /** The size asked, `WxH` or `W*H`. */
  size?: string;
  quality?: string;
  /** Video seconds the task may last (its charge: `-1` reserves the model's longest). */
  videoSeconds?: number;
  resolution?: string;
}

/** The upstream models the resolver chose, those that name one: what a request's price may follow (`PriceAsk.upstreamModels`). */
export function upstreamModelsOf(upstreams: readonly Pick<Upstream, 'model'>[]): string[] {
  return upstreams.flatMap((upstream) => (upstream.model !== undefined ? [upstream.model] : []));
}

/** The part of a usage event a cost is computed from. */
export type PricedWork = Pick<UsageEvent, 'model' | 'upstreamModel' | 'status' | 'images' | 'imageSizes' | 'upstreamUsage' | 'tokens' | 'video' | 'imageQuality'>;

const EXAMPLE = "tenancy: { pricing: { currency: 'USD', models: { 'x-image-2.0*': { image: 0.035 } } } }";

export class Pricing {
  readonly currency: string;
  private readonly exact = new Map<string, ModelPrice>();
  private readonly prefixes: Array<[string, ModelPrice]> = [];

  private constructor(private readonly options: PricingOptions) {
    this.currency = options.currency;
    for (const [name, price] of Object.entries(options.models ?? {})) {
      if (name.endsWith('*')) this.prefixes.push([name.slice(0, -1), price]);
      else this.exact.set(name, price);
    }
    this.prefixes.sort((a, b) => b[0].length - a[0].length);
  }

  /** The `tenancy.pricing` option checked: a GatewayConfigError with the fix for a wrong one. */
  static resolve(options: PricingOptions | undefined): Pricing | undefined {
    if (options === undefined) return undefined;
    if (options === null || typeof options !== 'object') throw new GatewayConfigError('pricing_type', 'options.tenancy.pricing must be an object.', EXAMPLE);
    for (const key of Object.keys(options)) {
      if (key !== 'currency' && key !== 'models' && key !== 'price') throw new GatewayConfigError('pricing_unknown', `Unknown tenancy.pricing option '${key}'.`, 'use only: currency, models, price.');
    }
    if (typeof options.currency !== 'string' || !/^[A-Z]{3}$/.test(options.currency))
      throw new GatewayConfigError('pricing_value', 'tenancy.pricing.currency must be an ISO 4217 code such as USD.', EXAMPLE);
    if (options.price !== undefined && typeof options.price !== 'function') throw new GatewayConfigError('pricing_value', 'tenancy.pricing.price must be a function (event) => amount.', EXAMPLE);
    if (options.models !== undefined && (options.models === null || typeof options.models !== 'object'))
      throw new GatewayConfigError('pricing_value', 'tenancy.pricing.models must be an object of model prices.', EXAMPLE);
    for (const [name, price] of Object.entries(options.models ?? {})) checkPrice(name, price);
    return new Pricing(options);
  }

  /**
   * The price row a request follows, the catalogue's rule for rows (docs/models.md "Which row a request
   * follows"): the caller's name when the table has it (a host's own price for its own name), else the
   * upstream model the resolver chose. Each name: its exact entry, else the longest covering `*` prefix.
   */
  priceOf(model: string, upstreamModel?: string): ModelPrice | undefined {
    return this.rowOf(model) ?? (upstreamModel !== undefined && upstreamModel !== model ? this.rowOf(upstreamModel) : undefined);
  }

  private rowOf(name: string): ModelPrice | undefined {
    return this.exact.get(name) ?? this.prefixes.find(([prefix]) => name.startsWith(prefix))?.[1];
  }

  /**
   * What a finished event's work cost: the table's row, else the host's function; undefined when
   * unpriced. `fee: false`: without the per-request price (a task's terminal event, a read: the
   * request was priced once, at its submit).
   */
  costOf(work: PricedWork, how: { fee?: boolean } = {}): Cost | undefined {
    const row = this.priceOf(work.model, work.upstreamModel);
    if (row) return { amount: round(amountOf(row, work, how.fee !== false)), currency: this.currency };
    if (!this.options.price) return undefined;
    const amount = this.options.price(work as UsageEvent);
    return typeof amount === 'number' && Number.isFinite(amount) && amount >= 0 ? { amount: round(amount), currency: this.currency } : undefined;
  }

  /**
   * The most a request may cost, in millionths (a budget's reservation); undefined when the table has
   * no row for it. A name the table lacks: the dearest of the upstream models it may fall back to.
   */
  mostMicros(ask: PriceAsk): number | undefined {
    const candidates = ask.upstreamModels && ask.upstreamModels.length > 0 ? ask.upstreamModels : [undefined];
    const rows = candidates.map((upstream) => this.priceOf(ask.model, upstream)).filter((row) => row !== undefined);
    return rows.length > 0 ? Math.max(...rows.map((row) => mostMicrosOf(row, ask))) : undefined;
  }

  /** A cost in millionths, for settling a budget. */
  static micros(cost: Cost | undefined): number | undefined {
    return cost ? Math.ceil(cost.amount * MICROS) : undefined;
  }
}

/** The most a request may cost on one price row, in millionths. */
function mostMicrosOf(row: ModelPrice, ask: PriceAsk): number {
  const size = ask.size?.replace('*', 'x');
  const quality = ask.quality !== undefined && row.imageQuality?.[ask.quality] !== undefined ? row.imageQuality[ask.quality]! : Math.max(1, ...Object.values(row.imageQuality ?? {}));
  let amount = row.request ?? 0;
  if (ask.images) amount += ask.images * mostOf(row.image, size) * quality;
  if (ask.videoSeconds) amount += ask.videoSeconds * mostOf(row.videoSecond, ask.resolution);
  return Math.ceil(round(amount) * MICROS);
}

/** The event's amount by the row: nothing for a failed request (it made nothing the caller got). */
function amountOf(row: ModelPrice, work: PricedWork, fee: boolean): number {
  if (work.status >= 400) return 0;
  let amount = fee ? (row.request ?? 0) : 0;
  const quality = work.imageQuality !== undefined ? (row.imageQuality?.[work.imageQuality] ?? 1) : 1;
  for (let index = 0; index < work.images; index += 1) amount += priceFor(row.image, sizeOf(work, index)) * quality;
  const tokens = work.tokens ?? tokensOf(work.upstreamUsage);
  if (tokens && row.tokens) amount += ((tokens.input ?? 0) * (row.tokens.input ?? 0) + (tokens.output ?? 0) * (row.tokens.output ?? 0)) / 1_000_000;
  const seconds = work.video?.seconds;
  if (seconds) amount += seconds * priceFor(row.videoSecond, work.video?.resolution);
  return amount;
}

/** The size of the index-th image: as the upstream reported it (Ark, OpenAI `size`; DashScope `usage.width`/`height`). */
function sizeOf(work: PricedWork, index: number): string | undefined {
  const reported = work.imageSizes?.[index];
  if (reported) return reported.replace('*', 'x');
  const usage = work.upstreamUsage;
  return usage?.width && usage.height ? `${usage.width}x${usage.height}` : undefined;
}

/** gpt-image reports `input_tokens` and `output_tokens` in its answer's usage. */
function tokensOf(usage: Record<string, number> | undefined): { input?: number; output?: number } | undefined {
  if (!usage || (usage.input_tokens === undefined && usage.output_tokens === undefined)) return undefined;
  return { input: usage.input_tokens, output: usage.output_tokens };
}

function priceFor(price: number | PriceBy | undefined, key: string | undefined): number {
  if (price === undefined) return 0;
  if (typeof price === 'number') return price;
  return (key !== undefined ? price.by?.[key] : undefined) ?? price.default;
}

/** The price for a known key, else the highest the row may charge. */
function mostOf(price: number | PriceBy | undefined, key: string | undefined): number {
  if (price === undefined || typeof price === 'number') return price ?? 0;
  const known = key !== undefined ? price.by?.[key] : undefined;
  return known ?? Math.max(price.default, ...Object.values(price.by ?? {}));
}

function round(amount: number): number {
  return Math.round(amount * MICROS) / MICROS;
}

function checkPrice(name: string, price: ModelPrice): void {
  const where = `tenancy.pricing.models['${name}']`;
  const amount = (value: unknown): boolean => typeof value === 'number' && Number.isFinite(value) && value >= 0;
  const by = (value: unknown): boolean =>
    amount(value) || (typeof value === 'object' && value !== null && amount((value as PriceBy).default) && Object.values((value as PriceBy).by ?? {}).every(amount));
  if (price === null || typeof price !== 'object') throw new GatewayConfigError('pricing_value', `${where} must be an object.`, EXAMPLE);
  for (const [key, value] of Object.entries(price)) {
    const ok =
      key === 'request'
        ? amount(value)
        : key === 'image' || key === 'videoSecond'
          ? by(value)
          : key === 'imageQuality'
            ? typeof value === 'object' && value !== null && Object.values(value as object).every(amount)
            : key === 'tokens'
              ? typeof value === 'object' && value !== null && Object.entries(value as object).every(([part, item]) => (part === 'input' || part === 'output') && amount(item))
              : false;
    if (!ok) throw new GatewayConfigError('pricing_value', `${where}.${key} is not a price (amounts are numbers >= 0; use request, image, imageQuality, tokens, videoSecond).`, EXAMPLE);
  }
}
