// Pricing rows (docs/tenancy-and-billing.md "Cost in money"): the cost of a finished event (images by
// count, size and quality; tokens; video seconds by resolution; a price per request), the most a
// request may cost (a money budget's reservation), and the option's config errors.
import { describe, expect, it } from 'vitest';
import { type PricedWork, Pricing } from '../../lib/gateway/ledger/pricing.js';
import { GatewayConfigError } from '../../lib/errors/config-error.js';
import type { PricingOptions } from '../../lib/options/pricing.js';

const pricing = Pricing.resolve({
  currency: 'USD',
  models: {
    'x-image-2.0*': { image: { default: 0.1, by: { '1024x1024': 0.05, '2048x2048': 0.2 } } },
    'x-image-2.0-pro': { image: 0.3, request: 0.01 },
    'gpt-image-*': { image: 0.04, imageQuality: { low: 0.25, high: 2 }, tokens: { input: 5, output: 40 } },
    'x-video': { videoSecond: { default: 0.05, by: { '1080p': 0.1 } } },
    'x-chat': { tokens: { input: 1, output: 2 } },
  },
  price: (event) => (event.model === 'by-function' ? event.images * 0.5 : undefined),
})!;

const work = (extra: Partial<PricedWork> & { model: string }): PricedWork => ({ status: 200, images: 0, ...extra });

describe('costOf', () => {
  it.each<{ name: string; work: PricedWork; amount: number | undefined }>([
    { name: 'images by the size the upstream reported', work: work({ model: 'x-image-2.0', images: 2, imageSizes: ['1024x1024', '2048x2048'] }), amount: 0.25 },
    { name: 'DashScope: the size from usage.width/height', work: work({ model: 'x-image-2.0-turbo', images: 3, upstreamUsage: { width: 1024, height: 1024, image_count: 3 } }), amount: 0.15 },
    { name: 'no size known: the default', work: work({ model: 'x-image-2.0', images: 1 }), amount: 0.1 },
    { name: 'an exact row beats the prefix; the request price adds', work: work({ model: 'x-image-2.0-pro', images: 2 }), amount: 0.61 },
    {
      name: 'quality multiplies the image price; tokens per million',
      work: work({ model: 'gpt-image-1', images: 1, imageQuality: 'high', upstreamUsage: { input_tokens: 1000, output_tokens: 10_000 } }),
      amount: 0.08 + 0.005 + 0.4,
    },
    { name: 'an unknown quality multiplies by 1', work: work({ model: 'gpt-image-1', images: 1, imageQuality: 'medium' }), amount: 0.04 },
    { name: 'chat tokens', work: work({ model: 'x-chat', tokens: { input: 500_000, output: 250_000 } }), amount: 1 },
    { name: 'video seconds by resolution', work: work({ model: 'x-video', video: { seconds: 5, resolution: '1080p' } }), amount: 0.5 },
    { name: 'video at another resolution: the default', work: work({ model: 'x-video', video: { seconds: 4, resolution: '720p' } }), amount: 0.2 },
    { name: 'a failed request made nothing', work: work({ model: 'x-image-2.0-pro', status: 502 }), amount: 0 },
    { name: 'no row: the function', work: work({ model: 'by-function', images: 3 }), amount: 1.5 },
    { name: 'no row, the function says unpriced', work: work({ model: 'other' }), amount: undefined },
    { name: "a host's name the table lacks: the upstream model's row", work: work({ model: 'house-image', upstreamModel: 'gpt-image-1', images: 2 }), amount: 0.08 },
    { name: "the caller's name wins over the upstream model's row", work: work({ model: 'x-image-2.0-pro', upstreamModel: 'gpt-image-1', images: 1 }), amount: 0.31 },
    { name: "a prefix of the caller's name wins too", work: work({ model: 'x-image-2.0-house', upstreamModel: 'gpt-image-1', images: 1 }), amount: 0.1 },
    { name: 'neither name priced: the function', work: work({ model: 'by-function', upstreamModel: 'other', images: 2 }), amount: 1 },
  ])('$name', ({ work: priced, amount }) => {
    const cost = pricing.costOf(priced);
    if (amount === undefined) expect(cost).toBeUndefined();
    else expect(cost).toEqual({ amount: expect.closeTo(amount, 6), currency: 'USD' });
  });
});

describe('mostMicros', () => {
  it.each([
    { name: 'a known size', ask: { model: 'x-image-2.0', images: 3, size: '1024*1024' }, micros: 150_000 },
    { name: 'no size: the dearest', ask: { model: 'x-image-2.0', images: 3 }, micros: 600_000 },
    { name: 'no quality: the dearest multiplier', ask: { model: 'gpt-image-1', images: 1 }, micros: 80_000 },
    { name: 'a low quality', ask: { model: 'gpt-image-1', images: 2, quality: 'low' }, micros: 20_000 },
    { name: 'video seconds at a known resolution', ask: { model: 'x-video', videoSeconds: 12, resolution: '1080p' }, micros: 1_200_000 },
    { name: 'video at no resolution: the dearest', ask: { model: 'x-video', videoSeconds: 10 }, micros: 1_000_000 },
    { name: 'tokens cannot be foreseen', ask: { model: 'x-chat' }, micros: 0 },
    { name: 'no row', ask: { model: 'by-function', images: 1 }, micros: undefined },
    { name: "a host's name: the upstream model's row", ask: { model: 'house-image', upstreamModels: ['gpt-image-1'], images: 1, quality: 'low' }, micros: 10_000 },
    { name: 'several upstreams: the dearest of their rows', ask: { model: 'house-image', upstreamModels: ['gpt-image-1', 'x-image-2.0-pro'], images: 1, quality: 'low' }, micros: 310_000 },
    { name: 'an unpriced upstream among them is left out', ask: { model: 'house-image', upstreamModels: ['other', 'gpt-image-1'], images: 1, quality: 'low' }, micros: 10_000 },
    { name: "the caller's name wins over its upstreams", ask: { model: 'x-image-2.0-pro', upstreamModels: ['gpt-image-1'], images: 1 }, micros: 310_000 },
    { name: 'no upstream priced', ask: { model: 'house-image', upstreamModels: ['other'], images: 1 }, micros: undefined },
  ])('$name', ({ ask, micros }) => {
    expect(pricing.mostMicros(ask)).toBe(micros);
  });
});

describe('Pricing.resolve', () => {
  it.each<{ name: string; options: unknown; problem: string }>([
    { name: 'not an object', options: 'USD', problem: 'options.tenancy.pricing must be an object.' },
    { name: 'an unknown key', options: { currency: 'USD', tables: {} }, problem: "Unknown tenancy.pricing option 'tables'." },
    { name: 'no currency', options: { models: {} }, problem: 'pricing.currency must be an ISO 4217 code such as USD.' },
    { name: 'price not a function', options: { currency: 'USD', price: 3 }, problem: 'pricing.price must be a function (event) => amount.' },
    { name: 'a negative price', options: { currency: 'USD', models: { m: { image: -1 } } }, problem: "pricing.models['m'].image is not a price" },
    { name: 'a misspelt part', options: { currency: 'USD', models: { m: { images: 1 } } }, problem: "pricing.models['m'].images is not a price" },
    { name: 'a by without default', options: { currency: 'USD', models: { m: { videoSecond: { by: { '720p': 1 } } } } }, problem: "pricing.models['m'].videoSecond is not a price" },
  ])('$name: a GatewayConfigError', ({ options, problem }) => {
    expect(() => Pricing.resolve(options as PricingOptions)).toThrow(GatewayConfigError);
    expect(() => Pricing.resolve(options as PricingOptions)).toThrow(problem);
  });

  it('no option: no pricing', () => {
    expect(Pricing.resolve(undefined)).toBeUndefined();
  });
});
