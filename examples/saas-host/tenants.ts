// The SaaS host's own tenants and API keys (docs/getting-started.md "Your parsers first"): the table a real
// app keeps in its database. The host's routes and the gateway authenticate against the same table,
// so one customer key works everywhere and each plan sets that tenant's rate limit and models.
import type { Caller } from '../../lib/index.js';

export type Plan = 'free' | 'pro';

export interface Tenant extends Caller {
  id: string;
  name: string;
  plan: Plan;
}

/** Requests per minute on the gateway's routes, per tenant (all of its keys together). */
export const REQUESTS_PER_MINUTE: Readonly<Record<Plan, number>> = { free: 5, pro: 120 };

/** Which caller-facing models each plan may use. */
export const PLAN_MODELS: Readonly<Record<Plan, readonly string[]>> = {
  free: ['x-image-2.0', 'x-image-edit'],
  pro: ['x-image-2.0', 'x-image-edit', 'x-video'],
};

export interface TenantTable {
  /** The tenant of an API key, or undefined for an unknown or revoked key. */
  byKey(key: string): Tenant | undefined;
}

/** A table of keys to tenants; a key may be one of several of a tenant (rotation, environments). */
export function tenantTable(keys: Readonly<Record<string, Tenant>>): TenantTable {
  const table = new Map(Object.entries(keys));
  return { byKey: (key) => table.get(key) };
}

/** The demo tenants of `npm run start:saas`: two keys of one free tenant, one pro tenant. */
export const DEMO_KEYS: Readonly<Record<string, Tenant>> = {
  'sk-acme-live-1': { id: 'acme', name: 'Acme Corp', plan: 'free' },
  'sk-acme-live-2': { id: 'acme', name: 'Acme Corp', plan: 'free' },
  'sk-globex-live-1': { id: 'globex', name: 'Globex', plan: 'pro' },
};
