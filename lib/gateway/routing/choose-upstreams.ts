// The chooser (docs/routing-and-health.md "Strategies"): the order in which the usable upstreams of a
// list are tried. Pure: the candidates carry what it reads (weight, latency estimate, price) and the
// random source is passed in, so a unit test seeds it.
import type { RoutingStrategy } from '../../options/routing-options.js';

export interface Candidate {
  /** Position in the resolver's list: the last tie-break of every strategy. */
  index: number;
  /** `Upstream.weight`; default 1. */
  weight: number;
  /** The moving estimate of its time to answer, ms; undefined before its first answer. */
  latencyMs: number | undefined;
  /** The catalogue's price of this request on it; undefined when unpriced. */
  price: number | undefined;
}

/**
 * The candidates in the order to try them. `'ordered'`: as listed. `'weighted'`: a weighted random
 * order (each is first with probability weight / total; Efraimidis–Spirakis keys). `'latency'`: the
 * fastest first, an upstream never measured first of all, and when `explore` (the caller's floor of
 * exploration says this choice explores) a random other one first, so a recovered upstream is
 * measured again. `'price'`: cheapest first, unpriced last, ties by latency.
 */
export function chooseOrder<C extends Candidate>(candidates: readonly C[], strategy: RoutingStrategy, random: () => number, explore: boolean): C[] {
  if (candidates.length < 2 || strategy === 'ordered') return [...candidates];
  if (strategy === 'weighted') {
    // a zero weight is never chosen first while another can be: it is tried only as a fallback
    const keyed = candidates.map((candidate) => ({ candidate, key: candidate.weight > 0 ? Math.log(1 - random()) / candidate.weight : -Infinity }));
    keyed.sort((a, b) => b.key - a.key || a.candidate.index - b.candidate.index);
    return keyed.map((entry) => entry.candidate);
  }
  if (strategy === 'latency') {
    const sorted = [...candidates].sort(byLatency);
    if (sorted[0]!.latencyMs !== undefined && explore) {
      // exploration: any other upstream first, the rest in latency order
      const pick = 1 + Math.floor(random() * (sorted.length - 1));
      const [explored] = sorted.splice(pick, 1);
      sorted.unshift(explored!);
    }
    return sorted;
  }
  return [...candidates].sort((a, b) => priceOrder(a.price, b.price) || byLatency(a, b));
}

function byLatency(a: Candidate, b: Candidate): number {
  // an upstream not yet measured goes first: it must be seen once to be ranked
  if (a.latencyMs === undefined || b.latencyMs === undefined) return a.latencyMs === b.latencyMs ? a.index - b.index : a.latencyMs === undefined ? -1 : 1;
  return a.latencyMs - b.latencyMs || a.index - b.index;
}

function priceOrder(a: number | undefined, b: number | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  return a - b;
}
