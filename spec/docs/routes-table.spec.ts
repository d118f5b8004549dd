// docs/routes.md's tables against the code: the route table lists exactly the routes a created router
// serves (read from the router's own Express stack, not from a list kept by hand), its upstream
// column names every provider of the registry that can serve each route, and the table of what
// `stream: true` does names every provider, each in the row its streaming rules put it in.
// docs/contributing.md "Documentation"
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayRouter, type GatewayRouter, type RouteName, staticKeys } from '../../lib/index.js';
import type { Capability } from '../../lib/providers/provider.js';
import { PROVIDER_NAMES, capabilityOfProvider, providersWith, providersWithTasks } from '../../lib/providers/registry.js';
import { localResultStorage } from '../../lib/storage.js';
import { ROOT, tables } from '../helpers/markdown-docs.js';

interface RouterLayer {
  route?: { path: unknown; methods: Record<string, boolean | undefined> };
}

/** `POST /v1/images/tasks/{id}/cancel` for each route of the router's stack, its parameters written as the docs write them. */
function servedRoutes(router: GatewayRouter): string[] {
  const stack = (router as unknown as { stack: RouterLayer[] }).stack;
  return stack.flatMap((layer) => {
    if (!layer.route || typeof layer.route.path !== 'string') return [];
    const routePath = layer.route.path.replace(/:(\w+)/g, '{$1}');
    return Object.keys(layer.route.methods)
      .filter((method) => layer.route!.methods[method])
      .map((method) => `${method.toUpperCase()} ${routePath}`);
  });
}

/** The capabilities a route is served with (lib/gateway/image-pipeline/image-pipeline.ts, forward-request.ts, task-service.ts, asset-service.ts). */
const SERVED_WITH: Readonly<Record<RouteName, readonly Capability[] | undefined>> = {
  'images.generations': ['images', 'passthrough'],
  'images.edits': ['images', 'passthrough'],
  'chat.completions': ['passthrough'],
  responses: ['passthrough'],
  'video.tasks': ['tasks'],
  assets: ['assets'],
  // Ark's own wire format, whichever upstream takes it: the page names Ark's
  'images.native': undefined,
};

function names(provider: string, text: string): boolean {
  return new RegExp(`\\b${provider}\\b`, 'i').test(text);
}

function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}

const page = readFileSync(path.join(ROOT, 'docs/routes.md'), 'utf8');
const pageTables = tables(page);
const routeTable = pageTables.find((table) => table[0]?.[0] === 'method and path');
const streamTable = pageTables.find((table) => table[0]?.[0] === 'upstream' && (table[0]?.[1] ?? '').includes('stream: true'));

/** The table's rows that name a route: `POST /v1/images/edits` -> its route name cell and upstream cell. */
function documentedRoutes(): Array<{ route: string; name: string; upstream: string }> {
  return (routeTable ?? []).slice(1).flatMap(([first = '', name = '', upstream = '']) => {
    const route = codeSpans(first).find((span) => /^(GET|POST|PUT|PATCH|DELETE|HEAD) \//.test(span));
    return route ? [{ route, name, upstream }] : [];
  });
}

// the docs do not depend on the Express major: checked once, in the Express 5 run
describe.skipIf(process.env.GATEWAY_EXPRESS === '4')('docs/routes.md against the router and the provider registry', () => {
  let router: GatewayRouter;

  beforeAll(() => {
    // with localResultStorage the router also serves the stored results' route; no request is made,
    // so nothing is written and the folder is never created
    const storage = localResultStorage({ directory: path.join(tmpdir(), `routes-table-unwritten-${randomUUID()}`), secret: 'a'.repeat(64) });
    router = createGatewayRouter({ verifyKey: staticKeys({}), resolveUpstream: () => null, logger: false, storage });
  });
  afterAll(() => router.close());

  it('lists exactly the routes the router serves', () => {
    expect(routeTable, 'a table headed "method and path"').toBeDefined();
    const served = servedRoutes(router);
    expect(served.length).toBeGreaterThan(10);
    expect(
      documentedRoutes()
        .map((row) => row.route)
        .sort(),
    ).toEqual([...served].sort());
  });

  it("names in each route's upstream column every provider that serves it", () => {
    const missing: string[] = [];
    const seen = new Set<string>();
    for (const row of documentedRoutes()) {
      const name = codeSpans(row.name)[0] as RouteName | undefined;
      // a route's first row says where it goes; its aliases refer to it
      if (!name || !Object.hasOwn(SERVED_WITH, name) || seen.has(name)) continue;
      seen.add(name);
      // the video route is served by the providers whose task API runs video work (image tasks ride the image routes)
      const serving = new Set((SERVED_WITH[name] ?? []).flatMap((capability) => (capability === 'tasks' ? providersWithTasks('video') : providersWith(capability))));
      for (const provider of serving) if (!names(provider, row.upstream)) missing.push(`${row.route}: ${provider}`);
    }
    expect(seen.size).toBeGreaterThan(5);
    expect(missing).toEqual([]);
  });

  it('says what `stream: true` does on every provider, as its streaming rules decide', () => {
    expect(streamTable, 'a table headed "upstream | with `stream: true`"').toBeDefined();
    const rows = streamTable!.slice(1);
    const rowOf = (provider: string): string[] | undefined => rows.find(([first = '']) => codeSpans(first).includes(provider));
    expect(PROVIDER_NAMES.filter((provider) => !rowOf(provider))).toEqual([]);
    for (const provider of PROVIDER_NAMES) {
      const rules = capabilityOfProvider(provider, 'imageStreams');
      const said = rowOf(provider)!.join(' ');
      // relayed as they come, or the whole answer waited for and written as events by the gateway
      if (rules?.kind === 'relay') expect(said, provider).toMatch(/relayed/);
      if (!rules) expect(said, provider).toMatch(/the gateway waits/);
    }
  });
});
