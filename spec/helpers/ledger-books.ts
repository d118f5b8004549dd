// The books of the ledger contract (docs/tenancy-and-billing.md "Billing contract", the usage-event fields
// `vendorWork`, `absorbedImages`, `undeliveredSizes`, `lostBy`, `keptImages`, `kept`): usage events read
// through those names, and the sums the ledger specs hold against what the counting fakes made; an absent
// field reads as 0.
import type { Caller, GatewayRouter, UsageEvent } from '../../lib/index.js';

/** A usage event with the ledger's fields (they are part of `UsageEvent`). */
export type LedgerEvent = UsageEvent;

/** The events as the ledger reads them. */
export const ledger = (events: readonly UsageEvent[]): readonly LedgerEvent[] => events;

const sum = (events: readonly UsageEvent[], of: (event: LedgerEvent) => number): number => ledger(events).reduce((total, event) => total + of(event), 0);

/** Σ vendorWork.images: what the vendors may bill the operator. */
export const vendorImages = (events: readonly UsageEvent[]): number => sum(events, (event) => event.vendorWork?.images ?? 0);
/** Σ vendorWork.seconds: video seconds the vendors may bill. */
export const vendorSeconds = (events: readonly UsageEvent[]): number => sum(events, (event) => event.vendorWork?.seconds ?? 0);
/** Σ (images + undeliveredImages): what the tenant is charged for, in images. */
export const chargedImages = (events: readonly UsageEvent[]): number => sum(events, (event) => event.images + (event.undeliveredImages ?? 0));
/** Σ undeliveredImages. */
export const undeliveredImages = (events: readonly UsageEvent[]): number => sum(events, (event) => event.undeliveredImages ?? 0);
/** Σ absorbedImages: vendor work lost by the vendor or the gateway, the operator's cost. */
export const absorbedImages = (events: readonly UsageEvent[]): number => sum(events, (event) => event.absorbedImages ?? 0);
/** Σ keptImages: vendor work kept for a retry, charged on the event that settles it. */
export const keptImages = (events: readonly UsageEvent[]): number => sum(events, (event) => event.keptImages ?? 0);
/** Σ kept.images: images settled from an earlier request's kept work. */
export const settledKeptImages = (events: readonly UsageEvent[]): number => sum(events, (event) => event.kept?.images ?? 0);
/** Σ cost.amount. */
export const costOf = (events: readonly UsageEvent[]): number => sum(events, (event) => event.cost?.amount ?? 0);

/**
 * The images the events say the vendors made, from the tenant side of the books: charged, absorbed and kept,
 * less what settled kept work (delivered or expired) already counted. The contract's invariant is that this
 * equals Σ vendorWork.images, and both equal what the fakes made.
 */
export const accountedImages = (events: readonly UsageEvent[]): number => chargedImages(events) + absorbedImages(events) + keptImages(events) - settledKeptImages(events);

/** One tenant's events. */
export const eventsOf = (events: readonly UsageEvent[], tenant: string): UsageEvent[] => events.filter((event) => event.caller.id === tenant);

/** Where a configured quota stands for a caller: used (limit less remaining), or 0 when not configured. */
export async function quotaUsedBy(router: GatewayRouter, caller: Caller | string, name: 'images' | 'video-seconds' | 'budget' | 'requests'): Promise<number> {
  const who = typeof caller === 'string' ? { id: caller } : caller;
  const state = (await router.quota(who)).find((item) => item.name === name);
  return state ? state.limit - state.remaining : 0;
}

/** One tenant's books, side by side: what the fakes made, what the events say, what the counters say. */
export interface TenantBooks {
  tenant: string;
  made: number;
  madeSeconds: number;
  vendorWork: number;
  vendorSeconds: number;
  charged: number;
  absorbed: number;
  kept: number;
  cost: number;
  expectedCost: number;
  quotaImages: number;
  quotaBudget: number;
}

/** The books as rows for console.table, money to the cent and a tenth of it. */
export function booksTable(rows: readonly TenantBooks[]): Array<Record<string, string | number>> {
  const money = (amount: number) => amount.toFixed(3);
  return rows.map((row) => ({
    tenant: row.tenant,
    'made (fakes)': row.made,
    'vendorWork.images': row.vendorWork,
    'charged (img+undeliv)': row.charged,
    absorbed: row.absorbed,
    'kept, unsettled': row.kept,
    'quota images': row.quotaImages,
    'video s made': row.madeSeconds,
    'vendorWork.seconds': row.vendorSeconds,
    'Σ cost': money(row.cost),
    'price table': money(row.expectedCost),
    'quota budget': money(row.quotaBudget),
  }));
}
