// The public types of the `tenancy.pricing` option (docs/tenancy-and-billing.md "Cost in money"): what a request
// costs in money, per model from a table or from the host's own function of the usage. Types only;
// the arithmetic is lib/gateway/ledger/pricing.ts.
import type { UsageEvent } from '../types.js';

/** A price that depends on one property of the work: `default`, or the named value's own price. */
export interface PriceBy {
  /** The price when no key below matches. No default. @example default: 0.04 */
  default: number;
  /** Per value, e.g. per image size `WxH` or per video resolution `720p`. @example by: { '1024x1024': 0.04, '2048x2048': 0.08 } */
  by?: Record<string, number>;
}

/**
 * What one model's work costs, in the pricing currency. Every key is optional; the parts add up.
 * @example { image: { default: 0.04, by: { '2048x2048': 0.08 } }, imageQuality: { high: 2 } }
 */
export interface ModelPrice {
  /** Per request answered, whatever it made. @example request: 0.001 */
  request?: number;
  /** Per image returned: one price, or by the image's size `WxH` (as the upstream reported it, else as asked). @example image: 0.04 */
  image?: number | PriceBy;
  /** Multiplies the image price by the `quality` the request asked for (gpt-image `low`…`max`); absent: 1. @example imageQuality: { low: 0.25, high: 2 } */
  imageQuality?: Record<string, number>;
  /** Per million tokens the upstream reported (chat, responses, gpt-image). @example tokens: { input: 5, output: 30 } */
  tokens?: { input?: number; output?: number };
  /** Per second of video a task made: one price, or by resolution (`480p`, `720p`, `1080p`). @example videoSecond: { default: 0.05, by: { '1080p': 0.1 } } */
  videoSecond?: number | PriceBy;
}

/** An amount of money. */
export interface Cost {
  amount: number;
  /** ISO 4217 code, as `tenancy.pricing.currency` says. @example currency: 'USD' */
  currency: string;
}

/**
 * The `tenancy.pricing` option: a currency and a table per model (`*` at the end of a name: a prefix, the
 * longest wins), or a function of the usage event that returns the amount (undefined: unpriced). A
 * request follows the row of the caller's name, else that of the upstream model the resolver chose
 * (docs/tenancy-and-billing.md "Which price a request follows"). The cost is added to every usage event of a priced model, and money budgets
 * (`tenancy.quotas` limit `budget`) reserve the most a request may cost and settle to what it did.
 * @example tenancy: { pricing: { currency: 'USD', models: { 'x-image-2.0*': { image: 0.035 }, 'x-video': { videoSecond: { default: 0.05, by: { '1080p': 0.1 } } } } } }
 */
export interface PricingOptions {
  /** ISO 4217 code of every amount. No default. @example currency: 'USD' */
  currency: string;
  /** A price table per model. Default none. @example models: { 'x-image-2.0*': { image: 0.035 } } */
  models?: Record<string, ModelPrice>;
  /**
   * The amount of a finished event, instead of (or for models missing from) the table; undefined
   * leaves the event unpriced. A budget reserves with the table only. Default none.
   * @example price: (event) => event.images * 0.04
   */
  price?: (event: UsageEvent) => number | undefined;
}
